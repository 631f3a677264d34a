#include "client/server_address.hpp"

namespace carrier::client {

Result<ServerAddress> parse_server_address(std::string_view text, std::uint16_t default_port) {
  ServerAddress out;
  std::string_view rest = text;
  std::uint16_t port = default_port;
  if (rest.starts_with("wss://")) {
    rest.remove_prefix(6);
    out.tls = true;
    port = 8443;
  } else if (rest.starts_with("ws://")) {
    rest.remove_prefix(5);
    port = 8080;
  } else {
    auto endpoint = parse_endpoint(text, default_port);
    if (!endpoint) return unexpected(endpoint.error());
    out.endpoint = std::move(*endpoint);
    return out;
  }
  const auto slash = rest.find('/');
  out.websocket_path = slash == std::string_view::npos ? std::string("/ws") : std::string(rest.substr(slash));
  auto endpoint = parse_endpoint(rest.substr(0, slash), port);
  if (!endpoint) return unexpected(endpoint.error());
  if (out.websocket_path.find_first_of(" \r\n") != std::string::npos) {
    return unexpected(Errc::invalid_argument, "a WebSocket path may not contain spaces or line breaks");
  }
  out.endpoint = std::move(*endpoint);
  return out;
}

}  // namespace carrier::client
