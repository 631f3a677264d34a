#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/broker_types.hpp"
#include "core/destination_tree.hpp"
#include "core/home_subscriptions.hpp"
#include "core/owned_queues.hpp"
#include "core/shard_context.hpp"

namespace carrier::core {

class Redelivery;

// Queue watchers: wildcard queue subscriptions (`SUBSCRIBE /queue/orders.*`, ActiveMQ). Every
// shard keeps every watcher's filter; each attaches it to the matching queues it owns, now and
// as they are created, as one child consumer per queue with an id of its own. The owner tells
// the parent's home shard of each child before the child's first delivery (posts between two
// shards arrive in order), so acks name the child and reach the right queue.
// Runs on: its shard; the replica changes by posts from the parent's home.
class QueueWatchers {
 public:
  QueueWatchers(ShardContext& shard, HomeSubscriptions& subscriptions, OwnedQueues& queues, Redelivery& redelivery)
      : shard_(shard), subscriptions_(subscriptions), queues_(queues), redelivery_(redelivery) {}
  QueueWatchers(const QueueWatchers&) = delete;
  QueueWatchers& operator=(const QueueWatchers&) = delete;

  // On the parent's home.
  ConsumerId subscribe(SubscribeRequest request, ConsumerRef ref, Completion done);
  void unsubscribe(ConsumerId id, const SubscriptionInfo& info, Completion done);

  // On every shard: the replica.
  void add(std::string filter, ConsumerRef ref);
  void remove(ConsumerId parent);
  // A queue owned here was created: the matching watchers attach to it.
  void attach_new(const std::string& key, OwnedQueue& oq) {
    if (index_.size() == 0) return;  // every new queue asks: no watcher, no cost
    attach_matching(key, oq);
  }
  // The queue `key` is being freed: its children are told.
  void drop_queue(const std::string& key, OwnedQueue& oq);

  // On the parent's home: a child was attached or dropped by `owner`.
  void attached(ConsumerId parent, ConsumerId child, std::string key, model::ShardId owner,
                std::shared_ptr<Consumer> consumer);
  void detached(ConsumerId parent, ConsumerId child, std::shared_ptr<Consumer> consumer);

  // A queue without consumers, or empty with only watchers' children attached: it may be freed
  // when idle (the children are attached again if it is recreated).
  static bool only_watched(const OwnedQueue& oq);

 private:
  // A wildcard queue subscription as each shard keeps it.
  struct Watcher {
    std::string filter;
    ConsumerRef ref;                // id: the parent's
    std::vector<std::string> keys;  // queues owned here it is attached to
  };

  void attach_matching(const std::string& key, OwnedQueue& oq);
  // Attaches the watcher to a queue owned here (new, or existing when one subscribes).
  void attach(const std::string& key, OwnedQueue& oq, const Watcher& w);

  ShardContext& shard_;
  HomeSubscriptions& subscriptions_;
  OwnedQueues& queues_;
  Redelivery& redelivery_;
  DestinationTree index_;                          // replica: every queue watcher's filter
  std::unordered_map<ConsumerId, Watcher> watchers_;  // replica: by parent id
};

}  // namespace carrier::core
