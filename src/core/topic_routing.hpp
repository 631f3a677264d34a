#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/broker_types.hpp"
#include "core/destination_tree.hpp"
#include "core/home_subscriptions.hpp"
#include "core/queue.hpp"
#include "core/shard_context.hpp"
#include "selector/selector.hpp"

namespace carrier::core {

class OwnedQueues;
class Redelivery;
class RetainedMessages;
class Router;

// Topic routing: the replica of every topic subscription's filter (so a publish is matched on
// the shard it arrives at), the private queues of the plain topic subscriptions whose consumers
// live here with their backlog bound, and topic messages scheduled for later (matched when due).
// Named subscriptions' queues are owned queues (OwnedQueues); their filters are in this index.
// Runs on: its shard; the index changes by broadcast from the subscriber's home.
class TopicRouting {
 public:
  TopicRouting(ShardContext& shard, HomeSubscriptions& subscriptions, OwnedQueues& queues, Redelivery& redelivery,
               Router& router, RetainedMessages& retained)
      : shard_(shard),
        subscriptions_(subscriptions),
        queues_(queues),
        redelivery_(redelivery),
        router_(router),
        retained_(retained) {}
  TopicRouting(const TopicRouting&) = delete;
  TopicRouting& operator=(const TopicRouting&) = delete;

  // ---- the replicated index
  void index_add(std::string_view filter, TopicSubscriber subscriber) { index_.add(filter, std::move(subscriber)); }
  void index_remove(std::string_view filter, ConsumerId id) { (void)index_.remove(filter, id); }
  void index_remove_named(std::string_view filter, std::string_view queue_key) {
    (void)index_.remove_named(filter, queue_key);
  }
  void match(std::string_view topic, std::vector<TopicSubscriber>& out) const { index_.match(topic, out); }
  // Whether a matched subscriber takes `m` (no-local, selector).
  bool selected(const TopicSubscriber& s, const model::Message& m) const {
    if (s.no_local_origin != 0 && s.no_local_origin == m.origin) return false;
    if (s.selector && !selector::matches(*s.selector, m)) return false;
    return true;
  }

  // ---- private subscriptions (consumers homed here)
  // A plain topic subscription: its queue here, its filter broadcast to every shard's index.
  ConsumerId subscribe(SubscribeRequest request, ConsumerRef ref, Completion done);
  void unsubscribe(ConsumerId id, Completion done);
  void settle(ConsumerId id, std::vector<std::uint64_t> tags, bool is_ack, bool requeue);
  // The private queue named `key`, or null (a delayed redelivery whose subscription is gone).
  Queue* private_queue(const std::string& key);
  // Messages matched elsewhere for subscriptions homed here.
  void enqueue(std::vector<std::pair<ConsumerId, model::MessagePtr>> deliveries);
  void sweep(std::int64_t now, store::Batch& batch);

  // ---- scheduled topic messages
  // The reserved queue holding a persistent topic message scheduled for later, one per topic.
  static std::string scheduled_topic_key(const model::Message& m);
  static bool is_scheduled_topic_key(std::string_view key);
  void schedule(model::MessagePtr m);

  std::size_t size() const { return private_.size(); }
  // Each plain subscription homed here: its filter and its queue (the admin API's topic list).
  template <class Visit>
  void for_each_private(Visit&& visit) const {
    for (const auto& [id, sub] : private_) visit(sub.filter, *sub.queue);
  }
  std::uint64_t backlog_dropped() const { return backlog_dropped_; }

 private:
  struct TopicSubscription {
    std::string filter;
    std::unique_ptr<Queue> queue;
    // Topic names whose keys this subscription marked in DestinationPressure while over its
    // backlog bound: all cleared together below 90% of it, or when it goes.
    std::unordered_set<std::string> pressing = {};
    std::uint64_t marked_in = 0;  // the enqueue() call that last listed its queue to dispatch
  };

  // Matches a scheduled topic message now that it is due, and routes it.
  void publish_due(const model::MessagePtr& m);

  // ---- the backlog of plain subscriptions (bounded: a plain subscriber cannot refuse a publish)
  // Makes room for `m` in a plain subscription's queue as the topic's policy says; false if it
  // does not fit.
  bool fits_private(Queue& q, const DestinationPolicy& policy, const model::Message& m);
  // The default bound of a plain subscription whose topic has no limits of its own
  // (Options::backlog_bound): with drop-oldest, trim_backlog makes room for `m`; with block, past
  // the bound press_backlog marks the topic of each message that arrives for it, and
  // relieve_backlog clears every mark once it is under 90% (or `all`: it is going).
  void trim_backlog(Queue& q, const model::Message& m);
  void press_backlog(TopicSubscription& sub, const std::string& topic);
  void relieve_backlog(TopicSubscription& sub, bool all = false);

  ShardContext& shard_;
  HomeSubscriptions& subscriptions_;
  OwnedQueues& queues_;
  Redelivery& redelivery_;
  Router& router_;
  RetainedMessages& retained_;
  DestinationTree index_;  // replica: every topic subscription
  std::unordered_map<ConsumerId, TopicSubscription> private_;
  std::uint64_t backlog_dropped_ = 0;
  std::uint64_t enqueue_calls_ = 0;
};

}  // namespace carrier::core
