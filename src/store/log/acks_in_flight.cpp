#include "store/log/acks_in_flight.hpp"

namespace carrier::store::log {

bool AcksInFlight::has_ack(const Batch& batch) {
  for (const Record& r : batch) {
    if (r.kind == RecordKind::ack) return true;
  }
  return false;
}

void AcksInFlight::add(const Batch& batch) {
  if (!has_ack(batch)) return;
  std::lock_guard lock(mutex_);
  // Records of one batch mostly name one queue: its set is looked up again only when it changes.
  Ids* ids = nullptr;
  std::string_view current;
  for (const Record& r : batch) {
    if (r.kind != RecordKind::ack) continue;
    if (ids == nullptr || r.queue != current) {
      auto it = acks_.find(std::string_view(r.queue));
      if (it == acks_.end()) it = acks_.emplace(r.queue, Ids{}).first;
      ids = &it->second;
      current = it->first;
    }
    if (++(*ids)[r.message_id] == 1) ++pairs_;
  }
}

void AcksInFlight::remove(const Batch& batch) {
  if (!has_ack(batch)) return;
  std::lock_guard lock(mutex_);
  for (const Record& r : batch) {
    if (r.kind != RecordKind::ack) continue;
    auto q = acks_.find(std::string_view(r.queue));
    if (q == acks_.end()) continue;
    auto it = q->second.find(r.message_id);
    if (it == q->second.end()) continue;
    if (--it->second == 0) {
      q->second.erase(it);
      --pairs_;
      if (q->second.empty()) acks_.erase(q);
    }
  }
}

void AcksInFlight::hides(std::string_view queue, const std::vector<model::MessageId>& ids,
                         std::vector<bool>& hidden) const {
  hidden.assign(ids.size(), false);
  std::lock_guard lock(mutex_);
  auto q = acks_.find(queue);
  if (q == acks_.end()) return;
  for (std::size_t i = 0; i < ids.size(); ++i) hidden[i] = q->second.contains(ids[i]);
}

std::size_t AcksInFlight::size() const {
  std::lock_guard lock(mutex_);
  return pairs_;
}

}  // namespace carrier::store::log
