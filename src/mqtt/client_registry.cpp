#include "mqtt/client_registry.hpp"

#include <algorithm>

#include "base/logging.hpp"
#include "mqtt/session.hpp"

namespace carrier::mqtt {

namespace {

constexpr std::uint32_t kNever = 0xFFFFFFFF;

std::shared_ptr<spdlog::logger> log() {
  static auto logger = logging::get("mqtt");
  return logger;
}

}  // namespace

std::string subscription_prefix(std::string_view client_id) {
  std::string out = "mqtt:";
  for (char c : client_id) {
    if (c == '%') {
      out += "%25";
    } else if (c == ':') {
      out += "%3A";
    } else {
      out.push_back(c);
    }
  }
  out.push_back(':');
  return out;
}

std::string subscription_name(std::string_view client_id, std::string_view filter) {
  return subscription_prefix(client_id) + std::string(filter);
}

std::string shared_subscription_name(std::string_view group, std::string_view filter) {
  // The group holds no '/', '+' or '#'; escaping ':' keeps "g:x" + "f" apart from "g" + "x:f".
  std::string out = subscription_prefix(group);
  out.replace(0, 5, "mqtt-share:");
  return out + std::string(filter);
}

ClientRegistry::ClientRegistry(core::ShardId self, core::Executor& executor, core::Broker& broker)
    : self_(self), executor_(executor), broker_(broker) {}

void ClientRegistry::claim(const std::string& client_id, Claimant who, Reply reply) {
  Entry& e = entries_[client_id];
  e.waiting.push_back(Waiting{std::move(who), std::move(reply)});
  if (e.taking_over) return;  // served when the take-over in progress is done
  serve(client_id, e);
}

void ClientRegistry::serve(const std::string& client_id, Entry& e) {
  if (e.waiting.empty()) return;
  if (e.connection != 0) {
    take_over(client_id, e);
    return;
  }
  Waiting w = std::move(e.waiting.front());
  e.waiting.pop_front();
  ++e.generation;  // the away session's expiry and will timers no longer apply
  const bool existed = e.stored.has_value();
  if (e.will) {
    // A clean start ends the old session, which publishes its will now; a resumed one came back
    // within the will delay, so the will is dropped (MQTT 5 3.1.3.2.2).
    if (w.who.clean_start) publish(std::move(e.will));
    e.will = nullptr;
  }
  std::optional<SessionState> state = std::move(e.stored);
  e.stored.reset();
  e.connection = w.who.connection;
  e.shard = w.who.shard;
  e.session = w.who.session;
  w.reply(existed, std::move(state));
  // Another claim queued behind this one takes over the connection just granted.
  if (!e.waiting.empty()) take_over(client_id, e);
}

void ClientRegistry::take_over(const std::string& client_id, Entry& e) {
  e.taking_over = true;
  const bool clean_start = e.waiting.front().who.clean_start;
  const std::uint64_t connection = e.connection;
  log()->debug("client '{}': taking over connection c{}", client_id, connection);
  executor_.post(e.shard, [this, client_id, connection, clean_start, weak = e.session]() {
    auto back = [this, client_id, connection](std::optional<Departure> d) {
      executor_.post(self_, [this, client_id, connection, d = std::move(d)]() mutable {
        released(client_id, connection, std::move(d));
      });
    };
    auto session = weak.lock();
    if (session && !session->is_closed()) {
      session->take_over(clean_start, std::move(back));
    } else {
      back(std::nullopt);
    }
  });
}

void ClientRegistry::released(const std::string& client_id, std::uint64_t connection,
                              std::optional<Departure> departure) {
  auto it = entries_.find(client_id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  e.taking_over = false;
  if (e.connection == connection) {
    if (departure) {
      go_away(client_id, e, std::move(*departure));
    } else {
      e.connection = 0;  // it had gone; its departure (if any) came first
    }
  }
  serve(client_id, e);
}

void ClientRegistry::depart(const std::string& client_id, Departure d) {
  auto it = entries_.find(client_id);
  // A connection that was taken over reports through released(); anything else is stale.
  if (it == entries_.end() || it->second.connection != d.connection) return;
  go_away(client_id, it->second, std::move(d));
  if (!it->second.taking_over) {
    serve(client_id, it->second);
    forget_if_idle(client_id);
  }
}

void ClientRegistry::go_away(const std::string& client_id, Entry& e, Departure d) {
  e.connection = 0;
  e.session.reset();
  ++e.generation;
  if (!d.persistent) {
    e.stored.reset();
    if (d.will) publish(std::move(d.will));
    e.will = nullptr;
    return;
  }
  e.stored = std::move(d.state);
  e.will = std::move(d.will);
  const std::uint64_t generation = e.generation;
  if (d.expiry_seconds != kNever) {
    executor_.post_after(self_, std::uint64_t(d.expiry_seconds) * 1000,
                         [this, client_id, generation] { expire(client_id, generation); });
  }
  if (e.will) {
    const std::uint64_t delay = std::min<std::uint64_t>(d.will_delay_seconds, d.expiry_seconds);
    executor_.post_after(self_, delay * 1000, [this, client_id, generation] { will_due(client_id, generation); });
  }
}

void ClientRegistry::expire(const std::string& client_id, std::uint64_t generation) {
  auto it = entries_.find(client_id);
  if (it == entries_.end() || it->second.generation != generation || it->second.connection != 0) return;
  log()->debug("client '{}': session expired", client_id);
  if (it->second.will) publish(std::move(it->second.will));
  it->second.will = nullptr;
  it->second.stored.reset();
  for (const auto& sub : broker_.named_subscriptions(subscription_prefix(client_id))) {
    broker_.remove_subscription(sub.name, nullptr);
  }
  forget_if_idle(client_id);
}

void ClientRegistry::will_due(const std::string& client_id, std::uint64_t generation) {
  auto it = entries_.find(client_id);
  if (it == entries_.end() || it->second.generation != generation || !it->second.will) return;
  publish(std::move(it->second.will));
  it->second.will = nullptr;
  forget_if_idle(client_id);
}

void ClientRegistry::publish(core::MessagePtr will) {
  if (!will) return;
  broker_.send({std::move(will)}, nullptr);
}

void ClientRegistry::forget_if_idle(const std::string& client_id) {
  auto it = entries_.find(client_id);
  if (it == entries_.end()) return;
  const Entry& e = it->second;
  if (e.connection == 0 && !e.taking_over && e.waiting.empty() && !e.stored && !e.will) entries_.erase(it);
}

}  // namespace carrier::mqtt
