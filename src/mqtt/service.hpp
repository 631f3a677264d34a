#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "auth/authenticator.hpp"
#include "core/broker.hpp"
#include "mqtt/options.hpp"
#include "mqtt/session_state.hpp"
#include "net/asio.hpp"
#include "net/handshake_limit.hpp"
#include "net/transport.hpp"

namespace carrier::net {
class Connection;
}

namespace carrier::mqtt {

class ClientRegistry;
class Session;

// The MQTT side of a running broker: makes a Session per accepted connection and owns the
// client registry, split by client id across shards (each client id belongs to the shard
// model::QueueKey::client(id).owner_shard()), through which a CONNECT takes its client id over from
// another connection and finds the session state that connection left.
// Runs on: constructed by the main thread before the shards run, destroyed after they stop;
// accept() on the connection's shard; claim() and depart() on any shard (they post to the
// owning one).
class Service {
 public:
  // `connecting`: the broker-wide cap on connections not yet logged in (shared with STOMP).
  Service(core::Executor& executor, std::vector<core::Broker*> brokers, Options options,
          auth::Authenticator& authenticator, net::HandshakeLimit& connecting);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  void accept(std::shared_ptr<net::Connection> connection);
  // A session on a transport another listener's connection became (a WebSocket), begun; null
  // (and the transport closed) past the handshake limit. The caller holds what it returns.
  std::shared_ptr<net::TransportHandler> accept(std::shared_ptr<net::Transport> transport, model::ShardId shard);
  const Options& options() const { return options_; }
  // The broker-wide hook that checks CONNECT's user name and password (shared with STOMP).
  auth::Authenticator& authenticator() { return authenticator_; }

  // `done(existed, state)` runs on `session`'s shard once the client id is this session's: any
  // other connection with it has been told and detached. `existed`: a session was there to
  // resume; `state`: what the registry kept of it (nullopt when it knows nothing, e.g. after a
  // restart; the core's named subscriptions may still say more).
  using ClaimDone = std::function<void(bool existed, std::optional<SessionState> state)>;
  // `refused` (on the session's shard) instead, when the id belongs to another user.
  void claim(const std::string& client_id, const std::shared_ptr<Session>& session, bool clean_start,
             ClaimDone done, std::function<void()> refused);
  // A connection the registry knew as the client's is going: begin_departure() when it starts
  // detaching, depart() once it has. Between the two the broker's shutdown waits (idle()), so
  // the session's records and will reach the store before it closes.
  void begin_departure() { ++departing_; }
  // A departure handed to a take-over instead of depart().
  void end_departure() { --departing_; }
  void depart(const std::string& client_id, Departure departure);
  bool idle() const { return departing_.load() == 0; }
  // Some of a persistent session's subscriptions changed; `done` on `home` once recorded.
  void update(const std::string& client_id, std::uint64_t connection, std::vector<SubscriptionChange> subscriptions,
              model::ShardId home,
              std::function<void()> done);

  // Start-up: takes the MQTT records among the recovered messages (true), before the shards
  // run. `queue_key` is the store key (QueueKey::queue("$mqtt-sessions").str()).
  bool recover(std::string_view queue_key, const model::Message& message);
  // On each shard once it runs: re-arms the recovered sessions' expiry and wills.
  void start(model::ShardId shard);

 private:
  model::ShardId owner(const std::string& client_id) const;
  // A slot among the connections logging in; none (logged, rate-limited) past the limit.
  // `refused`: the listener's per-source refusal, answered after CONNECT (a slot of refusing_).
  net::HandshakeSlot acquire_handshake(const std::optional<net::Refusal>& refused);

  core::Executor& executor_;
  std::vector<core::Broker*> brokers_;
  Options options_;
  auth::Authenticator& authenticator_;
  net::HandshakeLimit& connecting_;
  // Connections refused by a per-source limit waiting for their CONNECT, to answer it.
  net::HandshakeLimit refusing_{64};
  std::vector<std::unique_ptr<ClientRegistry>> registries_;  // index = shard
  std::atomic<std::size_t> departing_{0};
  // Client ids with a session record at start-up: the only possible holders of `$share` groups.
  std::unordered_set<std::string> recovered_sessions_;
};

}  // namespace carrier::mqtt
