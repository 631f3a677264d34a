#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "http/codec/websocket_frame.hpp"
#include "net/asio.hpp"
#include "net/socket_stream.hpp"

namespace carrier::client {

// The client end of a WebSocket (RFC 6455) under StompClient or MqttClient, when they connect
// to a broker's GET /ws instead of its TCP port: the upgrade handshake on the connected socket,
// then every write batch wrapped in one masked binary frame and the server's frames unwrapped
// into the byte stream the client's decoder reads.
// Runs on: the client's I/O thread only.
class WebSocketFraming {
 public:
  // `path` ("/ws") and `subprotocol` ("v12.stomp", "mqtt").
  WebSocketFraming(std::string path, std::string subprotocol);

  // Sends the upgrade request and reads the 101 (any other answer is an error, with its status
  // line) on `stream`, over TLS when it has it (wss). Bytes that followed the response are
  // unwrapped by the next unwrap().
  net::asio::awaitable<Status> handshake(net::SocketStream& stream, std::string host, std::uint16_t port);
  // Server frames in `chunk` (any split) -> their payload appended to `input`. An error: a bad
  // frame. After the server's close frame (`closed()`) the rest is ignored.
  Status unwrap(std::string_view chunk, std::string& input);
  bool closed() const { return closed_; }
  // `batch` as one masked binary frame, replacing `out`.
  void wrap(std::string_view batch, std::string& out);

  // What a client's loops call whether or not it speaks WebSocket (`ws` null: plain TCP): bytes
  // read from the socket into the decoder's input, and the write loop's framing hook.
  static Status append_input(WebSocketFraming* ws, std::string_view chunk, std::string& input);
  static std::function<void(std::string_view, std::string&)> frame_hook(WebSocketFraming* ws);

 private:
  std::string path_;
  std::string subprotocol_;
  http::codec::WsFrameDecoder decoder_;
  std::string pending_;  // server bytes not yet a whole frame header or control frame
  std::uint32_t mask_;
  bool closed_ = false;
};

}  // namespace carrier::client
