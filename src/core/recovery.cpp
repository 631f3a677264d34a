#include "core/recovery.hpp"

#include <string_view>

#include "core/broker.hpp"
#include "model/queue_key.hpp"
#include "selector/selector.hpp"

namespace carrier::core {

using model::owner_shard;

void route_recovered(const std::vector<Broker*>& brokers, store::RecoveredMessage r) {
  const std::size_t n = brokers.size();
  const auto& m = r.message;
  if (NamedSubscriptions::is_definitions_key(r.queue)) {
    if (!m) return;  // never asked as a summary (serve's summary_only names queues only)
    auto entry = NamedSubscriptions::parse_definition(*m);
    if (!entry) return;
    const auto owner = owner_shard(NamedSubscriptions::queue_key(entry->def.name), n).value();
    for (auto* b : brokers) {
      NamedEntry copy = *entry;
      if (!copy.def.selector.empty()) {
        auto parsed = selector::parse(copy.def.selector);
        if (parsed) copy.selector = *parsed;
      }
      b->named().remove_replica(copy.def.name);  // a later definition of the same name replaces it
      b->named().add(std::move(copy), owner);
    }
    return;
  }
  Broker* b = brokers[owner_shard(r.queue, n).value()];
  const auto key = model::QueueKey::parse(r.queue);
  if (key && key->kind() == model::QueueKind::scheduled_topic) {
    b->topics().schedule(m);
    return;
  }
  if (key && key->kind() == model::QueueKind::retained) {
    b->retained().restore(key->name(), m);
    return;
  }
  if (!m) {
    // Only the summary came back (RecoverOptions::summary_only): it enters paged.
    b->owned_queues().restore_summary(r.queue, r.summary, r.location, r.delivery_count);
    return;
  }
  b->owned_queues().restore(r.queue, m, r.delivery_count, r.location);
}

void route_recovered_tail(const std::vector<Broker*>& brokers, const store::RecoveredTail& tail) {
  // Only queues summary_only names come as tails: never the definitions' or protocols' keys.
  if (NamedSubscriptions::is_definitions_key(tail.queue)) return;
  brokers[owner_shard(tail.queue, brokers.size()).value()]->owned_queues().restore_tail(tail);
}

void finish_recovery(const std::vector<Broker*>& brokers) {
  for (auto* b : brokers) b->owned_queues().finish_recovery();
}

}  // namespace carrier::core
