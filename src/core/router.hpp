#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "core/destination_tree.hpp"
#include "core/owned_queues.hpp"
#include "core/shard_context.hpp"

namespace carrier::core {

class RetainedMessages;
class TopicRouting;

// Where sent messages go, decided on the shard they arrive at: queue messages to their queue's
// owner, topic messages to every matching subscription (named ones' queues on their owners,
// private ones on their consumers' shards). Plans first (so persistent records are appended
// before any delivery), then routes: one post per shard, whatever the number of messages.
// Runs on: its shard.
class Router {
 public:
  // A message for a private (plain) topic subscription: one per subscriber and message, so
  // kept small (a fan-out to 10,000 lists 640,000 of them for a batch of 64).
  struct PrivateDelivery {
    ConsumerId id;
    model::ShardId home;
    model::MessagePtr message;
  };
  using ToPrivate = std::vector<PrivateDelivery>;

  Router(ShardContext& shard, OwnedQueues& queues, TopicRouting& topics)
      : shard_(shard), queues_(queues), topics_(topics) {}
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Applies default time-to-live; takes out topic messages due later into `later` (persistent
  // ones also into `batch`, under their scheduled-topic key) and returns the rest. `ready_at`,
  // when given, gets where each returned message sat in `messages`.
  std::vector<model::MessagePtr> admit(std::vector<model::MessagePtr> messages, std::vector<model::MessagePtr>& later, store::Batch& batch,
                                std::vector<std::size_t>* ready_at = nullptr);
  // Matches each message: queue deliveries into `to_queues`, private topic subscriptions' into
  // `to_private`, retained topic messages into `retained`, store records into `batch`.
  // `unmatched`, when given, gets one flag per message: a topic message no subscription took.
  void plan(const std::vector<model::MessagePtr>& messages, std::vector<Routed>& to_queues, ToPrivate& to_private,
            std::vector<model::MessagePtr>& retained, store::Batch& batch, std::vector<bool>* unmatched = nullptr);
  // Whether a destination among these may refuse (full with overflow = reject, a temporary
  // queue gone): then the producer waits for the owners' verdict.
  bool needs_verdict(const std::vector<Routed>& to_queues) const;
  // Hands planned messages to their owners and subscribers; `verdict` (optional) once every
  // owner has taken or refused its share.
  void route(std::vector<Routed> to_queues, ToPrivate to_private, Completion verdict);

 private:
  ShardContext& shard_;
  OwnedQueues& queues_;
  TopicRouting& topics_;
};

}  // namespace carrier::core
