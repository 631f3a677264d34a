#pragma once

#include <cstddef>
#include <cstdint>

namespace carrier::stomp {

struct Options {
  std::size_t max_frame_bytes = 16u << 20;  // a larger frame gets an ERROR and the connection closes
  std::size_t max_headers = 1000;
  std::uint32_t heartbeat_ms = 10000;       // what the broker offers and asks for; 0 = none
};

}  // namespace carrier::stomp
