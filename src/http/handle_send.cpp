#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "net/refusals.hpp"
#include "http/codec/batch.hpp"
#include "http/codec/message_fields.hpp"
#include "core/disk_alarm.hpp"
#include "http/session.hpp"

namespace carrier::http {

namespace bhttp = boost::beast::http;

namespace {

// "application/json; charset=utf-8" -> "application/json", for comparisons.
std::string_view media_type(std::string_view content_type) {
  auto t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  return t;
}

}  // namespace

bool Session::take_message_tokens(std::size_t n) {
  if (options_.max_messages_per_second == 0) return true;
  const auto now = session::MessageRate::Clock::now();
  if (!message_rate_) {
    const auto rate = options_.max_messages_per_second;
    message_rate_ = std::make_unique<session::MessageRate>(rate, options_.message_burst != 0 ? options_.message_burst : rate,
                                                           now);
  }
  if (message_rate_->take(now, static_cast<std::uint32_t>(std::min<std::size_t>(n, UINT32_MAX)))) return true;
  // STOMP and MQTT stop reading such a producer; an HTTP client would only see its request
  // hang, so it is told when to come back.
  net::count_refusal(net::Refusal::message_rate);
  const auto wait = std::chrono::duration<double>(message_rate_->wait(now)).count();
  const auto seconds = std::max<long long>(1, static_cast<long long>(std::ceil(wait)));
  problem(429,
          fmt::format("this connection sends more than {} messages a second ([limits] max_messages_per_second); "
                      "try again in {} s",
                      options_.max_messages_per_second, seconds),
          fmt::format("Retry-After: {}\r\n", seconds));
  return false;
}

void Session::handle_send(const model::Destination& destination, const codec::Params& params) {
  const Request& req = *current_;
  if (!allowed(auth::Right::write, destination, "send to")) return;
  if (auto unknown = codec::unknown_param(params, {"persistent", "reply", "timeout"})) {
    problem(400, fmt::format("unknown query parameter '{}' (allowed: persistent, reply, timeout)", unknown->substr(0, 64)));
    return;
  }
  auto reply = reply_wait(params);
  if (!reply) {
    problem(reply.error());
    return;
  }
  std::optional<bool> persistent;
  if (auto p = codec::find_param(params, "persistent")) {
    auto flag = codec::parse_flag(*p, "persistent");
    if (!flag) {
      problem(flag.error());
      return;
    }
    persistent = *flag;
  }
  if (!req.has_content_length() && !req.chunked()) {
    problem(411, "a message is sent as a body: give Content-Length or Transfer-Encoding: chunked");
    return;
  }
  const auto encoding = req[bhttp::field::content_encoding];
  if (!encoding.empty() && !boost::beast::iequals(encoding, "identity")) {
    problem(415, "Content-Encoding is not supported: send the body as it is");
    return;
  }
  // Refused at once rather than left waiting: an HTTP client has no TCP back-pressure to feel.
  if (broker_.memory() != nullptr && broker_.memory()->over_limit()) {
    problem(429, "the broker is at its memory limit (memory_limit_bytes); try again later", "Retry-After: 1\r\n");
    return;
  }
  const auto* pressure = broker_.pressure();
  if (destination.kind == model::DestinationKind::queue && pressure != nullptr && pressure->any() &&
      pressure->blocked(destination.key())) {
    problem(429, fmt::format("queue '{}' is full (overflow = \"block\"); try again later", destination.name),
            "Retry-After: 1\r\n");
    return;
  }
  if (auto st = broker_.check_destination(destination, false); !st) {
    problem(st.error());
    return;
  }

  const auto content_type = req[bhttp::field::content_type];
  const std::int64_t now = broker_.now_ms();
  const codec::FieldLimits limits{broker_.options().max_schedule_delay_ms, options_.max_message_headers};
  std::vector<codec::BatchEntry> entries;
  if (media_type(view(content_type)) == codec::kBatchMediaType) {
    auto batch = codec::decode_batch(req.body(), options_.max_batch_messages);
    if (!batch) {
      problem(batch.error().code == Errc::limit_exceeded ? 413 : 400, batch.error().detail);
      return;
    }
    entries = std::move(*batch);
  } else {
    codec::BatchEntry one;
    for (const auto& field : req) {
      const auto name = view(field.name_string());
      if (!codec::has_header_prefix(name)) continue;
      one.headers.emplace_back(std::string(name.substr(codec::kHeaderPrefix.size())),
                               std::string(field.value()));
    }
    if (!content_type.empty()) one.headers.emplace_back("content-type", std::string(content_type));
    one.body = std::move(current_->body());
    entries.push_back(std::move(one));
  }

  if (!take_message_tokens(entries.size())) return;

  std::vector<model::MessagePtr> messages;
  messages.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto fields = codec::read_fields(entries[i].headers, now, limits);
    if (!fields) {
      const auto& e = fields.error();
      problem(e.code == Errc::limit_exceeded ? 431 : 400,
              entries.size() > 1 ? fmt::format("batch entry {}: {}", i, e.detail) : e.detail);
      return;
    }
    auto m = std::make_shared<model::Message>();
    m->id = broker_.next_message_id();
    m->destination = destination;
    m->timestamp_ms = fields->timestamp_ms != 0 ? fields->timestamp_ms : now;
    m->origin = id();
    m->persistent = persistent.value_or(fields->persistent);
    m->priority = fields->priority;
    m->expires_ms = fields->expires_ms;
    m->deliver_at_ms = fields->deliver_at_ms;
    m->correlation_id = std::move(fields->correlation_id);
    m->reply_to = std::move(fields->reply_to);
    m->type = std::move(fields->type);
    m->content_type = std::move(fields->content_type);
    m->properties = std::move(fields->properties);
    m->body = std::make_shared<const std::string>(std::move(entries[i].body));
    messages.push_back(std::move(m));
  }
  // Free disk under [journal] disk_free_limit_bytes: persistent messages wait, as a STOMP or MQTT
  // producer waits unread; an HTTP client is told to come back (it feels no TCP back-pressure).
  if (const auto* disk = broker_.disk_alarm(); disk != nullptr && disk->holding() &&
      std::any_of(messages.begin(), messages.end(), [](const model::MessagePtr& m) { return m->persistent; })) {
    problem(429, "the store's disk is under its free-space limit (disk_free_limit_bytes); try again later",
            "Retry-After: 1\r\n");
    return;
  }

  if (*reply) {
    send_awaiting_reply(std::move(messages), **reply);
    return;
  }
  nlohmann::json ids = nlohmann::json::array();
  char text[36];
  for (const auto& m : messages) {
    m->id.to_chars(text);
    ids.push_back(std::string(text, sizeof text));
  }
  const std::uint64_t seq = request_seq_;
  auto weak = std::weak_ptr<Session>(shared_from_this());
  transport().count_in(messages.size());
  // 201 only once the broker has taken them: persistent ones are durable by then.
  broker_.send(std::move(messages), [weak, seq, body = nlohmann::json{{"ids", std::move(ids)}}.dump()](Status st) {
    auto self = weak.lock();
    if (!self || self->is_closing() || seq != self->request_seq_) return;
    if (!st) {
      self->problem(st.error());
    } else {
      self->respond(201, "application/json", body);
    }
    self->flush();
  });
  if (seq != request_seq_) return;  // answered already (a send confirmed on the spot)
  request_timer_ = std::make_unique<net::asio::steady_timer>(executor());
  request_timer_->expires_after(std::chrono::milliseconds(options_.send_timeout_ms));
  request_timer_->async_wait([weak, seq](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->is_closing() || seq != self->request_seq_) return;
    self->problem(504, "the store did not confirm the message in time (http.send_timeout_ms); it may still be "
                       "stored");
    self->flush();
  });
}

}  // namespace carrier::http
