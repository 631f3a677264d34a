#include <algorithm>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/logging.hpp"
#include "http/codec/body_encoding.hpp"
#include "http/delivery_json.hpp"
#include "http/session.hpp"
#include "http/log.hpp"

namespace carrier::http {

namespace {

// EventSource splits data at CR, LF and CRLF and joins the lines with LF: a body with a CR would
// not come back as it was sent, so it goes as base64 like one that is not UTF-8.
bool sendable_as_text(std::string_view body) {
  return body.find('\r') == std::string_view::npos && codec::is_utf8(body);
}

// "data: " before each line of `text` (split at LF), the event's blank line after.
void append_data(std::string& o, std::string_view text) {
  while (true) {
    const auto nl = text.find('\n');
    o.append("data: ");
    o.append(text.substr(0, nl));
    o.push_back('\n');
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  o.push_back('\n');
}

}  // namespace

std::optional<bool> Session::events_format(const codec::Params& params) {
  if (auto unknown = codec::unknown_param(params, {"format"})) {
    problem(400, fmt::format("unknown query parameter '{}' (allowed: format)", unknown->substr(0, 64)));
    return std::nullopt;
  }
  bool json = false;
  if (auto format = codec::find_param(params, "format")) {
    if (*format != "text" && *format != "json") {
      problem(400, fmt::format("format must be text or json, got '{}'", format->substr(0, 64)));
      return std::nullopt;
    }
    json = *format == "json";
  }
  return json;
}

void Session::handle_events(const model::Destination& destination, const codec::Params& params) {
  if (!allowed(auth::Right::read, destination, "receive from")) return;
  const auto json = events_format(params);
  if (!json) return;
  if (auto st = broker_.check_destination(destination, true); !st) {
    problem(st.error());
    return;
  }
  if (!poll_consumer_) poll_consumer_ = std::make_shared<PollConsumer>(shared_from_this(), broker_);
  // Acked once written (ack=auto, as a long poll's): the credit comes back only as the client
  // reads, so a stream that is not read stops taking messages from its queue.
  core::SubscribeRequest request{destination, core::AckMode::auto_ack, 0, poll_consumer_};
  if (destination.kind == model::DestinationKind::topic) {
    auto consumer = broker_.subscribe(std::move(request), nullptr);
    if (!consumer) {
      problem(consumer.error());
      return;
    }
    start_events(*consumer, true, *json);
    return;
  }
  // A queue's owner shard may refuse it (a new queue past [limits] max_destinations, counted
  // there): the stream's 200 waits for the owner's yes, so a refusal is a 429 like a send's,
  // not a stream that never carries anything. Its first delivery comes after that yes.
  const std::uint64_t seq = request_seq_;
  auto weak = std::weak_ptr<Session>(shared_from_this());
  auto id = std::make_shared<core::ConsumerId>();
  core::Broker* broker = &broker_;
  auto consumer = broker_.subscribe(std::move(request), [weak, seq, id, broker, json = *json](Status st) {
    auto self = weak.lock();
    if (!self || self->is_closing() || seq != self->request_seq_) {
      broker->unsubscribe(*id, nullptr);  // the client left while the owner was asked
      return;
    }
    if (!st) {
      broker->unsubscribe(*id, nullptr);
      self->problem(st.error());
      self->flush();
      return;
    }
    self->start_events(*id, false, json);
  });
  if (!consumer) {
    problem(consumer.error());
    return;
  }
  *id = *consumer;
}

void Session::handle_subscription_events(core::SubscribeRequest request, const codec::Params& params) {
  const auto json = events_format(params);
  if (!json) return;
  std::optional<std::string> resume_from;
  if (auto it = current_->find("Last-Event-ID"); it != current_->end()) {
    // EventSource sends the id of the last event it got. Our ids are message ids (36 bytes);
    // anything else is an unknown id (the stream starts from the oldest unconfirmed event).
    std::string_view id = view(it->value());
    while (!id.empty() && (id.front() == ' ' || id.front() == '\t')) id.remove_prefix(1);
    while (!id.empty() && (id.back() == ' ' || id.back() == '\t')) id.remove_suffix(1);
    if (!id.empty()) resume_from = std::string(id.substr(0, 128));
  }
  if (!poll_consumer_) poll_consumer_ = std::make_shared<PollConsumer>(shared_from_this(), broker_);
  // Acked individually: as they leave the window (confirm_written), or through Last-Event-ID
  // by the next stream. The credit covers the window and as much again in flight.
  request.ack_mode = core::AckMode::client_individual;
  request.prefetch = 2 * options_.events_resume_window;
  request.consumer = poll_consumer_;
  auto consumer = broker_.subscribe(std::move(request), nullptr);
  if (!consumer) {
    problem(consumer.error());
    return;
  }
  start_events(*consumer, false, *json);
  events_->window.emplace(options_.events_resume_window);
  events_->resume_from = std::move(resume_from);
}

void Session::start_events(core::ConsumerId consumer, bool droppable, bool json) {
  // The response has no length: it ends when the connection does. Requests pipelined behind
  // it are never answered.
  keep_alive_ = false;
  set_max_queued_bytes(options_.max_pending_output_bytes);
  events_ = Events{consumer, droppable, json, {}, 0, std::nullopt, std::nullopt};
  out().append(
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\n"
      "X-Accel-Buffering: no\r\nConnection: close\r\n\r\n: carrier event stream\n\n");
  flush();
  request_timer_ = std::make_unique<net::asio::steady_timer>(executor());
  events_keep_alive();
}

void Session::events_keep_alive() {
  const auto period = std::chrono::milliseconds(options_.events_keepalive_ms);
  if (Clock::now() - last_write() >= period && queued_bytes() == 0) {
    out().append(": keep-alive\n\n");
    flush();
  }
  request_timer_->expires_after(period);
  auto weak = std::weak_ptr<Session>(shared_from_this());
  request_timer_->async_wait([weak](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->is_closing() || !self->events_) return;
    self->events_keep_alive();
  });
}

void Session::deliver_events(core::ConsumerId id, std::vector<core::Delivery> batch) {
  if (is_closing() || !events_ || events_->consumer != id) return;  // the queue takes them back
  if (events_->resume_from) resume_events(batch);
  std::vector<std::uint64_t> dropped;
  for (auto& d : batch) {
    if (events_->held_next == events_->held.size() && !output_full()) {
      write_event(d);
    } else if (events_->droppable && !d.message->persistent) {
      if (!slow_consumer_.drop(*log(), transport())) {
        close_after_flush(session::SlowConsumer::kGoodbyeGrace);
        return;
      }
      dropped.push_back(d.tag);
    } else {
      // Held in the core's count (unacked, using the stream's credit) until the client reads.
      events_->held.push_back(std::move(d));
    }
  }
  if (!dropped.empty()) broker_.ack(events_->consumer, std::move(dropped), nullptr);
  flush();
}

void Session::write_event(const core::Delivery& d) {
  const model::Message& m = *d.message;
  std::string& o = out();
  char id[36];
  m.id.to_chars(id);
  o.append("id: ");
  o.append(id, sizeof id);
  o.push_back('\n');
  if (events_->json) {
    append_data(o, delivery_json(d).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    const std::string_view body = m.body ? std::string_view(*m.body) : std::string_view();
    if (sendable_as_text(body)) {
      append_data(o, body);
    } else {
      o.append("event: base64\n");
      append_data(o, codec::base64_encode(body));
    }
  }
  event_acks_.stage(events_->consumer, d.tag);
}

void Session::resume_events(std::vector<core::Delivery>& batch) {
  // The subscription's queue hands out in arrival order, and the previous stream's unconfirmed
  // events go back to it at their places, flagged redelivered: they come as one batch, which
  // is the first one unless the broker has not yet seen the old connection end (then fresh
  // messages come first, and that batch later). The client had everything through its id.
  const auto through = find_last_event(batch, *events_->resume_from);
  if (!through) {
    // A batch of returned events without it: unknown (older than the window, so confirmed and
    // all that is left came after it; or never ours). Nothing is skipped; a comment says so.
    // A batch of fresh messages only: keep looking (one comparison a delivery).
    const bool returned = std::any_of(batch.begin(), batch.end(), [](const core::Delivery& d) { return d.redelivered; });
    if (returned || !model::MessageId::parse(*events_->resume_from)) {
      events_->resume_from.reset();
      out().append(": Last-Event-ID not among the unconfirmed events; resuming from the oldest\n\n");
    }
    return;
  }
  events_->resume_from.reset();
  std::vector<std::uint64_t> had;
  had.reserve(*through + 1);
  for (std::size_t i = 0; i <= *through; ++i) had.push_back(batch[i].tag);
  broker_.ack(events_->consumer, std::move(had), nullptr);
  batch.erase(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(*through + 1));
}

void Session::confirm_written(core::ConsumerId consumer, std::vector<std::uint64_t> tags) {
  if (events_ && events_->window && events_->consumer == consumer) {
    tags = events_->window->written(tags);
    if (tags.empty()) return;
  }
  broker_.ack(consumer, std::move(tags), nullptr);
}

void Session::drain_events() {
  auto& held = events_->held;
  while (events_->held_next < held.size() && !output_full() && !is_closing()) {
    write_event(held[events_->held_next]);
    held[events_->held_next++].message.reset();
  }
  if (events_->held_next == held.size()) {
    std::vector<core::Delivery>().swap(held);
    events_->held_next = 0;
  }
  flush();
}

}  // namespace carrier::http
