#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/strong_id.hpp"
#include "core/executor.hpp"
#include "model/message.hpp"
#include "selector/fwd.hpp"

namespace carrier::core {

struct ConsumerIdTag {};
// Unique in the process: the home shard in the top bits, a per-shard counter below.
using ConsumerId = StrongId<std::uint64_t, ConsumerIdTag>;

enum class AckMode : std::uint8_t {
  auto_ack,           // acked by the protocol session as soon as it is written
  client,             // cumulative: acking one acks every earlier delivery of the subscription
  client_individual,  // each delivery acked on its own
};

// One message handed to one consumer. `tag` is the consumer's own sequence number for it: acks
// and nacks name deliveries by tag.
struct Delivery {
  model::MessagePtr message;
  std::uint64_t tag = 0;
  std::uint32_t delivery_count = 1;  // 1 on first delivery
  bool redelivered = false;
};

// Whatever takes deliveries: a STOMP subscription, an MQTT session, a bridge. core never knows
// which protocol sits behind it.
// Runs on: its home shard. deliver() is only ever called there.
class Consumer {
 public:
  virtual ~Consumer() = default;
  // The consumer now holds these deliveries until it acks or nacks them, or is removed (then the
  // queue takes them back itself). A consumer that has already closed drops them silently.
  virtual void deliver(ConsumerId id, std::vector<Delivery> batch) = 0;
  // A wildcard queue subscription `parent` now consumes one more queue as `child`: deliveries
  // from that queue come as `child`, and acks name `child`. Called before its first delivery.
  virtual void attached(ConsumerId /*parent*/, ConsumerId /*child*/) {}
  // The child's queue is gone (freed idle); nothing of it is held.
  virtual void detached(ConsumerId /*parent*/, ConsumerId /*child*/) {}
};

// A consumer as a queue sees it: where it lives and what it can take.
struct ConsumerRef {
  ConsumerId id;
  model::ShardId home;
  std::shared_ptr<Consumer> consumer;
  AckMode ack_mode = AckMode::auto_ack;
  std::uint32_t prefetch = 1000;
  std::shared_ptr<const selector::Selector> selector;  // null: takes every message
};

}  // namespace carrier::core
