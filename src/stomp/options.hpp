#pragma once

#include <cstddef>
#include <cstdint>

#include "net/options.hpp"

namespace carrier::stomp {

struct Options {
  std::size_t max_frame_bytes = 16u << 20;  // a larger frame gets an ERROR and the connection closes
  std::size_t max_headers = 1000;
  std::uint32_t heartbeat_ms = 10000;       // offered when the client asks for none; 0 = no heart-beats
  std::uint32_t heartbeat_min_ms = 100;     // the client's heart-beat wishes are raised to at least this
  // A connection that has not sent a whole CONNECT within this long gets an ERROR and is closed.
  std::uint32_t connect_timeout_ms = 5000;
  // The largest frame read before the client is let in (its CONNECT): a login has no business
  // being megabytes, and an unauthenticated peer must not make the broker buffer them.
  std::size_t max_connect_bytes = 64u << 10;
  // A transaction is held in memory until COMMIT: past either bound the frame gets an ERROR and
  // the transaction is aborted. The bytes also count towards core's memory_limit_bytes, and the
  // byte bound is capped at half that limit so that a transaction alone cannot hold the broker
  // past it (producers, this one included, would stop being read: its COMMIT too).
  std::size_t max_transaction_bytes = 16u << 20;
  std::size_t max_transaction_messages = 100000;  // messages sent, acked or nacked in it
  std::size_t max_transactions = 16;
  // One connection's subscriptions (each a consumer, and for topics a filter on every shard), and
  // the levels of a destination name: limits one client cannot push the broker past.
  std::size_t max_subscriptions = 10000;
  // SENDs a connection may make a second, `message_burst` at once ([limits]; 0: no limit).
  // Past it the connection is not read until it may send again (back-pressure, no refusal).
  std::uint32_t max_messages_per_second = 0;
  std::uint32_t message_burst = 0;  // 0: as many as max_messages_per_second
  std::size_t max_destination_levels = 128;             // open at once on one connection
  // Encoded output one connection may hold for a client that reads slowly; past it deliveries
  // wait in the core (or `slow_consumer` applies). One frame always fits.
  std::size_t max_pending_output_bytes = 4u << 20;
  net::SlowConsumerPolicy slow_consumer = net::SlowConsumerPolicy::drop;
};

}  // namespace carrier::stomp
