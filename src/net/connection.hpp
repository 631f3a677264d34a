#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>

#include "model/shard_id.hpp"
#include "net/asio.hpp"

namespace carrier::net {

class ShardPool;

// One client connection: a reader coroutine that hands received bytes to the protocol, and a
// writer coroutine that sends everything queued since its last write in one call (write
// coalescing: many frames, one syscall). A steady_timer is the writer's wake-up. Protocol
// sessions derive from it. Lifetime: held by its coroutines through shared_from_this; ends when
// both have finished after close().
// Runs on: its shard, only.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, model::ShardId shard, std::string protocol);
  virtual ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void start();

  // Output: append encoded bytes to out(), then flush() to wake the writer.
  std::string& out() { return pending_; }
  void flush();
  // Sends what is queued, then closes. Further input is ignored.
  void close_after_flush();
  // The same, but closes anyway once `grace` has passed (a peer that does not read).
  void close_after_flush(std::chrono::milliseconds grace);
  void close();
  bool is_closed() const { return closed_; }
  // Back-pressure: stop reading (the kernel's buffers fill and TCP slows the peer) until
  // resume_reading(); then what was already received is offered to on_data() again.
  void pause_reading() { paused_ = true; }
  void resume_reading();
  bool is_paused() const { return paused_; }
  bool is_closing() const { return closing_ || closed_; }

  model::ShardId shard() const { return shard_; }
  std::uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }
  // The peer's address without its port ("127.0.0.1", "::1").
  std::string_view peer_address() const { return std::string_view(peer_).substr(0, peer_.rfind(':')); }
  // "[stomp c42 127.0.0.1:50312]", for log lines.
  const std::string& log_prefix() const { return log_prefix_; }
  asio::any_io_executor executor() { return socket_.get_executor(); }
  std::chrono::steady_clock::time_point last_read() const { return last_read_; }
  std::chrono::steady_clock::time_point last_write() const { return last_write_; }
  std::size_t queued_bytes() const { return pending_.size() + writing_.size(); }
  // The bound on output waiting for a slow reader: once queued_bytes() reaches it, sessions
  // stop encoding deliveries (they wait, or a slow-consumer policy applies) until writes drain
  // it. One frame always fits, so a connection holds at most the bound plus one frame.
  void set_max_queued_bytes(std::size_t bytes) { max_queued_bytes_ = bytes; }
  bool output_full() const { return queued_bytes() >= max_queued_bytes_; }

  // The broker is stopping: say goodbye as the protocol allows, then close.
  virtual void shutdown() = 0;

  // Every open connection of the calling shard (for shutdown). Runs on: that shard.
  static std::unordered_set<Connection*>& on_this_shard();

 protected:
  // New bytes are at the end of `buffer`; erase what was consumed from its front.
  virtual void on_data(std::string& buffer) = 0;
  // The writer took what out() held; `on_write_done` follows once it is on the wire.
  virtual void on_write_started() {}
  virtual void on_write_done() {}
  // Exactly once, when the connection closes for any reason.
  virtual void on_closed() = 0;

 private:
  static asio::awaitable<void> read_loop(std::shared_ptr<Connection> self);
  static asio::awaitable<void> write_loop(std::shared_ptr<Connection> self);

  tcp::socket socket_;
  model::ShardId shard_;
  std::uint64_t id_;
  std::string protocol_;
  std::string peer_;
  std::string log_prefix_;
  asio::steady_timer wake_;
  asio::steady_timer resume_;
  std::unique_ptr<asio::steady_timer> linger_;  // close_after_flush(grace) only
  bool paused_ = false;
  std::size_t max_queued_bytes_ = SIZE_MAX;
  std::string read_buffer_;
  std::array<char, 64> peek_;  // an idle connection's pending read lands here (connection.cpp)
  std::string pending_;
  std::string writing_;
  bool closing_ = false;
  bool closed_ = false;
  std::chrono::steady_clock::time_point last_read_;
  std::chrono::steady_clock::time_point last_write_;
};

}  // namespace carrier::net
