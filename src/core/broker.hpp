#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/result.hpp"
#include "core/consumer.hpp"
#include "core/destination_tree.hpp"
#include "core/executor.hpp"
#include "core/message.hpp"
#include "core/options.hpp"
#include "core/queue.hpp"
#include "store/store.hpp"

namespace carrier::core {

// Runs on the shard that asked, once the operation has taken effect (for persistent messages:
// once the store has made them durable).
using Completion = std::function<void(Status)>;

struct SubscribeRequest {
  Destination destination;      // a queue, or a topic filter (wildcards allowed)
  AckMode ack_mode = AckMode::auto_ack;
  std::uint32_t prefetch = 0;   // 0: the default for the ack mode
  std::shared_ptr<Consumer> consumer;
};

// Deliveries named for an ack or nack inside a transaction. The message is carried so that the
// commit can write the ack records in the same store batch as the transaction's sends.
struct DeliveryRef {
  ConsumerId consumer;
  std::uint64_t tag = 0;
  MessagePtr message;
};

struct Transaction {
  std::vector<MessagePtr> sends;
  std::vector<DeliveryRef> acks;
  std::vector<DeliveryRef> nacks;
};

struct BrokerStats {
  std::size_t queues = 0;
  std::size_t messages_ready = 0;
  std::size_t messages_unacked = 0;
  std::size_t topic_subscriptions = 0;
};

// The core on one shard. It owns the queues whose keys hash to this shard and the private queues
// of the topic subscriptions whose consumers live here; it keeps a replica of every topic
// subscription filter so a publish is matched where it arrives. Protocol sessions call the
// public operations on their own shard's Broker; the Broker crosses to other shards only by
// posting to their Broker through the Executor. No locks: everything here is touched by one
// thread.
// Runs on: its shard.
class Broker {
 public:
  using Clock = std::function<std::int64_t()>;  // epoch milliseconds

  Broker(ShardId self, Executor& executor, store::Store& store, Options options, Clock clock = {});
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // Every shard's Broker, index = shard id. Set once before any traffic.
  void set_peers(std::vector<Broker*> peers);

  ShardId shard() const { return self_; }
  std::int64_t now_ms() const { return clock_(); }
  MessageId next_message_id() { return ids_.next(); }
  const Options& options() const { return options_; }

  // --- for protocol sessions on this shard ---

  // Routes each message to its queue or to the topic's subscribers. Persistent messages for
  // queues are stored first; `done` runs once they are durable (or failed).
  void send(std::vector<MessagePtr> messages, Completion done);
  Result<ConsumerId> subscribe(SubscribeRequest request, Completion done);
  void unsubscribe(ConsumerId id, Completion done);
  void ack(ConsumerId id, std::vector<std::uint64_t> tags, Completion done);
  void nack(ConsumerId id, std::vector<std::uint64_t> tags, Completion done);
  // The sends, acks and nacks take effect together, after one atomic store batch.
  void commit(Transaction tx, Completion done);

  // Checks a destination a producer or consumer names: exists (or may be created), and no
  // wildcard where one is not allowed.
  Status check_destination(const Destination& d, bool for_subscribe) const;

  // --- recovery, before serving: a message the store kept, for a queue this shard owns ---
  void restore(const std::string& queue_key, MessagePtr message, std::uint32_t delivery_count);

  BrokerStats stats() const;

 private:
  struct SubscriptionInfo {
    Destination destination;
    bool topic = false;
    ShardId owner;          // queue subscriptions: the queue's shard
    std::string queue_key;  // queue subscriptions: the queue's key
  };

  struct TopicSubscription {
    std::string filter;
    std::unique_ptr<Queue> queue;
  };

  // owner side: run on the shard that owns the queue
  Queue* find_or_create_queue(const std::string& key);
  void owner_enqueue(std::vector<MessagePtr> messages);
  void owner_add_consumer(std::string key, ConsumerRef ref, Completion done);
  void owner_remove_consumer(std::string key, ConsumerId id, Completion done);
  void owner_settle(std::string key, ConsumerId id, std::vector<std::uint64_t> tags, bool ack, bool persist_acks,
                    Completion done);
  void dispatch(Queue& queue, bool durable);

  // topic side
  void index_add(std::string filter, TopicSubscriber subscriber);
  void index_remove(std::string filter, ConsumerId id);
  void publish(const std::vector<MessagePtr>& messages);
  void topic_enqueue(std::vector<std::pair<ConsumerId, MessagePtr>> deliveries);

  void route(std::vector<MessagePtr> messages);
  void persist_async(store::Batch batch);
  // Runs `done(status)` on `shard`: directly when called on that shard's thread, else posted.
  void complete_on(ShardId shard, Completion done, Status status);
  void broadcast(std::function<void(Broker&)> fn, Completion done);

  ShardId self_;
  Executor& executor_;
  store::Store& store_;
  Options options_;
  Clock clock_;
  MessageIdGenerator ids_;
  std::vector<Broker*> peers_;
  std::unordered_set<std::string> configured_queues_;

  std::unordered_map<std::string, std::unique_ptr<Queue>> queues_;  // owned here, by key
  std::unordered_map<ConsumerId, SubscriptionInfo> subscriptions_;  // consumers homed here
  std::unordered_map<ConsumerId, TopicSubscription> topic_subscriptions_;
  DestinationTree topic_index_;
  std::uint64_t next_consumer_ = 1;
};

}  // namespace carrier::core
