#pragma once

#include <cstddef>
#include <cstdint>

namespace carrier::relay {

// The seed-000 relay's limits ([relay] in the configuration; docs/relay.md, docs/configuration.md).
struct Options {
  // The longest lease a connect is granted (a longer or unset request gets this).
  std::uint32_t max_lease_ms = 3600000;
  // Peers connected at once, over all shards' share (each shard holds max_peers / shards, at
  // least 1); a connect past it answers 503.
  std::size_t max_peers = 10000;
  // Messages waiting in one peer's mailbox (responses and pipe messages, handed out or not); a
  // request that would add to a full mailbox answers 429 until the peer polls. Also each
  // listened pipe's prefetch.
  std::size_t max_pending = 1000;
  // A POST body (all its requests); past it: 413.
  std::size_t max_request_bytes = 1u << 20;
  // A poll's first query field asks to wait this long at most for a message.
  std::uint32_t max_poll_wait_ms = 30000;
  // Messages one poll response carries at most (Carrier-Relay-Max asks for up to this many).
  std::uint32_t max_poll_messages = 100;
  // A message handed out and not acknowledged by a poll within this is handed out again.
  std::uint32_t redeliver_ms = 30000;
  // Results one search answers at most (its threshold may ask for fewer).
  std::uint32_t max_search_results = 100;
  // Pipes and groups the relay's directory holds.
  std::size_t max_directory_entries = 10000;
};

}  // namespace carrier::relay
