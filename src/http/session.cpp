#include "http/session.hpp"

#include <fmt/format.h>

#include <boost/beast/http/error.hpp>

#include "auth/user_syntax.hpp"
#include "base/logging.hpp"
#include "http/codec/body_encoding.hpp"
#include "http/codec/problem.hpp"
#include "http/log.hpp"

namespace carrier::http {

namespace bhttp = boost::beast::http;

namespace {

// Bytes a connection may pipeline behind a request being handled before it is no longer read.
std::size_t backlog_bound(const Options& o) { return o.max_header_bytes + o.max_body_bytes; }

// "Basic dXNlcjpwYXNz" -> user and password. nullopt: not Basic, or not decodable.
std::optional<auth::Credentials> basic_credentials(std::string_view value) {
  if (value.size() < 6 || !boost::beast::iequals(boost::beast::string_view(value.data(), 6), "Basic ")) return std::nullopt;
  auto text = value.substr(6);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  auto decoded = codec::base64_decode(text);
  if (!decoded) return std::nullopt;
  const auto colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  auth::Credentials c;
  c.username = decoded->substr(0, colon);
  c.password = decoded->substr(colon + 1);
  return c;
}

// "Bearer abc" -> "abc" (RFC 6750 2.1). nullopt: not a Bearer header.
std::optional<std::string_view> bearer_token(std::string_view value) {
  if (value.size() < 7 || !boost::beast::iequals(boost::beast::string_view(value.data(), 7), "Bearer ")) return std::nullopt;
  auto token = value.substr(7);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return token;
}

constexpr std::string_view kInvalidToken = "WWW-Authenticate: Bearer realm=\"carrier\", error=\"invalid_token\"\r\n";

}  // namespace

void PollConsumer::deliver(core::ConsumerId id, std::vector<core::Delivery> batch) {
  auto s = session_.lock();
  if (s && s->awaits_reply(id)) {
    s->deliver_reply(id, std::move(batch));
    return;
  }
  if (s && s->streams_events()) {
    s->deliver_events(id, std::move(batch));
    return;
  }
  if (s && s->deliver_poll(id, batch)) return;
  if (broker_.leases().holds(id)) {
    std::vector<std::uint64_t> tags;
    for (const auto& d : batch) tags.push_back(d.tag);
    broker_.nack(id, std::move(tags), nullptr);
  }
}

Session::Session(std::shared_ptr<net::Transport> transport, core::Broker& broker, const Options& options,
                 auth::Authenticator& authenticator, net::HandshakeSlot handshake,
                 const protocol::ProtocolSet* protocols)
    : session::ProtocolSession(std::move(transport)),
      broker_(broker),
      options_(options),
      authenticator_(authenticator),
      permissions_(authenticator.access(), shard()),
      handshake_(std::move(handshake)),
      protocols_(protocols),
      phase_since_(Clock::now()),
      deadline_(executor()),
      slow_consumer_(options.slow_consumer, "topic messages") {}

Session::~Session() = default;

void Session::begin() {
  if (const auto why = handshake_.refusal(); why && *why != net::Refusal::connecting) {
    // A per-source limit (the listener logged and counted it). One address's own excess is
    // 429; the broker being full is 503.
    keep_alive_ = false;
    if (*why == net::Refusal::connections) {
      problem(503, "the broker has as many connections as it takes; try again later", "Retry-After: 1\r\n");
    } else {
      problem(429, *why == net::Refusal::connection_rate
                       ? "connecting too fast from this address; try again later"
                       : "too many connections from this address; try again later",
              "Retry-After: 1\r\n");
    }
    return;
  }
  if (!handshake_.held()) {
    thread_local Clock::time_point last_warning;
    const auto now = Clock::now();
    if (now - last_warning > std::chrono::seconds(10)) {
      last_warning = now;
      log()->warn("{} refused: too many connections have not completed a request", log_prefix());
    }
    keep_alive_ = false;
    problem(503, "too many connections are connecting; try again later", "Retry-After: 1\r\n");
    return;
  }
  // The first request must come as fast as any request's headers: a connection that sends
  // nothing holds a handshake slot no longer than one that trickles.
  arm_deadline(phase_since_ + std::chrono::milliseconds(options_.header_timeout_ms));
}

// --- input -----------------------------------------------------------------------------------

void Session::on_data(std::string& buffer) {
  if (is_closing()) {
    buffer.clear();
    return;
  }
  if (phase_ == Phase::handling || !backlog_.empty()) {
    // In order behind the request being handled (or those already waiting).
    backlog_.append(buffer);
    buffer.clear();
    if (phase_ == Phase::handling) {
      // Not read further past a bound; still read below it, so a client that goes away is seen.
      if (backlog_.size() > backlog_bound(options_)) pause_reading();
      return;
    }
    parse(backlog_);
  } else {
    parse(buffer);
    if (phase_ == Phase::handling && !buffer.empty()) {
      backlog_.append(buffer);
      buffer.clear();
    }
  }
  flush();
}

void Session::start_request() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(options_.max_header_bytes, UINT32_MAX)));
  parser_->body_limit(options_.max_body_bytes);
  parser_->eager(true);
  continue_sent_ = false;
  phase_ = Phase::header;
  phase_since_ = Clock::now();
  arm_deadline(phase_since_ + std::chrono::milliseconds(options_.header_timeout_ms));
}

void Session::parse(std::string& input) {
  parsing_ = true;
  std::size_t offset = 0;
  while (!is_closing() && phase_ != Phase::handling && offset < input.size()) {
    if (!parser_) start_request();
    boost::system::error_code ec;
    const std::size_t n = parser_->put(net::asio::buffer(input.data() + offset, input.size() - offset), ec);
    offset += n;
    if (ec && ec != bhttp::error::need_more) {
      parse_failed(ec);
      break;
    }
    if (parser_->is_done()) {
      current_.emplace(parser_->release());
      parser_.reset();
      handshake_.release();
      phase_ = Phase::handling;
      ++request_seq_;
      handle();
      continue;
    }
    if (parser_->is_header_done() && phase_ == Phase::header) {
      phase_ = Phase::body;
      const auto expect = parser_->get()[bhttp::field::expect];
      if (!continue_sent_ && boost::beast::iequals(expect, "100-continue")) {
        // curl waits for this before sending a large body.
        continue_sent_ = true;
        out().append("HTTP/1.1 100 Continue\r\n\r\n");
      }
    }
    if (n == 0 || ec) break;
  }
  input.erase(0, offset);
  if (is_closing()) input.clear();
  parsing_ = false;
}

void Session::parse_failed(const boost::system::error_code& ec) {
  keep_alive_ = false;  // the stream can no longer be framed
  phase_ = Phase::handling;
  ++request_seq_;
  handshake_.release();
  if (ec == bhttp::error::header_limit) {
    problem(431, fmt::format("the request line and headers exceed {} bytes (http.max_header_bytes)",
                             options_.max_header_bytes));
  } else if (ec == bhttp::error::body_limit) {
    problem(413, fmt::format("the body exceeds {} bytes (http.max_body_bytes)", options_.max_body_bytes));
  } else {
    problem(400, fmt::format("malformed request: {}", ec.message()));
  }
}

// --- handling --------------------------------------------------------------------------------

void Session::handle() {
  const Request& req = *current_;
  keep_alive_ = keep_alive_ && req.keep_alive() && !shutting_down_;
  if (wants_websocket()) {
    // STOMP and MQTT log in with their own CONNECT, over the WebSocket (browsers cannot set
    // an Authorization header on one).
    upgrade_websocket();
    return;
  }
  if (const auto te = req[bhttp::field::transfer_encoding]; !te.empty() && !boost::beast::iequals(te, "chunked")) {
    // The parser took it as chunked; a coding under that (gzip, ...) is not undone here.
    problem(501, "Transfer-Encoding other than chunked is not supported");
    return;
  }
  // An orchestrator's probes carry no credentials (docs/admin.md), nor does a browser loading
  // the console's login page (docs/console.md).
  const auto path = codec::split_target(view(req.target())).path;
  if (!authenticator_.has_users() || is_health_probe(path) || is_console_path(path)) {
    route();
    return;
  }
  const auto header = view(req[bhttp::field::authorization]);
  if (has_authorized_ && header == authorized_) {
    route();
    return;
  }
  const std::uint64_t seq = request_seq_;
  auto weak = std::weak_ptr<Session>(shared_from_this());
  auto done = [weak, seq](auth::Outcome o) {
    if (auto s = weak.lock()) s->on_authenticated(std::move(o), seq);
  };
  if (auto token = bearer_token(header)) {
    // Not remembered like Basic credentials: a token may expire while the connection lasts.
    if (auto outcome = authenticator_.authenticate_token(*token, peer_address(), shard(), done)) {
      on_authenticated(std::move(*outcome), seq);
    }
    return;
  }
  auth::Credentials credentials;
  if (!header.empty()) {
    auto basic = basic_credentials(header);
    if (!basic) {
      problem(401, "the Authorization header is not HTTP Basic credentials",
              "WWW-Authenticate: Basic realm=\"carrier\"\r\n");
      return;
    }
    credentials = std::move(*basic);
  }
  credentials.source = std::string(peer_address());
  if (!transport().peer_identity().empty()) credentials.identity = transport().peer_identity();
  auto outcome = authenticator_.authenticate(std::move(credentials), shard(), std::move(done));
  if (outcome) on_authenticated(std::move(*outcome), seq);
  // else: the password is checked on the authenticator's thread; the request waits.
}

void Session::on_authenticated(auth::Outcome outcome, std::uint64_t seq) {
  if (is_closing() || seq != request_seq_ || !current_) return;
  switch (outcome.verdict) {
    case auth::Verdict::accepted: {
      const auto header = view((*current_)[bhttp::field::authorization]);
      if (!bearer_token(header)) {
        authorized_.assign(header.data(), header.size());
        has_authorized_ = true;
      }
      if (outcome.user != user_ && !outcome.user.empty()) {
        log()->debug("{} authenticated as \"{}\"", log_prefix(), auth::printable_name(outcome.user));
      }
      if (outcome.user != user_) permissions_.set_identity(outcome.user, "");
      user_ = std::move(outcome.user);
      transport().set_client({}, user_);
      route();
      break;
    }
    case auth::Verdict::rejected:
      has_authorized_ = false;
      if (bearer_token(view((*current_)[bhttp::field::authorization]))) {
        problem(401, "the bearer token is not valid (unknown or expired)", kInvalidToken);
      } else {
        problem(401, "authentication failed", "WWW-Authenticate: Basic realm=\"carrier\"\r\n");
      }
      break;
    case auth::Verdict::throttled:
      net::count_refusal(net::Refusal::login_failures);  // logged by the authenticator, rate-limited
      problem(429, "too many failed logins from this address; try again later", "Retry-After: 5\r\n");
      break;
    case auth::Verdict::busy:
      problem(503, "too many logins are being checked; try again later", "Retry-After: 1\r\n");
      break;
  }
  flush();
}

// --- output ----------------------------------------------------------------------------------

void Session::respond(int status, std::string_view content_type, std::string_view body,
                      std::string_view extra_headers) {
  if (is_closing()) return;
  std::string& o = out();
  const bool close = !keep_alive_ || shutting_down_;
  const bool head = current_ && current_->method() == bhttp::verb::head;
  fmt::format_to(std::back_inserter(o), "HTTP/1.1 {} {}\r\n", status, codec::reason_phrase(status));
  if (!content_type.empty()) fmt::format_to(std::back_inserter(o), "Content-Type: {}\r\n", content_type);
  if (status != 204 && status != 304) fmt::format_to(std::back_inserter(o), "Content-Length: {}\r\n", body.size());
  o.append(extra_headers);
  if (close) o.append("Connection: close\r\n");
  o.append("\r\n");
  if (status != 204 && status != 304 && !head) o.append(body);
  flush();
  if (close) close_after_flush();
  finish_request();
}

bool Session::allowed(auth::Right right, const model::Destination& destination, std::string_view action) {
  if (permissions_.allows(right, destination)) return true;
  const std::string what = (destination.kind == model::DestinationKind::topic ? "topic " : "queue ") + destination.name;
  problem(403, auth::access_denied_detail(user_, action, what));
  return false;
}

void Session::problem(int status, std::string_view detail, std::string_view extra_headers) {
  if (status >= 500) {
    log()->info("{} {} {}", log_prefix(), status, detail);
  } else {
    log()->debug("{} {} {}", log_prefix(), status, detail);
  }
  respond(status, codec::kProblemMediaType, codec::problem_json(status, detail), extra_headers);
}

void Session::problem(const Error& error) {
  const int status = codec::status_for(error.code);
  problem(status, error.detail.empty() ? to_string(error.code) : error.detail,
          status == 429 || status == 503 ? "Retry-After: 1\r\n" : "");
}

void Session::finish_request() {
  current_.reset();
  request_timer_.reset();
  ++request_seq_;
  phase_ = Phase::idle;
  phase_since_ = Clock::now();
  if (is_closing() || parsing_) return;  // parse() goes on with the next request itself
  if (!backlog_.empty()) {
    parse(backlog_);
    flush();
  }
  if (phase_ != Phase::handling && is_paused()) resume_reading();
}

void Session::on_write_started() {
  event_acks_.on_write_started();
  if (staged_.empty()) return;
  writing_.insert(writing_.end(), std::make_move_iterator(staged_.begin()), std::make_move_iterator(staged_.end()));
  staged_.clear();
}

void Session::on_write_done() {
  // ack=auto: the messages of a poll's response count as taken once it is written. The ack is
  // posted before the detach, so the queue never sees them unacked without a consumer.
  for (auto& s : writing_) {
    if (s.leased) continue;  // the lease table's now
    if (!s.tags.empty()) broker_.ack(s.consumer, std::move(s.tags), nullptr);
    broker_.unsubscribe(s.consumer, nullptr);
  }
  writing_.clear();
  if (events_) {
    event_acks_.on_write_done(
        [this](core::ConsumerId consumer, session::WrittenAcks::Tags tags) { confirm_written(consumer, std::move(tags)); });
    if (!events_->held.empty()) drain_events();
  }
}

// --- timeouts and the end ---------------------------------------------------------------------

void Session::arm_deadline(Clock::time_point at) {
  // A later deadline needs nothing: the armed wait fires early and re-arms for the real one.
  if (at >= deadline_at_) return;
  deadline_at_ = at;
  deadline_.expires_at(at);
  auto weak = std::weak_ptr<Session>(shared_from_this());
  deadline_.async_wait([weak](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto s = weak.lock()) s->on_deadline();
  });
}

void Session::on_deadline() {
  deadline_at_ = Clock::time_point::max();
  if (is_closing()) return;
  using std::chrono::milliseconds;
  const auto now = Clock::now();
  Clock::time_point due;
  switch (phase_) {
    case Phase::idle:
      due = phase_since_ + milliseconds(handshake_.held() ? options_.header_timeout_ms : options_.idle_timeout_ms);
      break;
    case Phase::header: due = phase_since_ + milliseconds(options_.header_timeout_ms); break;
    case Phase::body: due = last_read() + milliseconds(options_.idle_timeout_ms); break;
    case Phase::handling: due = now + milliseconds(options_.idle_timeout_ms); break;  // its own timers
  }
  if (now < due) {
    arm_deadline(due);
    return;
  }
  if (phase_ == Phase::idle) {
    log()->debug("{} idle for {} ms: closing", log_prefix(), options_.idle_timeout_ms);
    close();
    return;
  }
  // A request that does not finish arriving (slowloris) is answered and the connection closed.
  const bool in_header = phase_ == Phase::header;
  keep_alive_ = false;
  parser_.reset();
  phase_ = Phase::handling;
  ++request_seq_;
  problem(408, in_header
                   ? fmt::format("the request headers did not arrive within {} ms (http.header_timeout_ms)",
                                 options_.header_timeout_ms)
                   : fmt::format("the request body stalled for {} ms (http.idle_timeout_ms)", options_.idle_timeout_ms));
  flush();
}

void Session::close_by_admin(std::string_view reason) {
  log()->info("{} closed by an administrator: {}", log_prefix(), reason);
  goodbye_ = fmt::format("closed by an administrator: {}", reason);
  shutdown();
}

void Session::shutdown() {
  if (is_closing()) return;
  shutting_down_ = true;
  if (phase_ != Phase::handling) {
    close();
    return;
  }
  if (events_) {
    close_after_flush(session::SlowConsumer::kGoodbyeGrace);  // an event stream just ends
    return;
  }
  if (reply_) {
    end_reply();
    problem(503, goodbye_);
    return;
  }
  if (poll_) {
    // Detached once the answer is written (or at close), its messages unacked: they go back.
    release_reservation(*poll_);
    staged_.push_back(Settling{poll_->consumer, {}});
    poll_.reset();
    problem(503, goodbye_);
  }
  // else: a send's store confirmation answers it, with Connection: close.
}

void Session::on_closed() {
  log()->debug("{} closed", log_prefix());
  deadline_.cancel();
  request_timer_.reset();
  if (poll_) {
    release_reservation(*poll_);
    broker_.unsubscribe(poll_->consumer, nullptr);  // its messages go back to the queue
  }
  poll_.reset();
  // Responses not (fully) written: never acked, so their messages go back too.
  for (auto* settlings : {&staged_, &writing_}) {
    for (const auto& s : *settlings) {
      if (!s.leased) {
        broker_.unsubscribe(s.consumer, nullptr);
        continue;
      }
      for (const auto& id : s.leases) broker_.end_lease(id, core::LeaseEnd::nack, nullptr);
    }
  }
  staged_.clear();
  writing_.clear();
  if (reply_) end_reply();
  if (events_) {
    broker_.unsubscribe(events_->consumer, nullptr);  // what it held goes back to the queue
    events_.reset();
    event_acks_.clear();
    slow_consumer_.log_dropped(*log(), transport());
  }
  handshake_.release();
}

}  // namespace carrier::http
