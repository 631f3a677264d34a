#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/message.hpp"

namespace carrier::store {

enum class RecordKind : std::uint8_t {
  message = 1,    // a persistent message entered a queue (or durable subscription)
  ack = 2,        // a message left that queue for good (acked, expired, moved to a DLQ)
  delivered = 3,  // a message was handed to a consumer; delivery_count says how often
};

// One change to durable state. `queue` is the key of the queue the change is about
// (model::QueueKey::str(), e.g. "queue:orders"), so a message sent to several queues is
// stored, acked and counted per queue. The store treats it as an opaque string.
struct Record {
  RecordKind kind = RecordKind::message;
  std::string queue;
  model::MessageId message_id;
  model::MessagePtr message;         // set when kind == message
  std::uint32_t delivery_count = 0; // set when kind == delivered

  static Record added(std::string queue, model::MessagePtr m) {
    Record r;
    r.kind = RecordKind::message;
    r.queue = std::move(queue);
    r.message_id = m->id;
    r.message = std::move(m);
    return r;
  }
  static Record acked(std::string queue, model::MessageId id) {
    Record r;
    r.kind = RecordKind::ack;
    r.queue = std::move(queue);
    r.message_id = id;
    return r;
  }
  static Record delivered(std::string queue, model::MessageId id, std::uint32_t count) {
    Record r;
    r.kind = RecordKind::delivered;
    r.queue = std::move(queue);
    r.message_id = id;
    r.delivery_count = count;
    return r;
  }
};

// Records that land together or not at all: a transaction's sends and acks, a composite send.
using Batch = std::vector<Record>;

// What recovery hands back for each message still live (added and never acked), in append order.
struct RecoveredMessage {
  std::string queue;
  model::MessagePtr message;
  std::uint32_t delivery_count = 0;  // > 0: it had been delivered before the restart
};

}  // namespace carrier::store
