#include <charconv>

#include <fmt/format.h>

#include "stomp/session.hpp"

#ifndef CARRIER_VERSION
#define CARRIER_VERSION "0.0.0"
#endif

namespace carrier::stomp {

namespace {

std::optional<codec::Version> negotiate(const std::string* accept) {
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

bool parse_heart_beat(const std::string* text, std::uint32_t& cx, std::uint32_t& cy) {
  cx = cy = 0;
  if (text == nullptr) return true;
  std::string_view s(*text);
  auto comma = s.find(',');
  if (comma == std::string_view::npos) return false;
  auto a = s.substr(0, comma);
  auto b = s.substr(comma + 1);
  auto r1 = std::from_chars(a.data(), a.data() + a.size(), cx);
  auto r2 = std::from_chars(b.data(), b.data() + b.size(), cy);
  return r1.ec == std::errc() && r1.ptr == a.data() + a.size() && r2.ec == std::errc() && r2.ptr == b.data() + b.size();
}

}  // namespace

void Session::handle_connect(codec::Frame& frame) {
  if (connected_) {
    fail("already connected", "a second CONNECT on one connection", &frame);
    return;
  }
  auto version = negotiate(frame.header("accept-version"));
  if (!version) {
    codec::Headers headers{{"message", "unsupported protocol version"}, {"version", "1.0,1.1,1.2"},
                           {"content-type", "text/plain"}};
    encode(codec::Command::error, headers, "Supported protocol versions are 1.0 1.1 1.2\n");
    close_after_flush();
    return;
  }
  version_ = *version;
  if (const auto* client_id = frame.header("client-id")) client_id_ = *client_id;
  std::uint32_t cx = 0, cy = 0;
  if (version_ != codec::Version::v1_0 && !parse_heart_beat(frame.header("heart-beat"), cx, cy)) {
    fail("invalid heart-beat header", "expected heart-beat:<send ms>,<receive ms>", &frame);
    return;
  }
  // The broker offers heartbeat_ms both ways; each direction runs at the slower of the two
  // sides' wishes, and not at all if either side says 0.
  const std::uint32_t hb = options_.heartbeat_ms;
  const std::uint32_t send_ms = (cy != 0 && hb != 0) ? std::max(cy, hb) : 0;
  const std::uint32_t receive_ms = (cx != 0 && hb != 0) ? std::max(cx, hb) : 0;
  connected_ = true;
  codec::Headers headers;
  // 1.0 predates the header, but ActiveMQ sends it too and 1.0 clients ignore it.
  headers.emplace_back("version", version_ == codec::Version::v1_2   ? "1.2"
                                  : version_ == codec::Version::v1_1 ? "1.1"
                                                                     : "1.0");
  if (version_ != codec::Version::v1_0) headers.emplace_back("heart-beat", fmt::format("{},{}", hb, hb));
  headers.emplace_back("server", "carrier/" CARRIER_VERSION);
  headers.emplace_back("session", session_id_);
  encode(codec::Command::connected, headers);
  flush();
  if (version_ != codec::Version::v1_0) start_heartbeats(send_ms, receive_ms);
}

void Session::handle_disconnect(codec::Frame& frame) {
  disconnecting_ = true;
  if (const auto* r = frame.header("receipt")) disconnect_receipt_ = *r;
  if (sends_in_flight_ == 0) {
    if (!disconnect_receipt_.empty()) send_receipt(disconnect_receipt_);
    close_after_flush();
  }
  // else: the last store confirmation calls complete_disconnect().
}

}  // namespace carrier::stomp
