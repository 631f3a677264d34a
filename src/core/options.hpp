#pragma once

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
  std::uint32_t prefetch_auto = 1000;    // default credit for ack:auto subscriptions
  std::uint32_t prefetch_client = 100;   // default credit for client and client-individual
  std::vector<DestinationPolicy> policies;
  std::uint32_t sweep_interval_ms = 1000;  // expiry and idle sweeps
  std::uint64_t memory_limit_bytes = 0;    // stop reading producers past this many bytes of messages; 0: no limit
  // The furthest ahead a producer may schedule a message (`delay`, `deliver-at`); further is refused.
  std::uint64_t max_schedule_delay_ms = 31'536'000'000;  // 365 days
  std::size_t max_selector_bytes = 4096;   // a longer SUBSCRIBE selector is refused (at most 65536)
  // Messages a plain (non-durable, unshared) topic subscription may have waiting, in bytes, when
  // its topic's policy sets no max_messages/max_bytes: past it the oldest waiting one is dropped
  // for that subscriber (as ActiveMQ's pending-message limit and NATS's slow-consumer limit do), so
  // one subscriber that stops reading cannot hold the broker at its memory limit. 0 (the
  // default): unbounded, so nothing is dropped and a full broker holds its producers back instead.
  std::uint64_t subscriber_backlog_bytes = 0;
  std::uint64_t backlog_bound() const { return subscriber_backlog_bytes; }
};

}  // namespace carrier::core
