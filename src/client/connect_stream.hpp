#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "client/websocket_framing.hpp"
#include "net/socket_stream.hpp"
#include "net/tls_context.hpp"

namespace carrier::client {

// Before connecting: TLS set up on `stream` when asked, and the WebSocket framing when
// `websocket_path` is set (null otherwise), speaking `subprotocol`. Both together are wss: the
// upgrade and the frames go through the TLS session.
inline Result<std::unique_ptr<WebSocketFraming>> prepare_stream(net::SocketStream& stream,
                                                                const net::TlsClientOptions& tls,
                                                                std::string_view websocket_path,
                                                                std::string_view subprotocol, std::string_view host) {
  if (auto st = net::use_client_tls(stream, tls, host); !st) return unexpected(std::move(st).error());
  if (websocket_path.empty()) return std::unique_ptr<WebSocketFraming>();
  return std::make_unique<WebSocketFraming>(std::string(websocket_path), std::string(subprotocol));
}

}  // namespace carrier::client

namespace carrier::client {

// A client's way in, shared by the STOMP and MQTT clients: connects `stream` to one of
// `endpoints` (TCP_NODELAY: small frames such as acks must not wait for Nagle; the writer
// batches on its own), then runs its TLS handshake when it has one. Empty when connected; else
// why not ("connect to HOST:PORT: ...", "TLS handshake with HOST:PORT failed: ...").
template <class Endpoints>
net::asio::awaitable<std::string> connect_stream(net::SocketStream& stream, const Endpoints& endpoints,
                                                 std::string where) {
  namespace asio = net::asio;
  boost::system::error_code ec;
  co_await asio::async_connect(stream.socket(), endpoints, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return "connect to " + where + ": " + ec.message();
  stream.socket().set_option(net::tcp::no_delay(true), ec);
  const std::string tls_failure = co_await stream.handshake_as_client();
  if (!tls_failure.empty()) co_return "TLS handshake with " + where + " failed: " + tls_failure;
  co_return std::string();
}

}  // namespace carrier::client
