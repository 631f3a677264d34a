#pragma once

#include <cstddef>
#include <cstdint>

#include "net/options.hpp"

namespace carrier::stomp {

struct Options {
  std::size_t max_frame_bytes = 16u << 20;  // a larger frame gets an ERROR and the connection closes
  std::size_t max_headers = 1000;
  std::uint32_t heartbeat_ms = 10000;       // what the broker offers and asks for; 0 = none
  // Encoded output one connection may hold for a client that reads slowly; past it deliveries
  // wait in the core (or `slow_consumer` applies). One frame always fits.
  std::size_t max_pending_output_bytes = 4u << 20;
  net::SlowConsumerPolicy slow_consumer = net::SlowConsumerPolicy::drop;
};

}  // namespace carrier::stomp
