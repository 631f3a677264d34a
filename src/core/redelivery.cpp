#include "core/redelivery.hpp"

#include <algorithm>
#include <cmath>

#include "core/router.hpp"
#include "core/topic_routing.hpp"

namespace carrier::core {

using model::Destination;
using model::DestinationKind;
using model::Message;

std::int64_t Redelivery::redelivery_delay(const DestinationPolicy& p, std::uint32_t deliveries) {
  if (p.redelivery_delay_ms == 0) return 0;
  const double exponent = deliveries > 0 ? static_cast<double>(deliveries - 1) : 0.0;
  double delay = static_cast<double>(p.redelivery_delay_ms) * std::pow(p.redelivery_multiplier, exponent);
  delay = std::min(delay, static_cast<double>(p.redelivery_max_delay_ms));
  if (p.redelivery_jitter > 0) {
    std::uniform_real_distribution<double> spread(-p.redelivery_jitter, p.redelivery_jitter);
    delay *= 1.0 + spread(shard_.random);
  }
  return std::max<std::int64_t>(0, static_cast<std::int64_t>(delay));
}

void Redelivery::handle_returned(const std::string& key, Queue& queue, bool stored, std::vector<Queue::Entry> entries) {
  if (entries.empty()) return;
  store::Batch batch;
  std::vector<Routed> moved;
  const auto now = shard_.now_ms();
  for (auto& e : entries) {
    const auto& policy = shard_.policy_for(e.message->destination);
    if (policy.max_deliveries != 0 && e.delivery_count >= policy.max_deliveries) {
      dead_letter(key, stored, std::move(e), "max-deliveries", batch, moved);
      continue;
    }
    const auto delay = redelivery_delay(policy, e.delivery_count);
    if (delay == 0) {
      queue.requeue(std::move(e));
      continue;
    }
    // Counted so that the queue is not collected as empty while the message waits outside it.
    std::uint64_t incarnation = 0;
    if (auto* oq = queues_.find(key)) {
      ++oq->delayed;
      incarnation = oq->incarnation;
    }
    // Its location stays known while it waits: a cold tail's scan skips it, its ack names it.
    const auto ref = stored && e.message->stored() ? queues_.stored_ref(key, *e.message) : store::StoredRef{};
    if (ref.known()) queues_.note_delayed(key, e.message->id, true);
    shard_.at(now + delay, [this, key, e, stored, incarnation, ref]() mutable {
      // The queue may be gone (a private subscription closed, a temporary queue deleted).
      Queue* q = nullptr;
      if (auto* oq = queues_.find(key)) {
        q = oq->queue.get();
        // Only the queue that counted it: one deleted and re-created since has its own count.
        if (oq->incarnation == incarnation) {
          --oq->delayed;
          if (ref.known()) queues_.note_delayed(key, e.message->id, false);
        }
      } else {
        q = topics_.private_queue(key);
      }
      if (q == nullptr) {
        shard_.account_release(*e.message);
        if (stored && e.message->stored()) {
          shard_.store.append({store::Record::acked(key, e.message->id, ref)}, [](Status) {});
        }
        return;
      }
      q->requeue(std::move(e));
      queues_.dispatch(key, *q, stored);
    });
  }
  queues_.dispatch(key, queue, stored);
  finish_dead_letters(std::move(batch), std::move(moved));
}

void Redelivery::handle_rejected(const std::string& key, Queue& queue, bool stored, std::vector<Queue::Entry> entries) {
  if (entries.empty()) return;
  store::Batch batch;
  std::vector<Routed> moved;
  for (auto& e : entries) dead_letter(key, stored, std::move(e), "rejected", batch, moved);
  queues_.dispatch(key, queue, stored);
  finish_dead_letters(std::move(batch), std::move(moved));
}

void Redelivery::dead_letter(const std::string& key, bool stored, Queue::Entry entry, std::string_view reason,
                             store::Batch& batch, std::vector<Routed>& moved) {
  const Message& m = *entry.message;
  const auto& policy = shard_.policy_for(m.destination);
  shard_.account_release(m);
  ++shard_.counters.dead_lettered;
  // The ack names the copy it removes (and the location leaves the map with the message).
  const auto ref = stored && m.stored() ? queues_.take_stored_ref(key, m) : store::StoredRef{};
  if (policy.dead_letter_queue.empty()) {
    if (stored && m.stored()) batch.push_back(store::Record::acked(key, m.id, ref));
    return;
  }
  std::string dlq = policy.dead_letter_queue;
  if (auto pos = dlq.find("{name}"); pos != std::string::npos) dlq.replace(pos, 6, m.destination.name);
  auto copy = std::make_shared<Message>(m);
  copy->destination = Destination{DestinationKind::queue, dlq};
  copy->expires_ms = 0;  // it is here because it expired, or to be looked at: it must stay
  copy->deliver_at_ms = 0;
  copy->properties.emplace_back("original-destination", m.destination.uri());
  copy->properties.emplace_back("dlq-reason", std::string(reason));
  copy->properties.emplace_back("dlq-delivery-count", std::to_string(entry.delivery_count));
  auto dlq_key = copy->destination.key();
  // One batch: gone from the source and present in the DLQ together, never both, never neither.
  // A DLQ that is the queue itself stores the key again: the ack, first, names the old copy.
  if (m.stored()) {
    if (stored) batch.push_back(store::Record::acked(key, m.id, ref));
    batch.push_back(store::Record::added(dlq_key, copy));
  }
  moved.push_back(Routed{std::move(dlq_key), std::move(copy)});
}

void Redelivery::write_and_route(store::Batch batch, std::vector<Routed> moved) {
  auto route = [this](std::vector<Routed> moved) { router_.route(std::move(moved), {}, nullptr); };
  if (batch.empty()) {
    if (!moved.empty()) route(std::move(moved));
    return;
  }
  if (moved.empty()) {
    shard_.store.append(std::move(batch), [](Status) {});
    return;
  }
  // Located: a dead-letter queue's backlog is paged like any queue's.
  queues_.append_locating(std::move(batch), [this, route, moved = std::move(moved)](Status st) mutable {
    // If the move could not be stored the messages still go to the DLQ in memory: dropping them
    // would lose what the store still holds in the source queue for the next start.
    shard_.executor.post(shard_.self, [route, moved = std::move(moved)]() mutable { route(std::move(moved)); });
  });
}

}  // namespace carrier::core
