#include "mqtt/service.hpp"

#include <chrono>

#include "base/logging.hpp"
#include "model/queue_key.hpp"
#include "mqtt/client_registry.hpp"
#include "mqtt/session_record.hpp"
#include "mqtt/session.hpp"
#include "net/connection.hpp"
#include "mqtt/log.hpp"

namespace carrier::mqtt {

Service::Service(core::Executor& executor, std::vector<core::Broker*> brokers, Options options,
                 auth::Authenticator& authenticator, net::HandshakeLimit& connecting)
    : executor_(executor),
      brokers_(std::move(brokers)),
      options_(std::move(options)),
      authenticator_(authenticator),
      connecting_(connecting) {
  for (std::size_t i = 0; i < brokers_.size(); ++i) {
    registries_.push_back(
        std::make_unique<ClientRegistry>(model::ShardId(static_cast<std::uint32_t>(i)), executor_, *brokers_[i]));
  }
}

Service::~Service() = default;

void Service::accept(std::shared_ptr<net::Connection> connection) {
  const model::ShardId shard = connection->shard();
  auto handshake = acquire_handshake(connection->admission().refusal());
  if (!handshake.held()) {
    connection->close();
    return;
  }
  auto session = std::make_shared<Session>(connection, *brokers_[shard.value()], *this, options_, std::move(handshake));
  connection->start(session);
  session->start_watchdog();
}

std::shared_ptr<net::TransportHandler> Service::accept(std::shared_ptr<net::Transport> transport, model::ShardId shard) {
  auto handshake = acquire_handshake(std::nullopt);  // its HTTP connection was admitted
  if (!handshake.held()) {
    transport->close();
    return nullptr;
  }
  auto session = std::make_shared<Session>(std::move(transport), *brokers_[shard.value()], *this, options_,
                                           std::move(handshake));
  session->start_watchdog();
  return session;
}

net::HandshakeSlot Service::acquire_handshake(const std::optional<net::Refusal>& refused) {
  if (refused) {
    // Past a per-source limit: the CONNACK saying so needs the client's version, so the session
    // reads CONNECT first. Such sessions are few at a time (refusing_), the rest closed at once.
    if (refusing_.in_use() >= refusing_.max()) return {};  // (not counted again: the listener did)
    auto slot = refusing_.try_acquire();
    if (slot.held()) slot.set_refusal(*refused);
    return slot;
  }
  auto handshake = connecting_.try_acquire();
  if (!handshake.held()) {
    // Too many connections are logging in at once. Before CONNECT the client's MQTT version is
    // unknown, so there is no CONNACK it could read for sure: the connection is closed at once.
    thread_local std::chrono::steady_clock::time_point last_warning;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_warning > std::chrono::seconds(10)) {  // a flood must not flood the log too
      last_warning = now;
      log()->warn("connection refused: {} connections have not completed CONNECT", connecting_.max());
    }
  }
  return handshake;
}

model::ShardId Service::owner(const std::string& client_id) const {
  return model::QueueKey::client(client_id).owner_shard(registries_.size());
}

void Service::claim(const std::string& client_id, const std::shared_ptr<Session>& session, bool clean_start,
                    ClaimDone done, std::function<void()> refused) {
  const model::ShardId home = session->shard();
  ClientRegistry::Claimant who{home, session, session->id(), clean_start, session->session_expiry(),
                              session->protocol_level(), session->user()};
  auto* registry = registries_[owner(client_id).value()].get();
  executor_.post(owner(client_id), [this, registry, client_id, who = std::move(who), home, done = std::move(done),
                                    refused = std::move(refused)]() mutable {
    registry->claim(
        client_id, std::move(who),
        [this, home, done = std::move(done)](bool existed, std::optional<SessionState> state) mutable {
          executor_.post(home, [done = std::move(done), existed, state = std::move(state)]() mutable {
            done(existed, std::move(state));
          });
        },
        [this, home, refused = std::move(refused)]() mutable { executor_.post(home, std::move(refused)); });
  });
}

void Service::depart(const std::string& client_id, Departure departure) {
  auto* registry = registries_[owner(client_id).value()].get();
  executor_.post(owner(client_id), [this, registry, client_id, d = std::move(departure)]() mutable {
    registry->depart(client_id, std::move(d));
    --departing_;
  });
}

void Service::update(const std::string& client_id, std::uint64_t connection,
                     std::vector<SubscriptionChange> subscriptions, model::ShardId home,
                     std::function<void()> done) {
  auto* registry = registries_[owner(client_id).value()].get();
  executor_.post(owner(client_id), [this, registry, client_id, connection, subs = std::move(subscriptions), home,
                                    done = std::move(done)]() mutable {
    registry->update(client_id, connection, std::move(subs), [this, home, done = std::move(done)]() mutable {
      if (done) executor_.post(home, std::move(done));
    });
  });
}

bool Service::recover(std::string_view queue_key, const model::Message& m) {
  const auto key = model::QueueKey::parse(queue_key);
  if (!key || key->kind() != model::QueueKind::queue) return false;
  const std::string_view name = key->name();
  if (name == kSessionsQueue) {
    if (auto rec = decode_session(m)) {
      recovered_sessions_.insert(rec->client_id);
      const auto owner_index = owner(rec->client_id).value();
      registries_[owner_index]->restore_session(std::move(*rec), m.id);
    } else {
      registries_[0]->restore_bad(std::string(name), m.id);
    }
    return true;
  }
  if (name == kSubscriptionsQueue) {
    if (auto rec = decode_subscription(m)) {
      registries_[owner(rec->client_id).value()]->restore_subscription(std::move(*rec), m.id);
    } else {
      registries_[0]->restore_bad(std::string(name), m.id);
    }
    return true;
  }
  if (name == kWillsQueue) {
    if (auto rec = decode_will(m)) {
      registries_[owner(rec->client_id).value()]->restore_will(std::move(*rec));
    } else {
      registries_[0]->restore_bad(std::string(name), m.id);
    }
    return true;
  }
  if (name == kQos2Queue) {
    if (auto rec = decode_qos2(m)) {
      registries_[owner(rec->client_id).value()]->restore_qos2(*rec, m.id);
    } else {
      registries_[0]->restore_bad(std::string(name), m.id);
    }
    return true;
  }
  return false;
}

void Service::start(model::ShardId shard) {
  registries_[shard.value()]->start();
  if (shard.value() != 0) return;
  // A `$share` group held by a client without a session (its end was not recorded in full)
  // would be kept forever: let go of it here.
  auto& broker = *brokers_[0];
  for (const auto& group : broker.named_subscriptions("mqtt-share:")) {
    for (const auto& holder : group.holders) {
      if (recovered_sessions_.contains(holder)) continue;
      log()->info("shared subscription '{}': client '{}' has no session any more", group.name, holder);
      broker.release_holder(group.name, holder, nullptr);
    }
  }
}

}  // namespace carrier::mqtt
