#include "http/websocket_transport.hpp"

#include "base/logging.hpp"
#include "http/log.hpp"

namespace carrier::http {

namespace {

// How long a closing WebSocket waits for its close frame (and what precedes it) to be written
// to a peer that does not read, before the TCP connection is dropped.
constexpr std::chrono::milliseconds kCloseGrace{2000};

}  // namespace

WebSocketTransport::WebSocketTransport(std::shared_ptr<net::Transport> lower, std::string protocol,
                                       codec::WsDecodeLimits limits)
    : Transport(lower->executor(), lower->shard(), std::move(protocol), lower->peer()),
      lower_(std::move(lower)),
      lower_handler_(*this),
      decoder_(limits) {}

WebSocketTransport::~WebSocketTransport() {
  if (lower_->handler() == &lower_handler_) lower_->set_handler(nullptr);
}

void WebSocketTransport::attach() {
  lower_->set_handler(&lower_handler_);
  register_on_shard();
  note_read();
}

void WebSocketTransport::hold(std::shared_ptr<net::TransportHandler> session) {
  // A session that closed while it began is not held: nothing would let go of it.
  if (!is_closed()) session_ = std::move(session);
}

void WebSocketTransport::close_after_flush(std::chrono::milliseconds grace) {
  Transport::close_after_flush();
  // The lower transport's own linger bounds the whole goodbye; what is queued here is handed
  // down before its queue runs dry, so it does not close early.
  if (!is_closed()) lower_->close_after_flush(grace);
}

// --- input -----------------------------------------------------------------------------------

void WebSocketTransport::on_lower_data(std::string& buffer) {
  if (is_closing()) {
    buffer.clear();
    return;
  }
  if (is_paused()) {
    // The session stopped reading: so does the socket, with the bytes left where they are.
    lower_->pause_reading();
    return;
  }
  note_read();
  std::size_t used = 0;
  while (used < buffer.size() && !is_closing()) {
    auto r = decoder_.decode(std::string_view(buffer).substr(used), input_);
    used += r.consumed;
    if (r.status == codec::WsDecoded::Status::error) {
      log()->debug("{} closing the WebSocket ({}): {}", log_prefix(), static_cast<int>(r.close), r.reason);
      send_close(static_cast<std::uint16_t>(r.close), r.reason);
      buffer.clear();
      close();
      return;
    }
    if (r.status != codec::WsDecoded::Status::control) break;
    on_control(r);
  }
  buffer.erase(0, used);
  if (is_closing()) return;
  if (!input_.empty()) deliver_input(input_);
  if (is_paused()) lower_->pause_reading();
}

void WebSocketTransport::on_control(const codec::WsDecoded& frame) {
  switch (frame.opcode) {
    case codec::WsOpcode::ping:
      if (close_sent_ || lower_->is_closing()) return;
      codec::ws_append_frame(lower_->out(), codec::WsOpcode::pong, frame.payload);
      lower_->flush();
      return;
    case codec::WsOpcode::close:
      // Answered (RFC 6455 5.5.1), then closed: the session sees its client go.
      send_close(static_cast<std::uint16_t>(codec::WsClose::normal), {});
      close();
      return;
    default:
      return;  // a pong: nothing to do
  }
}

void WebSocketTransport::wake_reader() {
  // Resumed: what the session left unread goes to it first, then the socket reads again. Posted
  // like a TCP connection's read loop, so a session never re-enters from resume_reading().
  if (redeliver_posted_) return;
  redeliver_posted_ = true;
  net::asio::post(executor(), [weak = weak_from_this()] {
    auto self = weak.lock();
    if (!self) return;
    self->redeliver_posted_ = false;
    if (self->is_closing() || self->is_paused()) return;
    if (!self->input_.empty()) self->deliver_input(self->input_);
    if (!self->is_paused() && !self->is_closing()) self->lower_->resume_reading();
  });
}

// --- output ----------------------------------------------------------------------------------

void WebSocketTransport::wake_writer() {
  // Posted, as a TCP connection's writer coroutine runs: a session's flush() must not call its
  // own on_write_started() from inside (written acks staged around a flush would move early).
  if (write_posted_) return;
  write_posted_ = true;
  net::asio::post(executor(), [weak = weak_from_this()] {
    if (auto self = weak.lock()) {
      self->write_posted_ = false;
      self->hand_down();
    }
  });
}

void WebSocketTransport::hand_down() {
  if (is_closed() || lower_->is_closed()) return;
  if (handed_ || in_flight_) return;  // on_lower_write_done() comes back for the rest
  if (take_output()) {
    // Whatever the session queued since the last write, as one binary frame: STOMP and MQTT
    // clients read a byte stream, and binary keeps a non-UTF-8 body legal.
    std::string& o = lower_->out();
    codec::ws_append_header(o, codec::WsOpcode::binary, writing().size());
    o.append(writing());
    handed_ = true;
    lower_->flush();
    return;
  }
  if (is_closing()) send_close(static_cast<std::uint16_t>(codec::WsClose::normal), close_reason());
}

void WebSocketTransport::on_lower_write_started() {
  if (!handed_) return;
  handed_ = false;
  in_flight_ = true;
}

void WebSocketTransport::on_lower_write_done() {
  if (!in_flight_) return;
  in_flight_ = false;
  output_written();
  hand_down();  // the writer's next turn, as net::Connection's loop takes it
}

void WebSocketTransport::send_close(std::uint16_t code, std::string_view reason) {
  if (close_sent_) return;
  close_sent_ = true;
  if (lower_->is_closed()) return;
  codec::ws_append_close(lower_->out(), static_cast<codec::WsClose>(code), reason);
  lower_->flush();
  lower_->close_after_flush(kCloseGrace);
}

void WebSocketTransport::close_io() {
  // Closed now (the session's close(), a protocol error, the peer's close or its TCP going):
  // the peer still gets a close frame if the socket is open (with an administrator's reason).
  send_close(static_cast<std::uint16_t>(codec::WsClose::normal), close_reason());
  // The session goes after its on_closed(), not inside it.
  if (session_) net::asio::post(executor(), [session = std::move(session_)] {});
}

}  // namespace carrier::http
