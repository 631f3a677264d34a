#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "relay/options.hpp"

namespace carrier::relay {
class RelayService;
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

  // The seed-000 relay on this listener ([relay]; docs/relay.md), and the service make_protocol
  // starts from it (shared by every session; not configured).
  relay::Options relay;
  std::shared_ptr<relay::RelayService> relay_service;
};

}  // namespace carrier::http
