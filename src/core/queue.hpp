#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/consumer.hpp"
#include "core/message.hpp"

namespace carrier::core {

// Point-to-point delivery: messages ordered by priority (9 first) then arrival, handed
// round-robin to the consumers that have credit (prefetch minus unacked). A consumer's unacked
// deliveries go back, flagged redelivered, when it nacks them or is removed.
//
// Pure state: the queue decides, its owner (Broker) performs what it returns — posting batches to
// consumers' shards and persisting acks. Also used as the private queue of a topic subscription.
// Runs on: the owning shard.
class Queue {
 public:
  struct Entry {
    MessagePtr message;
    std::uint64_t seq = 0;  // arrival order within the queue
    std::uint32_t delivery_count = 0;
    bool redelivered = false;
  };

  struct Dispatch {
    ConsumerRef consumer;
    std::vector<Delivery> batch;
  };

  struct Outcome {
    std::vector<MessagePtr> removed;  // acked or expired: gone for good (persist an ack record)
    std::size_t unknown_tags = 0;     // tags the consumer does not hold
  };

  explicit Queue(std::string key) : key_(std::move(key)) {}

  const std::string& key() const { return key_; }

  void enqueue(MessagePtr message);
  // A message from recovery: it keeps the delivery count it had before the restart.
  void restore(MessagePtr message, std::uint32_t delivery_count);

  void add_consumer(ConsumerRef consumer);
  // Its unacked deliveries go back to the queue, flagged redelivered. False if unknown.
  bool remove_consumer(ConsumerId id);
  bool has_consumer(ConsumerId id) const;

  Outcome ack(ConsumerId id, std::span<const std::uint64_t> tags);
  // The deliveries go back to the queue, flagged redelivered, to be offered again.
  Outcome nack(ConsumerId id, std::span<const std::uint64_t> tags);

  // Hands ready messages to consumers with credit. Expired messages found on the way are
  // dropped and reported in `expired`.
  std::vector<Dispatch> dispatch(std::int64_t now_ms, std::vector<MessagePtr>& expired);

  std::size_t depth() const { return ready_count_; }
  std::size_t unacked() const;
  std::size_t consumer_count() const { return consumers_.size(); }
  std::uint64_t enqueued_total() const { return next_seq_ - 1; }

 private:
  struct ConsumerState {
    ConsumerRef ref;
    std::uint64_t next_tag = 1;
    std::map<std::uint64_t, Entry> unacked;  // by tag
    bool has_credit() const { return unacked.size() < ref.prefetch; }
  };

  void push_ready(Entry entry);     // at its place by seq: returned messages keep their order
  bool pop_ready(Entry& out);
  ConsumerState* find(ConsumerId id);

  std::string key_;
  std::array<std::deque<Entry>, 10> ready_;  // index = priority
  std::size_t ready_count_ = 0;
  std::uint64_t next_seq_ = 1;
  std::vector<ConsumerState> consumers_;
  std::size_t round_robin_ = 0;
};

}  // namespace carrier::core
