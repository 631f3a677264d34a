#pragma once

#include <string>

#include "net/socket_stream.hpp"

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
