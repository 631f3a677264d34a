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

}  // namespace carrier::core
