#pragma once

#include <compare>
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

// Where a message record landed in a backend, so its message can be read back later
// (Store::read) without being held in memory. 16 bytes, meaningful only to the backend that
// handed it out; docs/storage.md, "Locations", says what each backend puts in it:
//   log:      file = segment id, offset = byte offset of the batch frame in that segment,
//             record = index of the record in the batch;
//   sqlite, postgres: file = the row's `seq` (messages.seq, the append order), offset/record 0;
//   memory:   file = a sequence number the store keeps the message under.
// A location names one stored copy: storing the same queue and id again gives a new one.
// Made of plain integers so a checkpointed index can record it.
struct Location {
  std::uint64_t file = 0;    // 0: nowhere (not stored, or the backend keeps no locations)
  std::uint32_t offset = 0;
  std::uint32_t record = 0;

  bool valid() const { return file != 0; }
  // Store order: file, then offset, then record (append order in every backend).
  auto operator<=>(const Location&) const = default;
};

// What an ack or delivered record says about the stored copy it is about, when the caller knows
// it (append_located(), recover() or scan() told it): where it is, its priority and what it
// weighs. With it a backend finds the copy without a per-message table of its own (the journal
// keeps none for messages it recovered from its live-set checkpoint: docs/storage.md,
// "Liveness"). location invalid: unknown; the backend finds the copy by queue and id.
struct StoredRef {
  Location location;
  std::uint8_t priority = 4;
  std::uint32_t footprint = 0;  // model::Message::footprint()

  bool known() const { return location.valid(); }
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
  StoredRef stored;                  // kind == ack or delivered: the copy it is about, if known

  static Record added(std::string queue, model::MessagePtr m) {
    Record r;
    r.kind = RecordKind::message;
    r.queue = std::move(queue);
    r.message_id = m->id;
    r.message = std::move(m);
    return r;
  }
  static Record acked(std::string queue, model::MessageId id, StoredRef at = {}) {
    Record r;
    r.kind = RecordKind::ack;
    r.queue = std::move(queue);
    r.message_id = id;
    r.stored = at;
    return r;
  }
  static Record delivered(std::string queue, model::MessageId id, std::uint32_t count, StoredRef at = {}) {
    Record r;
    r.kind = RecordKind::delivered;
    r.queue = std::move(queue);
    r.message_id = id;
    r.delivery_count = count;
    r.stored = at;
    return r;
  }
};

// Records that land together or not at all: a transaction's sends and acks, a composite send.
using Batch = std::vector<Record>;

// What the core keeps of a message whose body and headers stay in the store (a paged entry):
// enough to order, expire, schedule and account for it. The rest is read back by location.
struct MessageSummary {
  model::MessageId id;
  std::uint8_t priority = 4;
  bool persistent = true;
  std::int64_t timestamp_ms = 0;
  std::int64_t expires_ms = 0;     // 0 = never
  std::int64_t deliver_at_ms = 0;  // 0 = now
  std::uint32_t footprint = 0;     // model::Message::footprint() once read back
  bool spilled = false;  // model::Message::spilled: live only in the process that stored it
};

// What recovery hands back for each message still live (added and never acked), in append order.
// With RecoverOptions::summary_only, a backend that can (the journal, from its checkpointed
// index) hands back only `summary` and leaves `message` null; otherwise `message` is set and
// `summary` may be left empty.
struct RecoveredMessage {
  std::string queue;
  model::MessagePtr message;         // null: only the summary was recovered
  std::uint32_t delivery_count = 0;  // > 0: it had been delivered before the restart
  Location location;                 // where it is stored: Store::read gets it back
  // Last, so that the backends' RecoveredMessage{queue, message, count, location} stay valid.
  MessageSummary summary;            // meaningful when message is null
};

}  // namespace carrier::store
