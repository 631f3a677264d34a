#include "client/websocket_framing.hpp"

#include <random>

#include <fmt/format.h>

#include <boost/beast/websocket/detail/hybi13.hpp>

namespace carrier::client {

namespace asio = net::asio;

namespace {

constexpr std::size_t kMaxResponseHead = 8192;

http::codec::WsDecodeLimits server_frame_limits() {
  http::codec::WsDecodeLimits limits;
  limits.max_frame_bytes = UINT64_MAX >> 1;  // the client's own decoder bounds what it takes
  limits.client_frames = false;
  return limits;
}

}  // namespace

WebSocketFraming::WebSocketFraming(std::string path, std::string subprotocol)
    : path_(std::move(path)),
      subprotocol_(std::move(subprotocol)),
      decoder_(server_frame_limits()),
      mask_(std::random_device{}()) {}

asio::awaitable<Status> WebSocketFraming::handshake(net::SocketStream& stream, std::string host, std::uint16_t port) {
  boost::beast::websocket::detail::sec_ws_key_type key;
  boost::beast::websocket::detail::make_sec_ws_key(key);
  const std::string request = fmt::format(
      "GET {} HTTP/1.1\r\nHost: {}:{}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {}\r\n"
      "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {}\r\n\r\n",
      path_, host, port, std::string_view(key.data(), key.size()), subprotocol_);
  boost::system::error_code ec;
  co_await stream.async_write(asio::buffer(request), asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return unexpected(Errc::io_error, "WebSocket upgrade: " + ec.message());
  std::string response;
  std::size_t end = std::string::npos;
  while ((end = response.find("\r\n\r\n")) == std::string::npos) {
    if (response.size() > kMaxResponseHead) co_return unexpected(Errc::protocol_error, "WebSocket upgrade: response too long");
    char chunk[2048];
    const std::size_t n = co_await stream.async_read_some(asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return unexpected(Errc::io_error, "WebSocket upgrade: " + ec.message());
    response.append(chunk, n);
  }
  const std::string status_line = response.substr(0, response.find("\r\n"));
  if (status_line.rfind("HTTP/1.1 101", 0) != 0) {
    co_return unexpected(Errc::protocol_error, "WebSocket upgrade refused: " + status_line);
  }
  boost::beast::websocket::detail::sec_ws_accept_type accept;
  boost::beast::websocket::detail::make_sec_ws_accept(accept, boost::beast::string_view(key.data(), key.size()));
  if (response.find(std::string(accept.data(), accept.size())) == std::string::npos) {
    co_return unexpected(Errc::protocol_error, "WebSocket upgrade: wrong Sec-WebSocket-Accept");
  }
  pending_ = response.substr(end + 4);
  co_return ok();
}

Status WebSocketFraming::unwrap(std::string_view chunk, std::string& input) {
  if (closed_) return ok();
  std::string_view in = chunk;
  if (!pending_.empty()) {
    pending_.append(chunk);
    in = pending_;
  }
  std::size_t used = 0;
  Status status = ok();
  while (used < in.size()) {
    auto r = decoder_.decode(in.substr(used), input);
    used += r.consumed;
    if (r.status == http::codec::WsDecoded::Status::error) {
      status = unexpected(Errc::protocol_error, "bad WebSocket frame from server: " + r.reason);
      break;
    }
    if (r.status == http::codec::WsDecoded::Status::need_more) break;
    if (r.opcode == http::codec::WsOpcode::close) {
      // The TCP close follows; the client reads it as it would over TCP.
      closed_ = true;
      break;
    }
    // A ping would want a pong; Carrier sends none (STOMP heart-beats and MQTT keep-alive do).
  }
  pending_ = std::string(in.substr(std::min(used, in.size())));
  return status;
}

void WebSocketFraming::wrap(std::string_view batch, std::string& out) {
  out.clear();
  mask_ = mask_ * 1664525u + 1013904223u;  // a fresh key per frame; no secret to keep here
  http::codec::ws_append_masked_frame(out, http::codec::WsOpcode::binary, batch, mask_);
}

}  // namespace carrier::client

namespace carrier::client {

Status WebSocketFraming::append_input(WebSocketFraming* ws, std::string_view chunk, std::string& input) {
  if (ws != nullptr) return ws->unwrap(chunk, input);
  input.append(chunk);
  return ok();
}

std::function<void(std::string_view, std::string&)> WebSocketFraming::frame_hook(WebSocketFraming* ws) {
  if (ws == nullptr) return nullptr;
  return [ws](std::string_view batch, std::string& wire) { ws->wrap(batch, wire); };
}

}  // namespace carrier::client
