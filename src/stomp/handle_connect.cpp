#include <fmt/format.h>

#include "auth/user_syntax.hpp"
#include "base/logging.hpp"
#include "stomp/connect_request.hpp"
#include "stomp/session.hpp"
#include "stomp/log.hpp"

#ifndef CARRIER_VERSION
#define CARRIER_VERSION "0.0.0"
#endif

namespace carrier::stomp {

void Session::handle_connect(codec::Frame& frame) {
  if (connected_ || authenticating_) {
    fail(Refusal::already_connected, "a second CONNECT on one connection", &frame);
    return;
  }
  auto read = read_connect(frame, HeartBeatPolicy{options_.heartbeat_ms, options_.heartbeat_min_ms});
  if (auto* refused = std::get_if<Refused>(&read)) {
    // The ERROR speaks the version the client asked for, if we speak it; an unsupported version
    // is refused without a receipt-id, as it always was.
    if (auto version = negotiate_version(frame.header("accept-version"))) version_ = *version;
    fail(refused->why, refused->detail, refused->why == Refusal::unsupported_version ? nullptr : &frame);
    return;
  }
  auto& request = std::get<ConnectRequest>(read);
  version_ = request.version;
  client_id_ = std::move(request.client_id);
  const std::uint32_t send_ms = request.send_ms;
  const std::uint32_t receive_ms = request.receive_ms;

  auth::Credentials credentials;
  credentials.username = std::move(request.login);
  credentials.password = std::move(request.passcode);
  credentials.source = peer_address();
  if (!transport().peer_identity().empty()) credentials.identity = transport().peer_identity();
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
    const auto why = refusal_for(outcome.verdict);
    if (outcome.verdict == auth::Verdict::busy) {
      log()->info("{} CONNECT refused: too many logins waiting for a password check", log_prefix());
      fail(why, "too many logins are being checked; try again later");
    } else if (outcome.verdict == auth::Verdict::throttled) {
      net::count_refusal(net::Refusal::login_failures);  // logged by the authenticator, rate-limited
      log()->debug("{} CONNECT refused: too many failed logins from this address", log_prefix());
      fail(why, "too many failed logins from this address; try again later");
    } else {
      // Same answer for an unknown user, a wrong password and missing credentials.
      if (had_credentials) log()->info("{} authentication failed", log_prefix());
      fail(why);
    }
    flush();
    return;
  }
  user_ = std::move(outcome.user);
  permissions_.set_identity(user_, client_id_);
  transport().set_client(client_id_, user_);
  if (!user_.empty()) log()->debug("{} logged in as \"{}\"", log_prefix(), auth::printable_name(user_));
  connected_ = true;
  handshake_.release();
  connect_deadline_.reset();
  limits_.max_frame_bytes = options_.max_frame_bytes;
  codec::Headers headers;
  // 1.0 predates the header, but ActiveMQ sends it too and 1.0 clients ignore it.
  headers.emplace_back("version", version_text(version_));
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
