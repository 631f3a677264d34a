#include "store/log/acks_in_flight.hpp"

namespace carrier::store::log {

namespace {

std::string in_flight_key(std::string_view queue, model::MessageId id) {
  std::string k;
  k.reserve(queue.size() + 17);
  k.append(queue);
  k.push_back('\0');
  k.append(reinterpret_cast<const char*>(&id.hi), sizeof id.hi);
  k.append(reinterpret_cast<const char*>(&id.lo), sizeof id.lo);
  return k;
}

}  // namespace

bool AcksInFlight::has_ack(const Batch& batch) {
  for (const Record& r : batch) {
    if (r.kind == RecordKind::ack) return true;
  }
  return false;
}

void AcksInFlight::add(const Batch& batch) {
  if (!has_ack(batch)) return;
  std::lock_guard lock(mutex_);
  for (const Record& r : batch) {
    if (r.kind == RecordKind::ack) ++acks_[in_flight_key(r.queue, r.message_id)];
  }
}

void AcksInFlight::remove(const Batch& batch) {
  if (!has_ack(batch)) return;
  std::lock_guard lock(mutex_);
  for (const Record& r : batch) {
    if (r.kind != RecordKind::ack) continue;
    auto it = acks_.find(in_flight_key(r.queue, r.message_id));
    if (it != acks_.end() && --it->second == 0) acks_.erase(it);
  }
}

void AcksInFlight::hides(std::string_view queue, const std::vector<model::MessageId>& ids,
                         std::vector<bool>& hidden) const {
  hidden.assign(ids.size(), false);
  std::lock_guard lock(mutex_);
  if (acks_.empty()) return;
  for (std::size_t i = 0; i < ids.size(); ++i) hidden[i] = acks_.count(in_flight_key(queue, ids[i])) != 0;
}

std::size_t AcksInFlight::size() const {
  std::lock_guard lock(mutex_);
  return acks_.size();
}

}  // namespace carrier::store::log
