#pragma once

#include <vector>

#include "store/store.hpp"

namespace carrier::core {

class Broker;

// Recovery routing: one record read back from the store goes to the part that keeps it, on the
// shard that owns it — durable subscription definitions to every shard's NamedSubscriptions,
// scheduled topic messages to TopicRouting, retained messages to RetainedMessages, the rest to
// the owning shard's OwnedQueues. Before the shard threads start, so it touches every shard.
void route_recovered(const std::vector<Broker*>& brokers, store::RecoveredMessage recovered);
// A lane's run of recovered messages (store::RecoveredTail) to its queue's owner, as a cold tail.
void route_recovered_tail(const std::vector<Broker*>& brokers, const store::RecoveredTail& tail);
// After the last record: what waited for a later one (a subscription's tails) is settled.
void finish_recovery(const std::vector<Broker*>& brokers);

}  // namespace carrier::core
