#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <string>

#include "net/socket_stream.hpp"
#include "net/source_limit.hpp"
#include "net/tls_context.hpp"
#include "net/transport.hpp"

namespace carrier::net {

// A TCP connection, or TLS over one, the transport under a STOMP or MQTT session: a reader coroutine that hands
// received bytes to the session, and a writer coroutine that sends everything queued since its
// last write in one call (write coalescing: many frames, one syscall). A steady_timer is the
// writer's wake-up. On a TLS listener a handshake coroutine runs first and starts the two once
// it succeeds; until then output waits, and closing (the session's CONNECT timeout, which so
// bounds the handshake too) closes at once.
// Lifetime: held by its coroutines through shared_from_this; it holds its session (given to
// start()) until both coroutines have ended after close(), then lets go of it, so neither
// outlives what it calls: the session holds the connection, never the other way round for long.
// Runs on: its shard, only.
class Connection : public Transport, public std::enable_shared_from_this<Connection> {
 public:
  // `tls.context` set: TLS, handshake first (the client's when `tls.as_client`).
  Connection(tcp::socket socket, model::ShardId shard, std::string protocol, TlsAccept tls = {});
  ~Connection() override;

  // Its place in the per-source connection counts (held until the connection is destroyed), or
  // the listener's refusal, which the session answers (a default one: no limiter looked).
  void admit(Admission admission) { admission_ = std::move(admission); }
  const Admission& admission() const { return admission_; }

  // Starts reading and writing for `session` (already this connection's handler).
  void start(std::shared_ptr<TransportHandler> session);

  // TLS handshakes of every listener since start: completed, failed (bad certificate, plain
  // TCP on a TLS port...), and abandoned (closed before done, e.g. by the CONNECT timeout).
  struct TlsHandshakeCounts {
    std::uint64_t completed = 0;
    std::uint64_t failed = 0;
    std::uint64_t abandoned = 0;
  };
  static TlsHandshakeCounts tls_handshakes();

  // Bytes the read buffer holds allocated: none while the connection is quiet.
  std::size_t read_buffer_capacity() const { return read_buffer_.capacity(); }

  using Transport::close_after_flush;
  void close_after_flush(std::chrono::milliseconds grace) override;

 private:
  void wake_writer() override;
  void wake_reader() override;
  void close_io() override;
  static asio::awaitable<void> handshake(std::shared_ptr<Connection> self);
  void start_loops();
  void first_bytes();
  static asio::awaitable<void> read_loop(std::shared_ptr<Connection> self);
  // After input was handed to the session: releases the read buffer if nothing is left in it
  // and the last read was small (or it grew huge); true when the next read may wait quietly.
  bool settle_read_buffer(std::size_t last_read);
  static asio::awaitable<void> write_loop(std::shared_ptr<Connection> self);
  // Each loop's end: the last one lets go of the session.
  void loop_ended(std::exception_ptr e);

  SocketStream stream_;
  bool identity_as_username_ = false;
  bool as_client_ = false;    // TLS: this side dialled, so it runs the client's handshake
  bool handshaking_ = false;  // TLS: the handshake has not completed (no read or write loop yet)
  bool heard_ = false;        // the first bytes came (a TLS hello on a plain port is logged)
  std::shared_ptr<TransportHandler> session_;
  int loops_running_ = 0;
  asio::steady_timer wake_;
  asio::steady_timer resume_;
  std::unique_ptr<asio::steady_timer> linger_;  // close_after_flush(grace) only
  std::string read_buffer_;
  std::array<char, 64> peek_;
  Admission admission_;  // an idle connection's pending read lands here (connection.cpp)
};

}  // namespace carrier::net
