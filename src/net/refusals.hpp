#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace carrier::net {

// Why the broker said no to a client because a limit was reached (docs/security.md, "Limits"):
// the `reason` label of `carrier_refusals_total` in /metrics.
enum class Refusal : std::uint8_t {
  connections,             // [limits] max_connections: the broker is full
  connections_per_source,  // [limits] max_connections_per_source
  connection_rate,         // [limits] connection_rate_per_source: this address connects too fast
  connecting,              // max_connecting: too many connections have not logged in yet
  login_failures,          // [auth] source_failure_limit: this address failed too many logins
  subscriptions,           // [limits] max_subscriptions_per_connection
  destinations,            // [limits] max_destinations: no new queue, topic or durable subscription
  message_rate,            // [limits] max_messages_per_second: an HTTP send past its connection's rate
};
inline constexpr std::size_t kRefusalKinds = 8;

// "connections_per_source": the metric label.
std::string_view to_string(Refusal refusal);

// Counted broker-wide (relaxed atomics: a refusal is rare next to the message path, and any
// shard may refuse).
void count_refusal(Refusal refusal);
std::array<std::uint64_t, kRefusalKinds> refusal_counts();

}  // namespace carrier::net
