#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "model/shard_id.hpp"
#include "net/asio.hpp"

namespace carrier::net {

// What a transport calls on the protocol session it carries (stomp::Session, mqtt::Session).
// Runs on: the transport's shard.
class TransportHandler {
 public:
  virtual ~TransportHandler() = default;
  // New bytes are at the end of `buffer`; erase what was consumed from its front. A byte
  // stream: where the peer's writes (or WebSocket messages) began and ended is not kept.
  virtual void on_data(std::string& buffer) = 0;
  // The writer took what out() held; `on_write_done` follows once it is on the wire.
  virtual void on_write_started() {}
  virtual void on_write_done() {}
  // Exactly once, when the transport closes for any reason.
  virtual void on_closed() = 0;
  // The broker is stopping: say goodbye as the protocol allows, then close.
  virtual void shutdown() = 0;
  // An administrator closes this connection: the same goodbye, carrying `reason` where the
  // protocol can (a STOMP ERROR's body, an MQTT 5 DISCONNECT 0x98's reason string).
  virtual void close_by_admin(std::string_view reason) {
    (void)reason;
    shutdown();
  }
};

// Messages a connection carried, for the admin API's rates: `in` what the client sent (SEND,
// PUBLISH), `out` what it was handed. Rates are over the interval since the previous sample
// taken at least a second before (the first: since connecting), so pollers see per-second rates.
struct MessageRates {
  std::uint64_t in = 0;
  std::uint64_t out = 0;
  double in_per_second = 0;
  double out_per_second = 0;
};

// A byte stream to one client that a protocol session reads from and writes to: TCP
// (net::Connection) today, a WebSocket next (issue 13), net::FakeTransport in tests. It keeps
// what every such stream shares (the output buffer and its bound, the closing state, read
// pause, the peer's name) so sessions call it without a virtual call on the hot path; the I/O
// itself is the implementation's.
//
// Ownership: the implementation keeps its session alive while it does I/O (net::Connection
// holds it until its read and write loops have ended); the session holds its transport (a
// shared_ptr), so the transport outlives every call the session makes. The handler pointer is
// cleared when the session is destroyed.
// Runs on: its shard, only.
class Transport {
 public:
  Transport(asio::any_io_executor executor, model::ShardId shard, std::string protocol, std::string peer);
  virtual ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // The session whose on_data()/on_closed()... this transport calls (null: none, or gone).
  void set_handler(TransportHandler* handler) { handler_ = handler; }
  TransportHandler* handler() const { return handler_; }

  // Output: append encoded bytes to out(), then flush() to wake the writer.
  std::string& out() { return pending_; }
  void flush() {
    if (!pending_.empty()) wake_writer();
  }
  // Sends what is queued, then closes. Further input is ignored.
  void close_after_flush();
  // The same, but closes anyway once `grace` has passed (a peer that does not read).
  virtual void close_after_flush(std::chrono::milliseconds grace) = 0;
  // Closes now: what is queued is dropped; the handler's on_closed() runs before this returns.
  void close();
  bool is_closed() const { return closed_; }
  bool is_closing() const { return closing_ || closed_; }
  // Back-pressure: stop reading (the peer is slowed by its transport's flow control) until
  // resume_reading(); then what was already received is offered to on_data() again.
  void pause_reading() { paused_ = true; }
  void resume_reading();
  bool is_paused() const { return paused_; }

  std::size_t queued_bytes() const { return pending_.size() + writing_.size(); }
  // The bound on output waiting for a slow reader: once queued_bytes() reaches it, sessions
  // stop encoding deliveries (they wait, or a slow-consumer policy applies) until writes drain
  // it. One frame always fits, so a transport holds at most the bound plus one frame.
  void set_max_queued_bytes(std::size_t bytes) { max_queued_bytes_ = bytes; }
  bool output_full() const { return queued_bytes() >= max_queued_bytes_; }

  model::ShardId shard() const { return shard_; }
  std::uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }
  // "stomp", "mqtt", "http": the protocol it carries (the admin API and /metrics group by it).
  const std::string& protocol() const { return protocol_; }
  std::chrono::steady_clock::time_point connected_at() const { return connected_at_; }
  // The peer's address without its port ("127.0.0.1", "::1").
  std::string_view peer_address() const { return std::string_view(peer_).substr(0, peer_.rfind(':')); }
  // The user a verified TLS client certificate names, when its listener takes certificates as
  // user names (tls.use_identity_as_username); empty otherwise.
  const std::string& peer_identity() const { return peer_identity_; }
  // "[stomp c42 127.0.0.1:50312]", for log lines.
  const std::string& log_prefix() const { return log_prefix_; }
  // "[stomp c42 127.0.0.1:50312 /queue/orders]", for a line about one destination: the JSON log
  // format (base/logging.cpp) makes protocol, connection, remote and destination fields of it.
  std::string log_prefix(std::string_view destination) const;
  // The shard's executor: sessions run their timers (heart-beats, keep-alive) on it.
  const asio::any_io_executor& executor() const { return executor_; }
  std::chrono::steady_clock::time_point last_read() const { return last_read_; }
  std::chrono::steady_clock::time_point last_write() const { return last_write_; }

  // Asks the handler to say goodbye (broker shutdown).
  void shutdown() {
    if (handler_ != nullptr) handler_->shutdown();
  }
  // Asks the handler to say goodbye with an administrator's reason; the reason is kept for a
  // carrier that has its own close (a WebSocket's close frame).
  void close_by_admin(std::string reason) {
    close_reason_ = std::move(reason);
    if (handler_ != nullptr) handler_->close_by_admin(close_reason_);
  }
  const std::string& close_reason() const { return close_reason_; }

  // Who the client is, once its protocol's login named it (admin API connection list).
  void set_client(std::string client_id, std::string user) {
    client_id_ = std::move(client_id);
    user_ = std::move(user);
  }
  const std::string& client_id() const { return client_id_; }
  const std::string& user() const { return user_; }
  // Sessions count messages in (from the client) and out (to it): two increments, no clock.
  void count_in(std::uint64_t n = 1) { messages_in_ += n; }
  void count_out(std::uint64_t n = 1) { messages_out_ += n; }
  // The totals and their rates (see MessageRates); rolls the sample window when a second passed.
  MessageRates sample_rates(std::chrono::steady_clock::time_point now);

  // Every open transport of the calling shard (for shutdown, and to resume reading when memory
  // is freed). Runs on: that shard.
  static std::unordered_set<Transport*>& on_this_shard();

 protected:
  // The implementation's I/O: wake the writer (out() has bytes, or closing began), wake a
  // paused reader, release what the stream holds once closed.
  virtual void wake_writer() = 0;
  virtual void wake_reader() = 0;
  virtual void close_io() = 0;

  // Counted among this shard's open transports until closed.
  void register_on_shard();
  void set_peer_identity(std::string identity) { peer_identity_ = std::move(identity); }
  // Bytes came in: the peer is alive.
  void note_read() { last_read_ = std::chrono::steady_clock::now(); }
  // The handler gets what was received (and what it left unconsumed before).
  void deliver_input(std::string& buffer) {
    if (handler_ != nullptr) handler_->on_data(buffer);
  }
  // The writer's turn: what out() holds moves to the write under way (false: nothing to write).
  bool take_output();
  const std::string& writing() const { return writing_; }
  // The write under way is on the wire.
  void output_written();

 private:
  asio::any_io_executor executor_;
  model::ShardId shard_;
  std::uint64_t id_;
  std::string peer_;
  std::string protocol_;
  std::string log_prefix_;
  std::string peer_identity_;
  std::string client_id_;
  std::string user_;
  std::string close_reason_;
  TransportHandler* handler_ = nullptr;
  std::uint64_t messages_in_ = 0;
  std::uint64_t messages_out_ = 0;
  // The rate sample: totals at its start, and the rates of the last whole window.
  std::chrono::steady_clock::time_point rate_window_start_;
  std::uint64_t rate_window_in_ = 0;
  std::uint64_t rate_window_out_ = 0;
  double in_per_second_ = 0;
  double out_per_second_ = 0;
  bool rate_sampled_ = false;
  std::string pending_;
  std::string writing_;
  std::size_t max_queued_bytes_ = SIZE_MAX;
  bool paused_ = false;
  bool closing_ = false;
  bool closed_ = false;
  bool registered_ = false;
  std::chrono::steady_clock::time_point last_read_;
  std::chrono::steady_clock::time_point last_write_;
  std::chrono::steady_clock::time_point connected_at_;
};

}  // namespace carrier::net
