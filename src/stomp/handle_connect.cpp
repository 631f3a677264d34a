#include <charconv>

#include <fmt/format.h>

#include "auth/user_syntax.hpp"
#include "base/logging.hpp"
#include "stomp/session.hpp"

#ifndef CARRIER_VERSION
#define CARRIER_VERSION "0.0.0"
#endif

namespace carrier::stomp {

namespace {

std::shared_ptr<spdlog::logger> log() {
  static auto logger = logging::get("stomp");
  return logger;
}

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
  if (connected_ || authenticating_) {
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
  // As ActiveMQ and RabbitMQ do, the broker follows the client's wishes (no faster than
  // heartbeat_min_ms); a direction the client turns off (0) stays off. heartbeat_ms = 0 turns
  // heart-beats off altogether.
  const std::uint32_t hb = options_.heartbeat_ms;
  const std::uint32_t floor = options_.heartbeat_min_ms;
  const std::uint32_t send_ms = (cy != 0 && hb != 0) ? std::max(cy, floor) : 0;
  const std::uint32_t receive_ms = (cx != 0 && hb != 0) ? std::max(cx, floor) : 0;

  auth::Credentials credentials;
  if (const auto* login = frame.header("login")) credentials.username = *login;
  if (const auto* passcode = frame.header("passcode")) credentials.password = *passcode;
  credentials.source = peer_address();
  const bool had_credentials = (credentials.username && !credentials.username->empty()) ||
                               (credentials.password && !credentials.password->empty());
  auto outcome = authenticator_.authenticate(
      std::move(credentials), shard(),
      session::bind_weak(this, [had_credentials, send_ms, receive_ms](const auto& s, auth::Outcome o) {
        s->on_authenticated(std::move(o), had_credentials, send_ms, receive_ms);
      }));
  if (outcome) {
    on_authenticated(std::move(*outcome), had_credentials, send_ms, receive_ms);
    return;
  }
  // The password is checked on the authenticator's thread; nothing after CONNECT is read
  // until the answer is back.
  authenticating_ = true;
  pause_reading();
}

void Session::on_authenticated(auth::Outcome outcome, bool had_credentials, std::uint32_t send_ms,
                               std::uint32_t receive_ms) {
  authenticating_ = false;
  if (is_closing()) return;
  if (outcome.verdict != auth::Verdict::accepted) {
    if (outcome.verdict == auth::Verdict::busy) {
      log()->info("{} CONNECT refused: too many logins waiting for a password check", log_prefix());
      fail("server busy", "too many logins are being checked; try again later");
    } else if (outcome.verdict == auth::Verdict::throttled) {
      log()->debug("{} CONNECT refused: too many failed logins from this address", log_prefix());
      fail("too many failed logins", "too many failed logins from this address; try again later");
    } else {
      // Same answer for an unknown user, a wrong password and missing credentials.
      if (had_credentials) log()->info("{} authentication failed", log_prefix());
      fail("authentication failed");
    }
    flush();
    return;
  }
  user_ = std::move(outcome.user);
  if (!user_.empty()) log()->debug("{} logged in as \"{}\"", log_prefix(), auth::printable_name(user_));
  connected_ = true;
  handshake_.release();
  connect_deadline_.reset();
  limits_.max_frame_bytes = options_.max_frame_bytes;
  codec::Headers headers;
  // 1.0 predates the header, but ActiveMQ sends it too and 1.0 clients ignore it.
  headers.emplace_back("version", version_ == codec::Version::v1_2   ? "1.2"
                                  : version_ == codec::Version::v1_1 ? "1.1"
                                                                     : "1.0");
  if (version_ != codec::Version::v1_0) {
    // What the broker will do; a direction the client turned off shows heartbeat_ms, which the
    // client's 0 overrides.
    const std::uint32_t hb = options_.heartbeat_ms;
    headers.emplace_back("heart-beat", fmt::format("{},{}", send_ms != 0 ? send_ms : hb, receive_ms != 0 ? receive_ms : hb));
  }
  headers.emplace_back("server", "carrier/" CARRIER_VERSION);
  headers.emplace_back("session", session_id_);
  encode(codec::Command::connected, headers);
  flush();
  if (version_ != codec::Version::v1_0) start_heartbeats(send_ms, receive_ms);
  resume_reading();  // frames pipelined after CONNECT, if it had to wait
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
