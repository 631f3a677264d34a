#include "mqtt/connect_terms.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace carrier::mqtt {

namespace {

constexpr std::uint32_t kNoExpiry = 0xFFFFFFFF;

// Characters of a string the decoder has checked as UTF-8: the bytes that start one.
std::size_t code_points(std::string_view utf8) {
  std::size_t n = 0;
  for (char c : utf8) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

}  // namespace

std::variant<ConnectTerms, ConnectRefusal> negotiate_connect(const codec::Connect& c, const Options& options) {
  const bool v5 = c.version == codec::Version::v5;
  const auto& props = c.properties;
  if (v5 && props.authentication_method) {
    return ConnectRefusal{codec::ReasonCode::bad_authentication_method,
                          fmt::format("authentication method '{}' is not supported", *props.authentication_method)};
  }
  ConnectTerms terms;
  terms.client_id = c.client_id;
  if (terms.client_id.empty()) {
    // 3.1 requires an id; 3.1.1 allows none only with a clean session; 5.0 assigns one.
    if (c.version == codec::Version::v3_1 || (c.version == codec::Version::v3_1_1 && !c.clean_start)) {
      return ConnectRefusal{codec::ReasonCode::client_identifier_not_valid,
                            "an empty client identifier needs a clean session"};
    }
  } else if (c.version == codec::Version::v3_1 && code_points(terms.client_id) > 23) {
    // MQTT 3.1 (3.1, client identifier): 1 to 23 characters, "identifier rejected" beyond.
    return ConnectRefusal{codec::ReasonCode::client_identifier_not_valid,
                          "a 3.1 client identifier has at most 23 characters"};
  }
  if (v5) {
    const std::uint32_t asked = props.session_expiry_interval.value_or(0);
    terms.session_expiry = std::min(asked, options.session_expiry_max);
    if (terms.session_expiry != asked) terms.connack_session_expiry = terms.session_expiry;
    ConnectTerms::ClientLimits limits;
    limits.receive_maximum = props.receive_maximum.value_or(65535);
    limits.max_packet_size = props.maximum_packet_size.value_or(0);
    limits.topic_alias_maximum = props.topic_alias_maximum.value_or(0);
    limits.request_problem_information = props.request_problem_information.value_or(1) == 1;
    limits.outbound_window = std::max<std::uint16_t>(1, std::min(limits.receive_maximum, options.max_inflight));
    terms.client_limits = limits;
  } else {
    terms.session_expiry = c.clean_start ? 0 : std::min(kNoExpiry, options.session_expiry_max);
  }
  terms.keep_alive = c.keep_alive;
  if (v5 && options.max_keep_alive != 0 && (terms.keep_alive == 0 || terms.keep_alive > options.max_keep_alive)) {
    terms.keep_alive = options.max_keep_alive;
    terms.server_keep_alive = terms.keep_alive;
  }
  return terms;
}

}  // namespace carrier::mqtt
