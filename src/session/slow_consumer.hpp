#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "net/options.hpp"
#include "net/transport.hpp"

namespace spdlog {
class logger;
}

namespace carrier::session {

// The slow-consumer policy (`slow_consumer` in [stomp] and [mqtt]) for deliveries a session may
// lose (STOMP ack:auto private topic subscriptions, MQTT QoS 0 to a plain subscription) when they
// come while its transport's output is over its bound: drop them, counted, or disconnect the
// client. It logs as it acts: a warning at the first drop or at the disconnect, the count when
// the connection closes. `what` names the deliveries in those lines ("topic messages").
// Runs on: the session's shard.
class SlowConsumer {
 public:
  // How long the goodbye of a disconnected slow consumer may take: the client is not reading.
  static constexpr std::chrono::seconds kGoodbyeGrace{1};

  SlowConsumer(net::SlowConsumerPolicy policy, const char* what) : policy_(policy), what_(what) {}

  // A droppable delivery came past the bound. true: drop it (the first drop is logged, naming
  // `subscription` if given); false: disconnect (logged) — the caller says goodbye in its
  // protocol and calls close_after_flush(kGoodbyeGrace).
  bool drop(spdlog::logger& log, const net::Transport& transport, std::string_view subscription = {});
  // At close: the count, if anything was dropped.
  void log_dropped(spdlog::logger& log, const net::Transport& transport) const;
  std::uint64_t dropped() const { return dropped_; }

 private:
  net::SlowConsumerPolicy policy_;
  const char* what_;  // a literal
  std::uint64_t dropped_ = 0;
};

}  // namespace carrier::session
