#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "net/asio.hpp"
#include "net/transport.hpp"
#include "session/message_rate.hpp"

namespace carrier::session {

// What every protocol session (stomp::Session, mqtt::Session) is to its transport: the handler
// of one net::Transport, which it holds. The transport calls its handlers make go under their
// usual names (out(), flush(), close_after_flush()...), so a session does not care whether TCP,
// a WebSocket or a test's fake carries it.
// Lifetime: the session holds the transport (a shared_ptr); the transport's implementation
// holds the session while it does I/O (net::Connection: until its loops end). When the session
// goes, the transport forgets it.
// Runs on: the transport's shard.
class ProtocolSession : public net::TransportHandler {
 public:
  explicit ProtocolSession(std::shared_ptr<net::Transport> transport);
  ~ProtocolSession() override;
  ProtocolSession(const ProtocolSession&) = delete;
  ProtocolSession& operator=(const ProtocolSession&) = delete;

  net::Transport& transport() const { return *transport_; }
  // For what goes on carrying the connection after this session (a WebSocket over HTTP's).
  const std::shared_ptr<net::Transport>& shared_transport() const { return transport_; }
  model::ShardId shard() const { return transport_->shard(); }
  std::uint64_t id() const { return transport_->id(); }
  const std::string& log_prefix() const { return transport_->log_prefix(); }
  std::string log_prefix(std::string_view destination) const { return transport_->log_prefix(destination); }
  bool is_closed() const { return transport_->is_closed(); }
  bool is_closing() const { return transport_->is_closing(); }

 protected:
  // [limits] max_messages_per_second (0: off): call once, before reading.
  void limit_message_rate(std::uint32_t per_second, std::uint32_t burst);
  // Whether one more message may be read now. False: reading is paused and resumes once a
  // token is due (the message stays unread in the buffer, decoded again then).
  bool take_message_token();

  std::string& out() { return transport_->out(); }
  void flush() { transport_->flush(); }
  void close_after_flush() { transport_->close_after_flush(); }
  void close_after_flush(std::chrono::milliseconds grace) { transport_->close_after_flush(grace); }
  void close() { transport_->close(); }
  void pause_reading() { transport_->pause_reading(); }
  void resume_reading() { transport_->resume_reading(); }
  bool is_paused() const { return transport_->is_paused(); }
  std::size_t queued_bytes() const { return transport_->queued_bytes(); }
  void set_max_queued_bytes(std::size_t bytes) { transport_->set_max_queued_bytes(bytes); }
  bool output_full() const { return transport_->output_full(); }
  const std::string& peer() const { return transport_->peer(); }
  std::string_view peer_address() const { return transport_->peer_address(); }
  const net::asio::any_io_executor& executor() const { return transport_->executor(); }
  std::chrono::steady_clock::time_point last_read() const { return transport_->last_read(); }
  std::chrono::steady_clock::time_point last_write() const { return transport_->last_write(); }

 private:
  std::shared_ptr<net::Transport> transport_;
  std::unique_ptr<MessageRate> message_rate_;             // null: no limit
  std::unique_ptr<net::asio::steady_timer> rate_resume_;  // wakes a producer paused by it
};

}  // namespace carrier::session
