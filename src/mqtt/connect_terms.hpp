#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "mqtt/codec/packet.hpp"
#include "mqtt/options.hpp"

namespace carrier::mqtt {

// What the broker grants a CONNECT, from the packet and [mqtt] options alone (no session, no
// socket): the client id, session expiry, keep-alive and, on MQTT 5, the client's own limits.
struct ConnectTerms {
  std::string client_id;             // empty: the broker assigns one
  std::uint32_t session_expiry = 0;     // seconds; 0: the session ends with the connection
  std::optional<std::uint32_t> connack_session_expiry;  // MQTT 5: when it is less than asked
  std::uint16_t keep_alive = 0;                         // seconds, as enforced
  std::optional<std::uint16_t> server_keep_alive;       // MQTT 5: when it is not what was asked
  // MQTT 5 only: what the client told us about itself.
  struct ClientLimits {
    std::uint16_t receive_maximum = 65535;
    std::uint32_t max_packet_size = 0;  // 0: none
    std::uint16_t topic_alias_maximum = 0;
    bool request_problem_information = true;
    std::uint16_t outbound_window = 1;  // QoS 1/2 deliveries in flight: ours and its bound
  };
  std::optional<ClientLimits> client_limits;
};

struct ConnectRefusal {
  codec::ReasonCode reason;
  std::string detail;
};

// Refused: an authentication method (none is offered, MQTT 5 4.12), an empty client id without
// a clean session (3.1.1) or at all (3.1), a 3.1 id of more than 23 characters. An empty
// `client_id` in the terms means the broker names the client (and tells an MQTT 5 one).
std::variant<ConnectTerms, ConnectRefusal> negotiate_connect(const codec::Connect& connect, const Options& options);

}  // namespace carrier::mqtt
