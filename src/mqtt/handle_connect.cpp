// CONNECT: version, client id, will, keep-alive, limits; claiming the client id; resuming or
// starting the session; CONNACK.

#include <fmt/format.h>

#include "auth/user_syntax.hpp"
#include "base/logging.hpp"
#include "mqtt/codec/topic_syntax.hpp"
#include "mqtt/connect_terms.hpp"
#include "mqtt/reason_codes.hpp"
#include "mqtt/service.hpp"
#include "mqtt/session.hpp"
#include "mqtt/topic_map.hpp"
#include "mqtt/log.hpp"

namespace carrier::mqtt {

namespace {

constexpr std::uint32_t kNever = 0xFFFFFFFF;

}  // namespace

void Session::refuse_connect(codec::ReasonCode reason, std::string_view detail) {
  if (is_closing()) return;
  log()->debug("{} CONNECT refused: {} ({})", log_prefix(), codec::to_string(reason), detail);
  codec::Connack ack;
  if (version_ == codec::Version::v5) {
    // Only the codes CONNACK may carry; anything else is "unspecified".
    ack.reason = codec::is_allowed(codec::PacketType::connack, reason, version_) ? reason
                                                                                  : codec::ReasonCode::unspecified_error;
    if (!detail.empty()) ack.properties.reason_string = std::string(detail.substr(0, 200));
    if (ack.properties.reason_string && !codec::is_valid_utf8(*ack.properties.reason_string)) {
      ack.properties.reason_string.reset();
    }
  } else {
    ack.reason = static_cast<codec::ReasonCode>(to_return_code(reason));
  }
  send(ack);
  close_after_flush();
}

void Session::handle_connect(codec::Connect& c) {
  if (connect_received_) {
    disconnect(codec::ReasonCode::protocol_error, "a second CONNECT");
    return;
  }
  connect_received_ = true;
  limits_.max_packet_size = options_.max_packet_size;
  version_ = c.version;
  const bool v5 = version_ == codec::Version::v5;
  const auto& props = c.properties;
  // Set before any answer: a refusing CONNACK must fit it too.
  if (v5) client_max_packet_size_ = props.maximum_packet_size.value_or(0);
  if (const auto why = handshake_.refusal()) {
    // A per-source limit the listener found (logged and counted there): answered now that the
    // version is known. 3.x has no such codes: 3 "server unavailable".
    const bool rate = *why == net::Refusal::connection_rate;
    refuse_connect(!v5 ? codec::ReasonCode::server_unavailable
                   : rate ? codec::ReasonCode::connection_rate_exceeded
                          : codec::ReasonCode::quota_exceeded,
                   rate ? "connecting too fast from this address; try again later"
                        : fmt::format("too many connections ({}); try again later", net::to_string(*why)));
    return;
  }

  auto negotiated = negotiate_connect(c, options_);
  if (auto* refused = std::get_if<ConnectRefusal>(&negotiated)) {
    refuse_connect(refused->reason, refused->detail);
    return;
  }
  auto& terms = std::get<ConnectTerms>(negotiated);
  clean_start_ = c.clean_start;
  client_id_ = std::move(terms.client_id);
  if (client_id_.empty()) {
    client_id_ = "auto-" + broker_.next_message_id().to_string();
    if (v5) assigned_client_id_ = client_id_;  // told in CONNACK
  }
  session_expiry_ = terms.session_expiry;
  connack_session_expiry_ = terms.connack_session_expiry;
  if (const auto& limits = terms.client_limits) {
    client_receive_maximum_ = limits->receive_maximum;
    client_max_packet_size_ = limits->max_packet_size;
    client_topic_alias_maximum_ = limits->topic_alias_maximum;
    request_problem_information_ = limits->request_problem_information;
    outbound_window_ = limits->outbound_window;
  }
  keep_alive_ = terms.keep_alive;
  server_keep_alive_ = terms.server_keep_alive;
  if (c.will) will_ = std::make_unique<codec::Will>(std::move(*c.will));

  log()->debug("{} CONNECT {} client '{}' clean={} keep-alive={} expiry={}", log_prefix(), codec::to_string(version_),
               client_id_, clean_start_, keep_alive_, session_expiry_);

  // Nothing else is read until the CONNACK is out: packets pipelined after CONNECT wait. The
  // password is checked first (on the authenticator's thread when there is one to check).
  pause_reading();
  auth::Credentials credentials{std::move(c.username), std::move(c.password), std::string(peer_address())};
  if (!transport().peer_identity().empty()) credentials.identity = transport().peer_identity();
  const bool had_credentials = (credentials.username && !credentials.username->empty()) ||
                               (credentials.password && !credentials.password->empty());
  auto outcome = service_.authenticator().authenticate(
      std::move(credentials), shard(), session::bind_weak(this, [had_credentials](const auto& s, auth::Outcome o) {
        s->on_authenticated(std::move(o), had_credentials);
      }));
  if (outcome) on_authenticated(std::move(*outcome), had_credentials);
}

void Session::on_authenticated(auth::Outcome outcome, bool had_credentials) {
  if (is_closing()) return;
  switch (outcome.verdict) {
    case auth::Verdict::accepted: break;
    case auth::Verdict::rejected:
      // Wrong name or password (one answer for both); no credentials where they are required
      // is "not authorized" (3.1.1: return code 5).
      if (had_credentials) {
        log()->info("{} authentication failed for client '{}'", log_prefix(), client_id_);
        refuse_connect(codec::ReasonCode::bad_user_name_or_password, "authentication failed");
      } else {
        refuse_connect(codec::ReasonCode::not_authorized, "a user name and password are required");
      }
      return;
    case auth::Verdict::busy:
      log()->info("{} CONNECT refused: too many logins waiting for a password check", log_prefix());
      refuse_connect(version_ == codec::Version::v5 ? codec::ReasonCode::server_busy
                                                    : codec::ReasonCode::server_unavailable,
                     "too many logins are being checked; try again later");
      return;
    case auth::Verdict::throttled:
      net::count_refusal(net::Refusal::login_failures);  // logged by the authenticator, rate-limited
      log()->debug("{} CONNECT refused: too many failed logins from this address", log_prefix());
      refuse_connect(version_ == codec::Version::v5 ? codec::ReasonCode::connection_rate_exceeded
                                                    : codec::ReasonCode::server_unavailable,
                     "too many failed logins from this address; try again later");
      return;
  }
  user_ = std::move(outcome.user);
  if (!user_.empty()) log()->debug("{} logged in as \"{}\"", log_prefix(), auth::printable_name(user_));
  permissions_.set_identity(user_, client_id_);
  transport().set_client(client_id_, user_);
  if (will_ && !permissions_.allows(auth::Right::write, auth::AclKind::topic, to_core_name(will_->topic))) {
    // A will is a publish the broker makes later for this client: checked now, as Mosquitto does.
    will_.reset();
    refuse_connect(codec::ReasonCode::not_authorized, "the ACL does not allow publishing the will's topic");
    return;
  }
  claim_client_id();
}

void Session::claim_client_id() {
  service_.claim(client_id_, self(), clean_start_, session::bind_weak(this, &Session::on_claimed),
                 session::bind_weak(this, [](const auto& s) {
                   // Nothing was taken over; as for a refused login, no will is published.
                   s->will_.reset();
                   s->refuse_connect(codec::ReasonCode::not_authorized, "the client id belongs to another user");
                 }));
}

void Session::on_claimed(bool existed, std::optional<SessionState> state) {
  if (is_closing() || taken_over_) {
    // Gone while the claim was on its way: hand what was found straight back.
    Departure d;
    d.connection = id();
    d.persistent = existed && state.has_value();
    d.expiry_seconds = session_expiry_ == 0 ? kNever : session_expiry_;
    if (state) d.state = std::move(*state);
    service_.begin_departure();
    service_.depart(client_id_, std::move(d));
    return;
  }
  registered_ = true;
  const std::string prefix = subscription_prefix(client_id_);
  auto named = broker_.named_subscriptions(prefix);
  if (clean_start_) {
    // A clean start deletes whatever a previous session left, in the core too.
    if (named.empty()) {
      finish_connect(false, std::nullopt);
      return;
    }
    auto remaining = std::make_shared<std::size_t>(named.size());
    for (const auto& n : named) {
      broker_.remove_subscription(n.name, session::bind_weak(this, [remaining](const auto& s, Status) {
        if (--*remaining == 0) s->finish_connect(false, std::nullopt);
      }));
    }
    return;
  }
  std::vector<SubscriptionChange> rebuilt;
  if (!named.empty()) {
    // Durable subscriptions the registry does not know (no session record: data from before
    // records were kept, or a crash after the subscription was stored, before its record and
    // its SUBACK): rebuilt at QoS 1.
    if (!state) state = SessionState{};
    for (const auto& n : named) {
      std::string filter = n.name.substr(prefix.size());
      if (filter.ends_with(kParentSuffix)) continue;
      const SubscriptionOptions options{.qos = 1};
      if (state->subscriptions.emplace(filter, options).second) rebuilt.push_back({std::move(filter), options});
    }
  }
  const bool present = existed || state.has_value();
  finish_connect(present, std::move(state));
  save_subscriptions(std::move(rebuilt));
}

void Session::finish_connect(bool session_present, std::optional<SessionState> resume) {
  if (is_closing() || taken_over_) return;
  consumer_ = std::make_shared<SessionConsumer>(weak_from_this());
  if (resume) {
    for (auto& [filter, options] : resume->subscriptions) {
      Subscription sub;
      sub.filter = filter;
      sub.options = options;
      sub.named = true;
      sub.durable = !codec::is_shared_filter(filter);
      auto& slot = subscriptions_[filter];
      slot = std::move(sub);
      if (auto st = attach(slot, false, nullptr); !st) {
        log()->warn("{} cannot resume subscription '{}': {}", log_prefix(filter), filter, st.error().to_string());
        subscriptions_.erase(filter);
        continue;
      }
      slot.ready = true;
    }
  }
  std::vector<std::uint16_t> pubrels;
  if (resume) {
    // QoS 2 exchanges the previous connection left half-way continue on this one.
    for (const auto& q : resume->inbound_qos2) {
      if (inbound_qos2_.emplace(q.packet_id, true).second) ++inbound_unacked_;
      if (!q.record.is_nil()) inbound_records_[q.packet_id] = q.record;
    }
    for (const auto& q : resume->outbound_pubrel) {
      inflight_.emplace(q.packet_id, Inflight{core::ConsumerId(0), 0, 2, true});
      if (!q.record.is_nil()) outbound_records_[q.packet_id] = q.record;
      pubrels.push_back(q.packet_id);
    }
  }
  codec::Connack ack;
  ack.session_present = session_present && version_ != codec::Version::v3_1;
  if (version_ == codec::Version::v5) {
    auto& p = ack.properties;
    p.assigned_client_identifier = assigned_client_id_;
    p.server_keep_alive = server_keep_alive_;
    p.session_expiry_interval = connack_session_expiry_;
    if (options_.receive_maximum != 65535) p.receive_maximum = options_.receive_maximum;
    p.topic_alias_maximum = options_.topic_alias_maximum;
    if (options_.max_packet_size < codec::kMaxVariableByteInteger) {
      p.maximum_packet_size = static_cast<std::uint32_t>(options_.max_packet_size);
    }
  }
  send(ack);
  if (is_closing()) return;  // the CONNACK did not fit the client's maximum packet size
  for (auto packet_id : pubrels) send(codec::Pubrel{.packet_id = packet_id});
  connected_ = true;
  handshake_.release();
  log()->debug("{} CONNACK client '{}' session present={} ({} subscription(s) resumed)", log_prefix(), client_id_,
               ack.session_present, subscriptions_.size());
  pump();
  flush();
  resume_reading();
}

}  // namespace carrier::mqtt
