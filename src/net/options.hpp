#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace carrier::net {

// Where a protocol listens. `enabled = false` is spelled "off" in flags and TOML.
struct ListenerOptions {
  bool enabled = true;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
};

struct Options {
  unsigned shards = 0;  // 0: one per core
  // Connections (STOMP and MQTT together) that have not completed CONNECT, password check
  // included; a connection past this is refused at once (docs/configuration.md).
  std::size_t max_connecting = 1000;
};

}  // namespace carrier::net
