#include "stomp/connect_request.hpp"

#include <algorithm>
#include <charconv>

namespace carrier::stomp {

namespace {

bool parse_u32(std::string_view text, std::uint32_t& out) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

}  // namespace

std::optional<codec::Version> negotiate_version(const std::string* accept) {
  if (accept == nullptr) return codec::Version::v1_0;
  std::optional<codec::Version> best;
  std::string_view rest(*accept);
  while (!rest.empty()) {
    auto comma = rest.find(',');
    auto v = rest.substr(0, comma);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    std::optional<codec::Version> this_one;
    if (v == "1.0") this_one = codec::Version::v1_0;
    if (v == "1.1") this_one = codec::Version::v1_1;
    if (v == "1.2") this_one = codec::Version::v1_2;
    if (this_one && (!best || *this_one > *best)) best = this_one;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return best;
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> parse_heart_beat(const std::string* text) {
  std::pair<std::uint32_t, std::uint32_t> values{0, 0};
  if (text == nullptr) return values;
  std::string_view s(*text);
  auto comma = s.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  if (!parse_u32(s.substr(0, comma), values.first) || !parse_u32(s.substr(comma + 1), values.second)) {
    return std::nullopt;
  }
  return values;
}

std::variant<ConnectRequest, Refused> read_connect(const codec::Frame& frame, const HeartBeatPolicy& policy) {
  ConnectRequest request;
  auto version = negotiate_version(frame.header("accept-version"));
  if (!version) return Refused{Refusal::unsupported_version, "Supported protocol versions are 1.0 1.1 1.2"};
  request.version = *version;
  if (const auto* client_id = frame.header("client-id")) request.client_id = *client_id;
  if (request.version != codec::Version::v1_0) {
    auto wishes = parse_heart_beat(frame.header("heart-beat"));
    if (!wishes) return Refused{Refusal::invalid_heart_beat, "expected heart-beat:<send ms>,<receive ms>"};
    // As ActiveMQ and RabbitMQ do, the broker follows the client's wishes (no faster than the
    // floor); a direction the client turns off (0) stays off. heartbeat_ms = 0 turns heart-beats
    // off altogether.
    const auto [cx, cy] = *wishes;
    request.send_ms = (cy != 0 && policy.heartbeat_ms != 0) ? std::max(cy, policy.floor_ms) : 0;
    request.receive_ms = (cx != 0 && policy.heartbeat_ms != 0) ? std::max(cx, policy.floor_ms) : 0;
  }
  if (const auto* login = frame.header("login")) request.login = *login;
  if (const auto* passcode = frame.header("passcode")) request.passcode = *passcode;
  return request;
}

const char* version_text(codec::Version version) noexcept {
  switch (version) {
    case codec::Version::v1_0: return "1.0";
    case codec::Version::v1_1: return "1.1";
    case codec::Version::v1_2: return "1.2";
  }
  return "1.0";
}

}  // namespace carrier::stomp
