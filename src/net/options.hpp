#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace carrier::net {

// Where a protocol listens. `enabled = false` is spelled "off" in flags and TOML.
struct ListenerOptions {
  bool enabled = true;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
};

// What a session does with a delivery it may drop — a non-persistent message for a private
// (non-durable, unshared) topic subscription acknowledged once written: STOMP ack:auto, MQTT
// QoS 0 — when its connection's output is over `max_pending_output_bytes`. Any other delivery
// waits in the core instead (its queue's credit and limits bound it).
enum class SlowConsumerPolicy : std::uint8_t {
  drop,        // the message is skipped for this subscriber and counted
  disconnect,  // the connection is closed (STOMP: ERROR "slow consumer"), as NATS does
};

struct Options {
  unsigned shards = 0;  // 0: one per core
  // Connections (STOMP and MQTT together) that have not completed CONNECT, password check
  // included; a connection past this is refused at once (docs/configuration.md).
  std::size_t max_connecting = 1000;
};

}  // namespace carrier::net
