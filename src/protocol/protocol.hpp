#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/executor.hpp"
#include "model/message.hpp"
#include "net/asio.hpp"
#include "net/options.hpp"
#include "net/source_limit.hpp"
#include "net/transport.hpp"

namespace carrier::auth {
class Authenticator;
}
namespace carrier::core {
class Broker;
}
namespace carrier::net {
class Connection;
class HandshakeLimit;
}

namespace carrier::protocol {

class Protocol;
class ProtocolSet;

// What `carrier serve` lends every protocol it runs; all of it outlives the protocol.
struct Context {
  core::Executor& executor;            // the shards
  std::vector<core::Broker*> brokers;  // index = shard
  auth::Authenticator& authenticator;  // the CONNECT-time hook every protocol shares
  net::HandshakeLimit& connecting;     // the broker-wide cap on connections not yet logged in
  // Every protocol the broker runs, to start one's session on another's connection (STOMP and
  // MQTT over the HTTP listener's WebSockets). Null in tests that run one protocol alone.
  const ProtocolSet* protocols = nullptr;
};

// One protocol as a running broker sees it: a name, where it listens, and the hooks `serve`
// calls at each step of the broker's life (ProtocolSet calls them; protocol_set.hpp says when).
// A protocol folder provides one through a `make_protocol` function; it owns whatever state the
// protocol keeps across connections (MQTT's client registries).
// Runs on: made, recovered and destroyed by the main thread; start() and start_session() on a
// shard; idle() from the main thread while the shards run.
class Protocol {
 public:
  virtual ~Protocol() = default;
  Protocol(const Protocol&) = delete;
  Protocol& operator=(const Protocol&) = delete;

  // "stomp": the listener's name in its errors and log lines.
  const std::string& name() const { return name_; }
  const net::ListenerOptions& listener() const { return listener_; }

  // Runs on the connection's shard: makes its session and starts it (or refuses it, e.g. past
  // the handshake limit). The connection (TCP, or TLS from a TLS listener) is not started yet.
  virtual void start_session(std::shared_ptr<net::Connection> connection) = 0;
  // The plain listener's accept, on `shard`: a TCP net::Connection handed to start_session. A
  // protocol that runs its own connections (federation's links, all on one shard) takes the
  // socket itself. (protocol_set.cpp)
  // `admission`: the listener's per-source count of the connection (the connection holds it)
  // or its refusal, which the session answers in its protocol's words.
  virtual void accept(net::tcp::socket socket, model::ShardId shard, net::Admission admission);
  // Runs on `shard`, the transport's: makes and begins a session of this protocol on a byte
  // stream another listener's connection became (a WebSocket the HTTP listener upgraded, which
  // is already reading), and returns it for the transport to hold while it runs. Null: this
  // protocol runs only on its own listener.
  virtual std::shared_ptr<net::TransportHandler> start_session(std::shared_ptr<net::Transport> transport,
                                                               model::ShardId shard) {
    return nullptr;
  }
  // The largest frame or packet the protocol takes: the bound on a WebSocket frame carrying it.
  virtual std::size_t max_frame_bytes() const { return 0; }
  // Start-up, before the shards run: takes a recovered record of one of the protocol's own
  // reserved queues (true). `queue_key` is the store key ("queue:$mqtt-sessions"); what no
  // protocol takes goes to the core.
  virtual bool recover(std::string_view queue_key, const model::Message& message) { return false; }
  // On each shard once it runs, before any listener accepts.
  virtual void start(model::ShardId shard) {}
  // Shutdown, once every connection was told to go: false while the protocol still has
  // something to hand to the store (MQTT's departing sessions and wills). The store closes
  // when every protocol is idle, or after the grace period.
  virtual bool idle() const { return true; }

 protected:
  Protocol(std::string name, net::ListenerOptions listener) : name_(std::move(name)), listener_(std::move(listener)) {}

 private:
  std::string name_;
  net::ListenerOptions listener_;
};

}  // namespace carrier::protocol
