#include <algorithm>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "http/delivery_json.hpp"
#include "http/session.hpp"

namespace carrier::http {

namespace {

// How long a poll with wait=0 still waits: its consumer is attached on the queue's shard, and
// the messages it is given there arrive a moment after the attach is confirmed.
constexpr std::chrono::milliseconds kMinimalWait{20};
constexpr std::uint32_t kDefaultMax = 10;
// ack=lease without `visibility` (within the configured bounds).
constexpr std::uint64_t kDefaultVisibilityMs = 30000;

}  // namespace

std::optional<Session::PollParams> Session::poll_params(const codec::Params& params) {
  if (auto unknown = codec::unknown_param(params, {"max", "wait", "ack", "visibility"})) {
    problem(400, fmt::format("unknown query parameter '{}' (allowed: max, wait, ack, visibility)", unknown->substr(0, 64)));
    return std::nullopt;
  }
  PollParams p;
  p.max = std::min(kDefaultMax, options_.max_poll_messages);
  if (auto text = codec::find_param(params, "max")) {
    auto n = codec::parse_bounded(*text, "max", 1, options_.max_poll_messages);
    if (!n) {
      problem(n.error());
      return std::nullopt;
    }
    p.max = static_cast<std::uint32_t>(*n);
  }
  if (auto text = codec::find_param(params, "wait")) {
    auto w = codec::parse_duration_ms(*text, "wait", options_.max_poll_wait_ms);
    if (!w) {
      problem(w.error());
      return std::nullopt;
    }
    p.wait_ms = *w;
  }
  if (auto ack = codec::find_param(params, "ack"); ack && *ack != "auto") {
    if (*ack != "lease") {
      problem(400, fmt::format("ack must be auto or lease, got '{}'", ack->substr(0, 64)));
      return std::nullopt;
    }
    p.lease = true;
  }
  auto visibility = codec::find_param(params, "visibility");
  if (visibility && !p.lease) {
    problem(400, "visibility is only for ack=lease");
    return std::nullopt;
  }
  if (p.lease) {
    p.visibility_ms = std::min(std::max(kDefaultVisibilityMs, options_.min_lease_visibility_ms),
                               options_.max_lease_visibility_ms);
    if (visibility) {
      auto v = codec::parse_duration_ms(*visibility, "visibility", options_.max_lease_visibility_ms);
      if (!v) {
        problem(v.error());
        return std::nullopt;
      }
      if (*v < options_.min_lease_visibility_ms) {
        problem(400, fmt::format("visibility must be at least {} ms (http.min_lease_visibility_ms)",
                                 options_.min_lease_visibility_ms));
        return std::nullopt;
      }
      p.visibility_ms = *v;
    }
  }
  return p;
}

void Session::handle_receive(const model::Destination& destination, const codec::Params& params) {
  if (!allowed(auth::Right::read, destination, "receive from")) return;
  auto p = poll_params(params);
  if (!p) return;
  if (auto st = broker_.check_destination(destination, true); !st) {
    problem(st.error());
    return;
  }
  start_poll(core::SubscribeRequest{destination, core::AckMode::client_individual, p->max, nullptr}, *p);
}

void Session::start_poll(core::SubscribeRequest request, const PollParams& params) {
  Poll poll{core::ConsumerId(0), params.max, request_seq_, params.lease, params.visibility_ms, 0};
  if (params.lease) {
    // Room for the leases first: a poll that could lease nothing is refused, not answered empty.
    auto reserved = broker_.leases().reserve(
        user_, params.max, core::LeaseLimits{options_.max_leases, options_.max_leases_per_user});
    if (!reserved) {
      problem(reserved.error());
      return;
    }
    poll.reserved = *reserved;
    poll.max = *reserved;
  }
  if (!poll_consumer_) {
    poll_consumer_ = std::make_shared<PollConsumer>(shared_from_this(), broker_);
  }
  request.prefetch = poll.max;
  request.consumer = poll_consumer_;
  const std::uint64_t seq = request_seq_;
  auto weak = std::weak_ptr<Session>(shared_from_this());
  // A queue's owner shard may refuse the consumer (a new queue past [limits] max_destinations,
  // counted there): the waiting poll is then answered with that refusal (429), as a send's
  // would be, not with a 204 once the wait is over.
  auto consumer = broker_.subscribe(std::move(request), [weak, seq](Status st) {
    if (st) return;
    auto self = weak.lock();
    if (!self || self->is_closing() || !self->poll_ || self->poll_->request != seq || seq != self->request_seq_) return;
    self->release_reservation(*self->poll_);
    self->broker_.unsubscribe(self->poll_->consumer, nullptr);
    self->poll_.reset();
    if (self->request_timer_) self->request_timer_->cancel();
    self->problem(st.error());
    self->flush();
  });
  if (!consumer) {
    release_reservation(poll);
    problem(consumer.error());
    return;
  }
  poll.consumer = *consumer;
  poll_ = poll;
  request_timer_ = std::make_unique<net::asio::steady_timer>(executor());
  request_timer_->expires_after(
      std::max<std::chrono::milliseconds>(std::chrono::milliseconds(params.wait_ms), kMinimalWait));
  request_timer_->async_wait([weak, seq](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->poll_expired(seq);
  });
}

void Session::release_reservation(const Poll& poll) {
  if (poll.reserved != 0) broker_.leases().unreserve(user_, poll.reserved);
}

bool Session::deliver_poll(core::ConsumerId id, std::vector<core::Delivery>& batch) {
  // Not for the waiting poll (one answered already, or the connection closing): the deliveries
  // stay unacked with that consumer and go back to the queue when it is detached.
  if (is_closing() || !poll_ || poll_->consumer != id || poll_->request != request_seq_) return false;
  answer_poll(std::move(batch));
  return true;
}

void Session::answer_poll(std::vector<core::Delivery> batch) {
  Settling settling{poll_->consumer, {}};
  nlohmann::json messages = nlohmann::json::array();
  if (poll_->lease) {
    // Later messages go to other consumers; these stay with this one until their leases end.
    broker_.pause(poll_->consumer);
    settling.leased = true;
    settling.leases =
        broker_.leases().grant(user_, poll_->reserved, poll_->consumer, batch, poll_->visibility_ms);
    const std::int64_t until = broker_.now_ms() + static_cast<std::int64_t>(poll_->visibility_ms);
    for (std::size_t i = 0; i < settling.leases.size(); ++i) {
      auto m = delivery_json(batch[i]);
      m["lease"] = settling.leases[i].to_string();
      m["lease_expires_ms"] = until;
      messages.push_back(std::move(m));
    }
    settling.leased = !settling.leases.empty();  // else detached after the write, as ack=auto
  } else {
    // Answered: the consumer must take no more. Until its detach (after the write) reaches the
    // queue's shard it still has credit there, and what the queue gave it meanwhile would wait
    // for that detach to come back (counted as a delivery). The pause gets there sooner.
    broker_.pause(poll_->consumer);
    for (const auto& d : batch) {
      // The consumer's prefetch is `max`: a batch never holds more.
      messages.push_back(delivery_json(d));
      settling.tags.push_back(d.tag);
    }
  }
  poll_.reset();
  staged_.push_back(std::move(settling));
  transport().count_out(messages.size());
  respond(200, "application/json", messages.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void Session::poll_expired(std::uint64_t seq) {
  if (is_closing() || !poll_ || poll_->request != seq || seq != request_seq_) return;
  // Nothing came: detached once this answer is written, with anything that arrives meanwhile.
  release_reservation(*poll_);
  staged_.push_back(Settling{poll_->consumer, {}});
  poll_.reset();
  respond(204, "", "");
  flush();
}

}  // namespace carrier::http
