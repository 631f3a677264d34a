#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "client/stomp_client.hpp"

namespace carrier::client {

// What `carrier send` / `recv` take as --server: HOST:PORT (the STOMP port), or a WebSocket URL
// ws://HOST:PORT/PATH (the HTTP listener's /ws) or wss://HOST:PORT/PATH (the same over TLS,
// the --https listener). A URL without a port takes 8080 (ws) or 8443 (wss), Carrier's defaults;
// without a path, /ws.
struct ServerAddress {
  Endpoint endpoint;
  std::string websocket_path;  // empty: STOMP over TCP
  bool tls = false;            // wss
};

Result<ServerAddress> parse_server_address(std::string_view text, std::uint16_t default_port);

}  // namespace carrier::client
