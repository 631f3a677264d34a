#include <fmt/format.h>

#include "http/codec/message_fields.hpp"
#include "http/session.hpp"

namespace carrier::http {

namespace {

// A message header becomes a response header only if HTTP can carry it as it is: a token for
// the name, no control characters (CR, LF) in the value. Others are left out (docs/http.md).
bool is_token(std::string_view name) {
  if (name.empty()) return false;
  for (unsigned char c : name) {
    if (c <= 32 || c >= 127 || std::string_view("\"(),/:;<=>?@[\\]{}").find(static_cast<char>(c)) != std::string_view::npos) {
      return false;
    }
  }
  return true;
}

bool is_field_value(std::string_view value) {
  for (unsigned char c : value) {
    if ((c < 32 && c != '\t') || c == 127) return false;
  }
  return true;
}

void add_header(std::string& out, std::string_view name, std::string_view value) {
  if (!is_token(name) || !is_field_value(value)) return;
  fmt::format_to(std::back_inserter(out), "{}{}: {}\r\n", codec::kHeaderPrefix, name, value);
}

}  // namespace

Result<std::optional<std::uint64_t>> Session::reply_wait(const codec::Params& params) const {
  const auto reply = codec::find_param(params, "reply");
  const auto timeout = codec::find_param(params, "timeout");
  if (!reply) {
    if (timeout) return unexpected(Errc::invalid_argument, "timeout is for reply=wait");
    return std::optional<std::uint64_t>();
  }
  if (*reply != "wait") {
    return unexpected(Errc::invalid_argument, fmt::format("reply must be wait, got '{}'", reply->substr(0, 64)));
  }
  if (!timeout) return std::optional<std::uint64_t>(std::min<std::uint64_t>(kDefaultReplyTimeoutMs, options_.max_poll_wait_ms));
  auto ms = codec::parse_duration_ms(*timeout, "timeout", options_.max_poll_wait_ms);
  if (!ms) return unexpected(ms.error());
  return std::optional<std::uint64_t>(*ms);
}

void Session::send_awaiting_reply(std::vector<model::MessagePtr> messages, std::uint64_t timeout_ms) {
  if (messages.size() != 1) {
    problem(400, "reply=wait sends one message, not a batch");
    return;
  }
  // A temporary queue as STOMP's /temp-queue/ makes them: named for this connection, gone with
  // the request (or the connection).
  model::Destination queue{model::DestinationKind::temp_queue, fmt::format("carrier-{}.http-reply-{}", id(), ++replies_)};
  broker_.open_temp_queue(queue);
  if (!poll_consumer_) poll_consumer_ = std::make_shared<PollConsumer>(shared_from_this(), broker_);
  core::SubscribeRequest request{queue, core::AckMode::auto_ack, 1, poll_consumer_};
  auto consumer = broker_.subscribe(std::move(request), nullptr);
  if (!consumer) {
    broker_.delete_queue(queue, nullptr);
    problem(consumer.error());
    return;
  }
  auto request_message = std::make_shared<model::Message>(*messages.front());  // the body is shared, not copied
  request_message->reply_to = queue.uri();
  messages.front() = std::move(request_message);
  reply_ = Reply{*consumer, std::move(queue)};
  const std::uint64_t seq = request_seq_;
  auto weak = std::weak_ptr<Session>(shared_from_this());
  broker_.send(std::move(messages), [weak, seq](Status st) {
    auto self = weak.lock();
    if (st || !self || self->is_closing() || seq != self->request_seq_ || !self->reply_) return;
    self->end_reply();
    self->problem(st.error());
    self->flush();
  });
  if (seq != request_seq_) return;  // refused on the spot
  request_timer_ = std::make_unique<net::asio::steady_timer>(executor());
  request_timer_->expires_after(std::chrono::milliseconds(timeout_ms));
  request_timer_->async_wait([weak, seq, timeout_ms](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->is_closing() || seq != self->request_seq_ || !self->reply_) return;
    self->end_reply();
    self->problem(504, fmt::format("no reply came within {} ms (the request was sent)", timeout_ms));
    self->flush();
  });
}

void Session::deliver_reply(core::ConsumerId id, std::vector<core::Delivery> batch) {
  if (is_closing() || !reply_ || reply_->consumer != id || batch.empty()) return;
  const model::Message& m = *batch.front().message;
  std::string headers;
  char text[36];
  m.id.to_chars(text);
  fmt::format_to(std::back_inserter(headers), "Carrier-Message-Id: {}\r\n", std::string_view(text, sizeof text));
  add_header(headers, "priority", std::to_string(m.priority));
  add_header(headers, "timestamp", std::to_string(m.timestamp_ms));
  if (!m.correlation_id.empty()) add_header(headers, "correlation-id", m.correlation_id);
  if (!m.type.empty()) add_header(headers, "type", m.type);
  for (const auto& [name, value] : m.properties) add_header(headers, name, value);
  const auto body = m.body;  // the queue may go with the message once the reply is settled
  const std::string content_type = m.content_type.empty() ? "application/octet-stream" : m.content_type;
  end_reply();
  respond(200, is_field_value(content_type) ? content_type : "application/octet-stream",
          body ? std::string_view(*body) : std::string_view(), headers);
}

void Session::end_reply() {
  // Unacked, the reply goes back to its queue, which is deleted with it.
  broker_.unsubscribe(reply_->consumer, nullptr);
  broker_.delete_queue(reply_->queue, nullptr);
  reply_.reset();
}

}  // namespace carrier::http
