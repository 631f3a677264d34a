#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "core/consumer.hpp"
#include "core/executor.hpp"
#include "model/message.hpp"

namespace carrier::core {

// A consumer homed on this shard (its session lives here): where its messages come from, so
// that its acks, nacks and unsubscribe reach the right queue.
struct SubscriptionInfo {
  model::Destination destination;
  bool topic_private = false;  // a private topic subscription: its queue is here (TopicRouting)
  model::ShardId owner;               // queue and named subscriptions: the queue's shard
  std::string queue_key;       // queue and named subscriptions: the queue's key
  std::string subscription_name;
  std::vector<ConsumerId> children;  // a queue watcher (wildcard queue subscription): its children
  bool watcher = false;
};

// The consumers homed on one shard, by id. The Broker front adds and removes plain ones; the
// named-subscription and queue-watcher parts add theirs.
using HomeSubscriptions = std::unordered_map<ConsumerId, SubscriptionInfo>;

}  // namespace carrier::core
