#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "base/result.hpp"
#include "net/accept_backoff.hpp"
#include "net/asio.hpp"
#include "net/options.hpp"
#include "net/shard_pool.hpp"
#include "net/source_limit.hpp"

namespace carrier::net {

// Accepts TCP connections for one protocol and hands each to a shard, round-robin. The accepted
// socket already belongs to the chosen shard's io_context; `on_accept` runs on that shard.
// Runs on: opened by the main thread; accepts on shard 0.
class Listener {
 public:
  // `admission`: the connection's place in the per-source counts, or why it is refused (the
  // session answers that in its protocol's words).
  using AcceptHandler = std::function<void(tcp::socket socket, model::ShardId shard, Admission admission)>;

  // `sources` (may be null: no per-source limits) counts every accepted connection.
  Listener(ShardPool& pool, std::string protocol, AcceptHandler on_accept, SourceLimiter* sources = nullptr);

  // Binds and listens now, so a port in use is reported at start-up, naming the address.
  Status open(const ListenerOptions& options);
  void start();
  void stop();  // stops accepting; established connections are untouched
  tcp::endpoint local_endpoint() const;

 private:
  static asio::awaitable<void> accept_loop(Listener* self);
  Admission admit(const tcp::socket& socket);

  ShardPool& pool_;
  std::string protocol_;
  AcceptHandler on_accept_;
  SourceLimiter* sources_;
  std::chrono::steady_clock::time_point last_refusal_log_{};
  std::uint64_t refusals_unlogged_ = 0;
  tcp::acceptor acceptor_;
  std::size_t next_shard_ = 0;
  AcceptBackoff backoff_;
  asio::steady_timer backoff_timer_;  // the accept loop's sleep after a failed accept
};

}  // namespace carrier::net
