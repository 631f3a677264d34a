#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/message_id.hpp"

namespace carrier::model {

// User properties in arrival order; names are unique (the first of a repeated header wins).
using Properties = std::vector<std::pair<std::string, std::string>>;

// An immutable, reference-counted body: fan-out to many consumers and crossing shards copy no
// payload.
using Body = std::shared_ptr<const std::string>;

enum class DestinationKind : std::uint8_t { queue = 0, topic = 1, temp_queue = 2 };

// A destination as the core sees it: a kind and a hierarchical name with '.' separators
// ("orders.eu"). Protocols map their spellings (/queue/x, a/b/c) onto this.
struct Destination {
  DestinationKind kind = DestinationKind::queue;
  std::string name;

  auto operator<=>(const Destination&) const = default;
  // "queue:orders.eu": QueueKey::of(*this).str(), the key used by the store and for shard
  // ownership (model/queue_key.hpp), built without an intermediate QueueKey.
  std::string key() const;
  // "/queue/orders.eu", "/topic/a.b", "/temp-queue/x": the JMS-style spelling used in headers.
  std::string uri() const;
  static std::optional<Destination> from_key(std::string_view key);
};

// A message as the broker keeps it. Immutable once built: share it as MessagePtr. What changes
// per delivery (redelivered, delivery count) lives in the queue entry, not here.
struct Message {
  MessageId id;
  Destination destination;
  std::uint8_t priority = 4;          // 0..9, higher first
  std::int64_t timestamp_ms = 0;      // when the broker accepted it (or the producer's value)
  std::int64_t expires_ms = 0;        // absolute epoch ms; 0 = never
  bool persistent = false;
  std::string correlation_id;
  std::string reply_to;
  std::string type;
  std::string content_type;
  Properties properties;              // user headers, passed through unchanged
  Body body;
  std::int64_t deliver_at_ms = 0;     // scheduled delivery: not before this epoch ms; 0 = now
  std::uint64_t origin = 0;           // the connection that published it (for no-local); not stored
  bool retain = false;                // MQTT retained: also kept as the topic's last message
  bool from_retained = false;         // this copy is sent because it was retained (not stored)
  // Non-persistent, but written to the store to leave memory past the memory budget
  // (docs/storage.md, "Non-persistent messages past the budget"): acked like a persistent one
  // while the broker runs, never brought back by a restart.
  bool spilled = false;

  // Has a copy in the store wherever its queue stores messages: what acks, paging and cold tails
  // go by.
  bool stored() const { return persistent || spilled; }

  std::size_t body_size() const { return body ? body->size() : 0; }
  // Approximate bytes this message holds in memory; used for limits and accounting. Computed
  // once: every queue a message passes through asks, several times per delivery.
  std::size_t footprint() const;

  // A copy starts uncomputed (the copy is usually changed next). Atomic because shards share
  // one message and may ask at once; they compute the same value.
  struct FootprintCache {
    mutable std::atomic<std::size_t> bytes{0};
    FootprintCache() = default;
    FootprintCache(const FootprintCache&) {}
    FootprintCache& operator=(const FootprintCache&) {
      bytes.store(0, std::memory_order_relaxed);
      return *this;
    }
  };
  FootprintCache footprint_cache;

  // How many places in the core hold this message (queues, schedules, the retained store):
  // the memory gauge counts it while this is not zero (Broker::account_hold). A copy is a new
  // message, held by nobody yet.
  struct Holders {
    mutable std::atomic<std::uint32_t> count{0};
    Holders() = default;
    Holders(const Holders&) {}
    Holders& operator=(const Holders&) { return *this; }
  };
  Holders holders;
};

using MessagePtr = std::shared_ptr<const Message>;

}  // namespace carrier::model
