#include "federation/link.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <type_traits>
#include <variant>

#include "auth/authenticator.hpp"
#include "base/logging.hpp"
#include "federation/codec/decoder.hpp"
#include "federation/demand_table.hpp"
#include "federation/node.hpp"
#include "federation/node_id.hpp"
#include "federation/log.hpp"

namespace carrier::federation {

namespace {

// A result string cannot hold CR, LF or NUL: what an error detail echoes is flattened.
std::string result_text(std::string text) {
  for (auto& c : text) {
    if (c == '\r' || c == '\n' || c == '\0') c = ' ';
  }
  return text;
}

std::string property_value(const codec::NodeProperty& p, std::string_view key) {
  const auto* values = p.find(key);
  return values == nullptr || values->empty() ? std::string() : values->front();
}

}  // namespace

Link::Link(std::shared_ptr<net::Transport> transport, Node& node, std::uint64_t id, std::int32_t session,
           std::shared_ptr<const LinkOptions> outbound)
    : transport_(std::move(transport)),
      node_(node),
      id_(id),
      session_(session),
      outbound_(std::move(outbound)),
      name_(outbound_ != nullptr ? outbound_->name : transport_->peer()) {
  transport_->set_handler(this);
}

Link::~Link() {
  if (transport_->handler() == this) transport_->set_handler(nullptr);
}

void Link::begin() {
  // A peer that never finishes (the TLS handshake, negotiate, establish) is dropped: accepted,
  // it would hold a socket; dialled, the link would wait forever instead of retrying.
  establish_timer_ = std::make_unique<net::asio::steady_timer>(transport_->executor());
  const auto limit = node_.options().establish_timeout_ms;
  establish_timer_->expires_after(std::chrono::milliseconds(limit));
  establish_timer_->async_wait([weak = weak_from_this(), limit](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->up_ || self->transport_->is_closing()) return;
    self->fail(fmt::format("not established within {} ms", limit));
  });
  if (outbound_ == nullptr) return;  // the dialling side speaks first
  codec::NegotiateRequest hello;
  hello.hope.cost_request = outbound_->cost;
  request(hello, [this](codec::Frame& answer) {
    auto* agreed = std::get_if<codec::NegotiateResult>(&answer.body);
    if (agreed == nullptr) {
      const auto* text = std::get_if<codec::StringResult>(&answer.body);
      fail(text != nullptr ? "negotiate refused: " + text->text : "negotiate answered with the wrong frame");
      return;
    }
    log()->debug("{} negotiated: agreement {}, cost {}", log_prefix(), agreed->agreed.agreement_id,
                 agreed->agreed.cost_request);
    send_establish();
  });
}

void Link::send_establish() {
  codec::EstablishRequest hello;
  hello.from = node_.self_for(*this);
  hello.session = session_;
  const bool first = !up_;
  if (first && outbound_ != nullptr && !outbound_->username.empty()) {
    hello.from.property.entries.push_back({"user", {outbound_->username}});
    hello.from.property.entries.push_back({"password", {outbound_->password}});
  }
  request(std::move(hello), [this, first](codec::Frame& answer) {
    auto* result = std::get_if<codec::EstablishResult>(&answer.body);
    if (result == nullptr) {
      const auto* text = std::get_if<codec::StringResult>(&answer.body);
      fail(text != nullptr ? "establish refused: " + text->text : "establish answered with the wrong frame");
      return;
    }
    // Later answers carry nothing new: the far side re-sends establish when its demand changes.
    if (first) accept_peer(result->node);
  });
}

void Link::accept_peer(const codec::RemoteNode& peer) {
  if (peer.node_id == node_.id()) {
    fail("the far node is this node");
    return;
  }
  auto demand = from_property(peer.property);
  if (!demand) {
    fail("bad demand: " + demand.error().detail);
    return;
  }
  peer_id_ = peer.node_id;
  up_ = true;
  log()->info("{} link '{}' established with node {} (session {})", log_prefix(), name_, to_hex(peer_id_), session_);
  node_.link_up(*this);
  node_.peer_advertised(*this, std::move(*demand));
}

void Link::advertise() {
  if (up_ && !transport_->is_closing() && node_.advertisement_changed(*this)) send_establish();
}

namespace {

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The bytes a push frame takes on the wire (docs/federation.md, "Frames"), for a bits/s limit.
std::uint64_t push_frame_bytes(const codec::PushRequest& p) {
  const auto& m = p.message;
  return codec::kFrameHeaderBytes + 16 + m.selector.size() + 1 + 64 + m.payload.size() + 4 * m.stack.size() + 4 +
         p.condition.key.size() + 1 + p.condition.value.size() + 1 + 4;
}

}  // namespace

void Link::set_max_rate(std::uint32_t rate, codec::RateUnit unit) {
  rate_unit_ = unit;
  max_rate_ = rate;
  bucket_.set_rate(rate, now_us());
  log()->info("{} link '{}': max rate {} {}", log_prefix(), name_, rate,
              rate == 0 ? "(no limit)" : unit == codec::RateUnit::messages_per_second ? "messages/s" : "bits/s");
  drain_throttled();
}

void Link::drain_throttled() {
  while (!throttled_.empty() && !transport_->is_closing()) {
    auto& next = throttled_.front();
    const std::uint64_t cost =
        rate_unit_ == codec::RateUnit::messages_per_second ? 1 : 8 * push_frame_bytes(next.request);
    const auto wait = bucket_.take(cost, now_us());
    if (wait > 0) {
      if (throttle_armed_) return;
      if (!throttle_timer_) throttle_timer_ = std::make_unique<net::asio::steady_timer>(transport_->executor());
      throttle_armed_ = true;
      throttle_timer_->expires_after(std::chrono::microseconds(wait));
      throttle_timer_->async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (!self) return;
        self->throttle_armed_ = false;
        if (!ec) self->drain_throttled();
      });
      return;
    }
    auto push = std::move(next);
    throttled_.pop_front();
    request(std::move(push.request), [done = std::move(push.done)](codec::Frame& answer) {
      const auto* text = std::get_if<codec::StringResult>(&answer.body);
      done(text != nullptr ? text->text : std::string("error: push answered with the wrong frame"));
    });
  }
}

void Link::push(codec::PushRequest push_request, PushDone done) {
  if (bucket_.limited() || !throttled_.empty()) {
    throttled_.push_back(ThrottledPush{std::move(push_request), std::move(done)});
    drain_throttled();
    return;
  }
  request(std::move(push_request), [done = std::move(done)](codec::Frame& answer) {
    const auto* text = std::get_if<codec::StringResult>(&answer.body);
    done(text != nullptr ? text->text : std::string("error: push answered with the wrong frame"));
  });
}

void Link::sendback(codec::SendbackRequest sendback_request, PushDone done) {
  request(std::move(sendback_request), [done = std::move(done)](codec::Frame& answer) {
    const auto* text = std::get_if<codec::StringResult>(&answer.body);
    done(text != nullptr ? text->text : std::string("error: sendback answered with the wrong frame"));
  });
}

void Link::answer(std::uint32_t request_id, std::string text) {
  if (transport_->is_closing()) return;
  send(request_id, codec::StringResult{result_text(std::move(text))});
  transport_->flush();
}

void Link::on_data(std::string& buffer) {
  std::size_t used = 0;
  while (!transport_->is_closing() && !authenticating_) {
    auto step = codec::decode(std::string_view(buffer).substr(used), node_.options().limits);
    if (!step) {
      misbehaved_ = true;
      fail(step.error().detail);
      return;
    }
    if (step->need_more()) break;
    if (step->frame && holds(*step->frame)) {
      // Left unread until the broker's relief resumes this transport: the far node's pushes
      // wait in its queues (its forwarding consumers' credit bounds what is in flight).
      transport_->pause_reading();
      break;
    }
    used += step->consumed;
    if (step->rejected) {
      const auto& r = *step->rejected;
      bad_frame(r.operation, r.request_id, r.error.detail);
    } else {
      handle(*step->frame);
    }
  }
  counters_.bytes_in += used;
  buffer.erase(0, used);
  transport_->flush();
}

bool Link::holds(const codec::Frame& frame) const {
  const bool arrival = std::holds_alternative<codec::PushRequest>(frame.body) ||
                       std::holds_alternative<codec::SendbackRequest>(frame.body);
  return arrival && up_ && node_.holds_arrivals();
}

void Link::handle(codec::Frame& frame) {
  const std::uint32_t rid = frame.request_id;
  if (static_cast<std::uint32_t>(frame.operation()) & 0x8000'0000u) {
    auto it = pending_.find(rid);
    if (it == pending_.end()) {
      bad_frame(static_cast<std::uint32_t>(frame.operation()), rid, "an answer to no request");
      return;
    }
    auto on_answer = std::move(it->second);
    pending_.erase(it);
    on_answer(frame);
    return;
  }
  std::visit(
      [&](auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, codec::NegotiateRequest>) {
          on_negotiate(rid, body);
        } else if constexpr (std::is_same_v<T, codec::EstablishRequest>) {
          on_establish(rid, body);
        } else if (!up_) {
          bad_frame(static_cast<std::uint32_t>(T::kOperation), rid, "the link is not established");
        } else if constexpr (std::is_same_v<T, codec::PushRequest>) {
          node_.on_push(*this, rid, std::move(body));
        } else if constexpr (std::is_same_v<T, codec::SendbackRequest>) {
          node_.on_sendback(*this, rid, std::move(body));
        } else if constexpr (std::is_same_v<T, codec::SetMaxRateRequest>) {
          set_max_rate(body.rate, body.unit);
          answer(rid, "ok");
        } else if constexpr (std::is_same_v<T, codec::StopForwardingRequest>) {
          node_.set_paused(body.target, body.selector, true);
          answer(rid, "ok");
        } else if constexpr (std::is_same_v<T, codec::RestartForwardingRequest>) {
          node_.set_paused(body.target, body.selector, false);
          answer(rid, "ok");
        } else {
          answer(rid, std::string("error: ") + codec::operation_name(static_cast<std::uint32_t>(T::kOperation)) +
                          " is not supported by this node");
        }
      },
      frame.body);
}

void Link::on_negotiate(std::uint32_t request_id, const codec::NegotiateRequest& request) {
  if (outbound_ != nullptr || up_) {
    bad_frame(static_cast<std::uint32_t>(codec::Operation::negotiate), request_id, "negotiate is the dialling side's");
    return;
  }
  if (request.version != codec::kProtocolVersion) {
    answer(request_id, "error: protocol version " + std::to_string(request.version) + " is not spoken here (1 is)");
    transport_->close_after_flush();
    return;
  }
  codec::Negotiator agreed = request.hope;
  agreed.agreement_id = session_;
  agreed.result = "ok";
  send(request_id, codec::NegotiateResult{std::move(agreed)});
}

void Link::on_establish(std::uint32_t request_id, codec::EstablishRequest& request) {
  if (up_) {
    // A later establish: the far node's demand changed.
    if (request.from.node_id != peer_id_) {
      bad_frame(static_cast<std::uint32_t>(codec::Operation::establish), request_id, "the node id changed");
      return;
    }
    auto demand = from_property(request.from.property);
    if (!demand) {
      bad_frame(static_cast<std::uint32_t>(codec::Operation::establish), request_id, demand.error().detail);
      return;
    }
    send(request_id, codec::EstablishResult{node_.self_for(*this)});
    node_.peer_advertised(*this, std::move(*demand));
    return;
  }
  if (outbound_ != nullptr) {
    bad_frame(static_cast<std::uint32_t>(codec::Operation::establish), request_id, "establish is the dialling side's");
    return;
  }
  auth::Credentials credentials;
  if (const auto user = property_value(request.from.property, "user"); !user.empty()) credentials.username = user;
  if (const auto pass = property_value(request.from.property, "password"); !pass.empty()) credentials.password = pass;
  credentials.source = std::string(transport_->peer_address());
  // A verified client certificate naming the user (tls.use_identity_as_username), as for clients.
  if (!transport_->peer_identity().empty()) credentials.identity = transport_->peer_identity();
  std::weak_ptr<Link> weak = weak_from_this();
  auto outcome = node_.authenticator().authenticate(
      std::move(credentials), transport_->shard(),
      [weak, request_id, request](auth::Outcome o) {
        if (auto self = weak.lock()) self->on_authenticated(request_id, request, o);
      });
  if (outcome) {
    on_authenticated(request_id, std::move(request), *outcome);
    return;
  }
  authenticating_ = true;
  transport_->pause_reading();
}

void Link::on_authenticated(std::uint32_t request_id, codec::EstablishRequest request, const auth::Outcome& outcome) {
  const bool waited = authenticating_;
  authenticating_ = false;
  if (transport_->is_closing()) return;
  if (outcome.verdict != auth::Verdict::accepted) {
    log()->warn("{} link refused: authentication failed", log_prefix());
    answer(request_id, "error: authentication failed");
    transport_->close_after_flush();
    return;
  }
  // The answer first: the far side learns this node's demand before any push can follow.
  if (auto demand = from_property(request.from.property); !demand) {
    answer(request_id, "error: " + demand.error().detail);
    transport_->close_after_flush();
    return;
  }
  if (request.from.node_id == node_.id()) {
    answer(request_id, "error: the far node is this node");
    transport_->close_after_flush();
    return;
  }
  peer_id_ = request.from.node_id;
  user_ = outcome.user;
  permissions_ = std::make_unique<auth::Permissions>(node_.authenticator().access(), transport_->shard());
  permissions_->set_identity(user_, "federation-" + to_hex(peer_id_));
  send(request_id, codec::EstablishResult{node_.self_for(*this)});
  request.from.property.entries.erase(std::remove_if(request.from.property.entries.begin(),
                                                     request.from.property.entries.end(),
                                                     [](const auto& e) { return e.key == "password"; }),
                                      request.from.property.entries.end());
  accept_peer(request.from);
  transport_->flush();
  if (waited) transport_->resume_reading();
}

void Link::send(std::uint32_t request_id, codec::FrameBody body) {
  codec::Frame frame{request_id, std::move(body)};
  auto& out = transport_->out();
  const auto before = out.size();
  if (auto st = codec::encode_frame(frame, out); !st) {
    log()->warn("{} cannot encode a frame: {}", log_prefix(), st.error().detail);
  }
  counters_.bytes_out += out.size() - before;
}

void Link::request(codec::FrameBody body, std::function<void(codec::Frame&)> on_answer) {
  if (transport_->is_closing()) return;
  const std::uint32_t rid = next_request_++;
  if (next_request_ == 0) next_request_ = 1;
  pending_.emplace(rid, std::move(on_answer));
  send(rid, std::move(body));
  transport_->flush();
}

void Link::bad_frame(std::uint32_t operation, std::uint32_t request_id, const std::string& why) {
  ++bad_frames_;
  const char* name = codec::operation_name(operation);
  log()->warn("{} refused a frame ({}): {}", log_prefix(), name != nullptr ? name : std::to_string(operation), why);
  // A refused answer is not answered, or two nodes could answer each other's errors forever.
  if ((operation & 0x8000'0000u) == 0) answer(request_id, "error: " + why);
  if (bad_frames_ >= node_.options().max_bad_frames) {
    misbehaved_ = true;
    fail("too many refused frames");
  }
}

void Link::fail(const std::string& why) {
  failed_ = true;
  log()->warn("{} link '{}' dropped: {}", log_prefix(), name_, why);
  transport_->close_after_flush();
}

void Link::on_closed() {
  pending_.clear();
  throttled_.clear();
  if (throttle_timer_) throttle_timer_->cancel();
  if (establish_timer_) establish_timer_->cancel();
  if (up_) {
    log()->info("{} link '{}' closed", log_prefix(), name_);
  } else if (outbound_ && !failed_) {
    // Closed by the far side (or a failed TLS handshake, logged by net) before establish:
    // a plain link to a TLS listener ends here, as does one the far node refused outright.
    log()->warn("{} link '{}' closed before it was established (the far listener TLS when this link is not, "
                "or refusing it?)",
                log_prefix(), name_);
  }
  node_.link_closed(*this);
  up_ = false;
}

void Link::shutdown() {
  node_.stop();
  transport_->close_after_flush();
}

}  // namespace carrier::federation
