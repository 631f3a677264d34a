#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "relay/options.hpp"

namespace carrier::relay {
class RelayService;
}

#include "net/options.hpp"
namespace carrier::admin {
class Service;
}

namespace carrier::http {

// The HTTP listener's limits ([http] in the configuration; docs/http.md, docs/configuration.md).
struct Options {
  // Request line and headers together; past it: 431 and the connection closes.
  std::size_t max_header_bytes = 8u << 10;
  // A request body (Content-Length or chunked, after de-chunking); past it: 413 and close.
  // The same default as STOMP's max_frame_bytes.
  std::size_t max_body_bytes = 16u << 20;
  // From a request's first byte until its headers are complete (slowloris): 408 and close.
  std::uint32_t header_timeout_ms = 10000;
  // A keep-alive connection with no request under way, or a body that stops coming, is closed
  // after this long.
  std::uint32_t idle_timeout_ms = 60000;
  // GET .../messages: `max` is 1..max_poll_messages (default 10), `wait` 0..max_poll_wait_ms
  // (default 0: answer with what the queue holds now).
  std::uint32_t max_poll_messages = 1000;
  std::uint32_t max_poll_wait_ms = 60000;
  // Messages in one JSON batch POST.
  std::size_t max_batch_messages = 1000;
  // How long a send waits for the store to confirm before answering 504 (the outcome is then
  // unknown: the message may still be stored).
  std::uint32_t send_timeout_ms = 30000;
  // Message headers one request may carry (Carrier-Header-* fields, or one batch entry's).
  std::size_t max_message_headers = 1000;
  // Levels of a destination name (each is a node in every shard's index).
  std::size_t max_destination_levels = 128;
  // ack=lease (docs/http.md, "Leases"): leases held or being polled for, on each shard (a lease
  // lives on the shard of the connection that polled), in all and per user; past them: 429.
  std::size_t max_leases = 100000;
  std::size_t max_leases_per_user = 10000;
  // `visibility`: at least this, at most that; without it, 30 s (within these bounds).
  std::uint64_t min_lease_visibility_ms = 1000;
  std::uint64_t max_lease_visibility_ms = 43'200'000;  // 12 h
  // PUT /v1/subscriptions/{name}: a subscription nobody polls for this long is deleted with its
  // messages (0: never); at most max_subscriptions of them (429 past it).
  std::uint64_t subscription_idle_timeout_ms = 86'400'000;  // 24 h
  std::size_t max_subscriptions = 10000;
  // GET .../events (Server-Sent Events): a comment line is written after this long without an
  // event, so proxies and clients see the stream is alive.
  std::uint32_t events_keepalive_ms = 15000;
  // GET /v1/subscriptions/{name}/events: written events kept unacked for a Last-Event-ID resume
  // (the newest this many; older ones count as received). The stream's prefetch is twice this.
  std::uint32_t events_resume_window = 1000;
  // An event stream's unwritten output; past it, queue messages wait in the core and
  // non-persistent topic messages fall under `slow_consumer` (as in [stomp]).
  std::size_t max_pending_output_bytes = 4u << 20;
  net::SlowConsumerPolicy slow_consumer = net::SlowConsumerPolicy::drop;
  // [limits] max_messages_per_second / message_burst (0: off): messages POSTed on one
  // connection. An HTTP client feels no TCP back-pressure, so a send past it is refused: 429
  // with Retry-After (counted as the `message_rate` refusal).
  std::uint32_t max_messages_per_second = 0;
  std::uint32_t message_burst = 0;  // 0: as many as max_messages_per_second

  // /healthz, /readyz, /metrics and /admin/v1 (docs/admin.md): set by `carrier serve`, not by
  // the configuration; null answers them 404.
  admin::Service* admin = nullptr;

  // The seed-000 relay on this listener ([relay]; docs/relay.md), and the service make_protocol
  // starts from it (shared by every session; not configured).
  relay::Options relay;
  std::shared_ptr<relay::RelayService> relay_service;
};

}  // namespace carrier::http
