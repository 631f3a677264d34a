#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "http/codec/body_encoding.hpp"
#include "http/session.hpp"

namespace carrier::http {

namespace {

// How long a poll with wait=0 still waits: its consumer is attached on the queue's shard, and
// the messages it is given there arrive a moment after the attach is confirmed.
constexpr std::chrono::milliseconds kMinimalWait{20};
constexpr std::uint32_t kDefaultMax = 10;

nlohmann::json to_json(const core::Delivery& d) {
  const model::Message& m = *d.message;
  char id[36];
  m.id.to_chars(id);
  nlohmann::json headers = nlohmann::json::object();
  headers["priority"] = std::to_string(m.priority);
  headers["timestamp"] = std::to_string(m.timestamp_ms);
  if (m.persistent) headers["persistent"] = "true";
  if (m.expires_ms != 0) headers["expires"] = std::to_string(m.expires_ms);
  if (!m.correlation_id.empty()) headers["correlation-id"] = m.correlation_id;
  if (!m.reply_to.empty()) headers["reply-to"] = m.reply_to;
  if (!m.type.empty()) headers["type"] = m.type;
  if (!m.content_type.empty()) headers["content-type"] = m.content_type;
  for (const auto& [name, value] : m.properties) {
    if (!headers.contains(name)) headers[name] = value;
  }
  nlohmann::json out{{"id", std::string(id, sizeof id)},
                     {"destination", m.destination.uri()},
                     {"redelivered", d.redelivered},
                     {"delivery_count", d.delivery_count},
                     {"headers", std::move(headers)}};
  const std::string_view body = m.body ? std::string_view(*m.body) : std::string_view();
  if (codec::is_utf8(body)) {
    out["body"] = std::string(body);
  } else {
    out["body_base64"] = codec::base64_encode(body);
  }
  return out;
}

}  // namespace

void Session::handle_receive(const model::Destination& destination, const codec::Params& params) {
  if (!permissions_.allows(auth::Right::read, destination)) {
    problem(403, auth::access_denied_detail(user_, "receive from", (destination.kind == model::DestinationKind::topic ? "topic " : "queue ") + destination.name));
    return;
  }
  if (auto unknown = codec::unknown_param(params, {"max", "wait", "ack"})) {
    problem(400, fmt::format("unknown query parameter '{}' (allowed: max, wait, ack)", unknown->substr(0, 64)));
    return;
  }
  std::uint32_t max = std::min(kDefaultMax, options_.max_poll_messages);
  if (auto text = codec::find_param(params, "max")) {
    auto n = codec::parse_bounded(*text, "max", 1, options_.max_poll_messages);
    if (!n) {
      problem(n.error());
      return;
    }
    max = static_cast<std::uint32_t>(*n);
  }
  std::uint64_t wait_ms = 0;
  if (auto text = codec::find_param(params, "wait")) {
    auto w = codec::parse_duration_ms(*text, "wait", options_.max_poll_wait_ms);
    if (!w) {
      problem(w.error());
      return;
    }
    wait_ms = *w;
  }
  if (auto ack = codec::find_param(params, "ack"); ack && *ack != "auto") {
    problem(400, fmt::format("ack must be auto, got '{}'", ack->substr(0, 64)));
    return;
  }
  if (auto st = broker_.check_destination(destination, true); !st) {
    problem(st.error());
    return;
  }
  if (!poll_consumer_) {
    poll_consumer_ = std::make_shared<PollConsumer>(shared_from_this());
  }
  core::SubscribeRequest request{destination, core::AckMode::client_individual, max, poll_consumer_};
  auto consumer = broker_.subscribe(std::move(request), nullptr);
  if (!consumer) {
    problem(consumer.error());
    return;
  }
  poll_ = Poll{*consumer, max, request_seq_};
  const std::uint64_t seq = request_seq_;
  auto weak = std::weak_ptr<Session>(shared_from_this());
  request_timer_ = std::make_unique<net::asio::steady_timer>(executor());
  request_timer_->expires_after(std::max<std::chrono::milliseconds>(std::chrono::milliseconds(wait_ms), kMinimalWait));
  request_timer_->async_wait([weak, seq](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->poll_expired(seq);
  });
}

void Session::deliver_poll(core::ConsumerId id, std::vector<core::Delivery> batch) {
  // Not for the waiting poll (one answered already, or the connection closing): the deliveries
  // stay unacked with that consumer and go back to the queue when it is detached.
  if (is_closing() || !poll_ || poll_->consumer != id || poll_->request != request_seq_) return;
  answer_poll(std::move(batch));
}

void Session::answer_poll(std::vector<core::Delivery> batch) {
  Settling settling{poll_->consumer, {}};
  nlohmann::json messages = nlohmann::json::array();
  for (const auto& d : batch) {
    // The consumer's prefetch is `max`: a batch never holds more.
    messages.push_back(to_json(d));
    settling.tags.push_back(d.tag);
  }
  poll_.reset();
  staged_.push_back(std::move(settling));
  respond(200, "application/json", messages.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void Session::poll_expired(std::uint64_t seq) {
  if (is_closing() || !poll_ || poll_->request != seq || seq != request_seq_) return;
  // Nothing came: detached once this answer is written, with anything that arrives meanwhile.
  staged_.push_back(Settling{poll_->consumer, {}});
  poll_.reset();
  respond(204, "", "");
  flush();
}

}  // namespace carrier::http
