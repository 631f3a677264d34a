#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace carrier::core {

// What a full destination does with one more message: refuse it (the producer gets an error),
// drop its oldest waiting message, or (queues only) take it and pause the producers sending to
// it until it drains (core::DestinationPressure).
enum class OverflowPolicy : std::uint8_t { reject, drop_oldest, block };

// How one family of destinations behaves. Matched by pattern, first match wins; destinations no
// pattern matches use a default-constructed policy.
struct DestinationPolicy {
  std::string match = ">";  // "queue:PATTERN" / "topic:PATTERN" (or bare PATTERN: both kinds); `*` `>` wildcards

  // Redelivery (seed 002's Retransmission pattern): a NACKed or returned message waits
  // delay = min(max, initial * multiplier^(deliveries-1)) * (1 ± jitter) before it is offered again.
  std::uint32_t redelivery_delay_ms = 0;
  double redelivery_multiplier = 2.0;
  std::uint32_t redelivery_max_delay_ms = 60000;
  double redelivery_jitter = 0.2;
  std::uint32_t max_deliveries = 0;  // 0: unlimited; else after that many deliveries -> dead-letter queue
  std::string dead_letter_queue = "DLQ.{name}";
  bool expired_to_dlq = false;

  std::uint64_t ttl_ms = 0;  // default time-to-live for messages without `expires`; 0: none

  std::uint64_t max_messages = 0;  // 0: unlimited
  std::uint64_t max_bytes = 0;
  OverflowPolicy overflow = OverflowPolicy::reject;

  std::uint64_t idle_expiry_ms = 0;  // delete an unconsumed queue and its messages after this long; 0: never
};

struct Options {
  bool auto_create = true;               // create destinations on first use
  std::vector<std::string> queues;       // queues that exist from the start (needed without auto_create)
  // Queues and named subscriptions of all shards together past which no client may create one
  // more ([limits] max_destinations; DestinationBudget, which serve makes from it).
  std::size_t max_destinations = 100'000;
  std::uint32_t prefetch_auto = 1000;    // default credit for ack:auto subscriptions
  std::uint32_t prefetch_client = 100;   // default credit for client and client-individual
  std::vector<DestinationPolicy> policies;
  std::uint32_t sweep_interval_ms = 1000;  // expiry and idle sweeps
  std::uint64_t memory_limit_bytes = 0;    // stop reading producers past this many bytes of messages; 0: no limit
  // Past this many bytes of messages held, persistent ones already stored are paged out (read
  // back ahead of the consumers); 0: never. The config makes its default a quarter of the
  // machine's memory (config::default_memory_budget_bytes); serve sets 0 for the memory store.
  std::uint64_t memory_budget_bytes = 0;
  // Past the budget, non-persistent messages for queues and durable subscriptions are written
  // to the store too (spilled) so they can leave memory; false keeps them in memory, held back
  // by memory_limit_bytes (docs/storage.md, "Non-persistent messages past the budget").
  bool page_non_persistent = true;
  // The furthest ahead a producer may schedule a message (`delay`, `deliver-at`); further is refused.
  std::uint64_t max_schedule_delay_ms = 31'536'000'000;  // 365 days
  std::size_t max_selector_bytes = 4096;   // a longer SUBSCRIBE selector is refused (at most 65536)
  // Messages a plain (non-durable, unshared) topic subscription may have waiting, in bytes, when
  // its topic's policy sets no max_messages/max_bytes; 0: unbounded. Past it, `block` (the
  // default) pauses the producers of the topics whose messages keep arriving for it until it is
  // back under 90%, so one subscriber that stops reading holds back its own topics' producers,
  // not the whole broker; `drop_oldest` drops its oldest waiting message instead (as ActiveMQ's
  // pending-message limit and NATS's slow-consumer limit do), counted in backlog_dropped.
  // 8 MiB: thousands of typical messages of slack beyond the prefetch window, little memory per
  // stuck subscriber when no memory limit is set.
  std::uint64_t subscriber_backlog_bytes = 8 << 20;
  OverflowPolicy subscriber_backlog_overflow = OverflowPolicy::block;
  // The bound in force: never more than a quarter of memory_limit_bytes, so one subscriber alone
  // cannot take the broker to its global limit (which pauses every producer).
  std::uint64_t backlog_bound() const {
    if (memory_limit_bytes == 0 || subscriber_backlog_bytes == 0) return subscriber_backlog_bytes;
    return std::max<std::uint64_t>(1, std::min(subscriber_backlog_bytes, memory_limit_bytes / 4));
  }
};

}  // namespace carrier::core
