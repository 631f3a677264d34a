#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "http/codec/websocket_frame.hpp"
#include "net/transport.hpp"

namespace carrier::http {

// A WebSocket as a net::Transport: the byte stream a STOMP or MQTT session reads and writes,
// carried in RFC 6455 frames over the HTTP connection it was upgraded from (the `lower`
// transport, TCP). Input: client frames are unmasked as they come (codec/websocket_frame) and
// their payloads handed to the session as one stream, so a STOMP frame or MQTT packet may span
// WebSocket messages and several may share one. Output: everything the session queued since
// the last write goes out as one binary frame. Pings are answered, a close is answered and the
// connection closed; a bad frame closes with its code (1002, 1003, 1009) and the reason.
// Back-pressure: the session's pause_reading() stops the lower transport's reads; its output
// bound counts what it queued here and the frame being written below.
// Lifetime: start() takes over the lower transport's handler (from the HTTP session, which keeps
// this object alive by holding it); it holds the session until it closes.
// Runs on: the lower transport's shard, only.
class WebSocketTransport : public net::Transport, public std::enable_shared_from_this<WebSocketTransport> {
 public:
  // `protocol` names it in log lines ("ws-stomp").
  WebSocketTransport(std::shared_ptr<net::Transport> lower, std::string protocol, codec::WsDecodeLimits limits);
  ~WebSocketTransport() override;

  // Frames from now on are this transport's; bytes already in the lower transport's output (the
  // 101 response) go first.
  void attach();
  // Holds the session `attach()`ed reads were given to, until the transport closes.
  void hold(std::shared_ptr<net::TransportHandler> session);

  using Transport::close_after_flush;
  void close_after_flush(std::chrono::milliseconds grace) override;

 private:
  // What the lower transport calls: the bytes and write events of the TCP connection.
  class Lower final : public net::TransportHandler {
   public:
    explicit Lower(WebSocketTransport& ws) : ws_(ws) {}
    void on_data(std::string& buffer) override { ws_.on_lower_data(buffer); }
    void on_write_started() override { ws_.on_lower_write_started(); }
    void on_write_done() override { ws_.on_lower_write_done(); }
    void on_closed() override { ws_.close(); }
    // The WebSocket transport is on the shard's list itself and says goodbye through its session.
    void shutdown() override {}

   private:
    WebSocketTransport& ws_;
  };

  void wake_writer() override;
  void wake_reader() override;
  void close_io() override;

  // The writer's turn: the session's output as one frame into the lower transport's output.
  void hand_down();
  void on_lower_data(std::string& buffer);
  void on_lower_write_started();
  void on_lower_write_done();
  void on_control(const codec::WsDecoded& frame);
  // Sends a close frame and closes the lower transport once it is written (or after a grace).
  void send_close(std::uint16_t code, std::string_view reason);

  std::shared_ptr<net::Transport> lower_;
  Lower lower_handler_;
  std::shared_ptr<net::TransportHandler> session_;
  codec::WsFrameDecoder decoder_;
  std::string input_;          // unmasked payload the session has not consumed yet
  bool handed_ = false;        // our frame is in the lower output, its write not yet begun
  bool in_flight_ = false;     // ...and now being written
  bool close_sent_ = false;
  bool redeliver_posted_ = false;
  bool write_posted_ = false;
};

}  // namespace carrier::http
