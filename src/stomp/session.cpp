#include "stomp/session.hpp"

#include <fmt/format.h>

#include "base/logging.hpp"
#include "core/disk_alarm.hpp"
#include "stomp/codec/encoder.hpp"
#include "stomp/destination_name.hpp"
#include "stomp/log.hpp"

namespace carrier::stomp {

Session::Session(std::shared_ptr<net::Transport> transport, core::Broker& broker, const Options& options,
                 auth::Authenticator& authenticator, net::HandshakeSlot handshake)
    : session::ProtocolSession(std::move(transport)),
      broker_(broker),
      options_(options),
      authenticator_(authenticator),
      permissions_(authenticator.access(), shard()),
      slow_consumer_(options_.slow_consumer, "topic messages"),
      handshake_(std::move(handshake)) {
  // Until the client is let in, only a CONNECT-sized frame is read (raised in on_authenticated).
  limits_.max_frame_bytes = std::min(options_.max_frame_bytes, options_.max_connect_bytes);
  limits_.max_headers = options_.max_headers;
  set_max_queued_bytes(options_.max_pending_output_bytes);
  limit_message_rate(options_.max_messages_per_second,
                     options_.message_burst != 0 ? options_.message_burst : options_.max_messages_per_second);
  session_id_ = fmt::format("carrier-{}", id());
}

Session::~Session() = default;

void Session::begin() {
  if (const auto why = handshake_.refusal(); why && *why != net::Refusal::connecting) {
    // A per-source limit (the listener logged and counted it): refused before reading anything.
    if (*why == net::Refusal::connection_rate) {
      fail(Refusal::connection_rate_exceeded, "connecting too fast from this address; try again later");
    } else {
      fail(Refusal::too_many_connections,
           fmt::format("too many connections ({} limit); try again later", net::to_string(*why)));
    }
    flush();
    return;
  }
  if (!handshake_.held()) {
    // Too many connections are logging in at once: refuse this one before reading anything.
    thread_local std::chrono::steady_clock::time_point last_warning;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_warning > std::chrono::seconds(10)) {  // a flood must not flood the log too
      last_warning = now;
      log()->warn("{} refused: too many connections have not completed CONNECT", log_prefix());
    }
    fail(Refusal::server_busy, "too many connections are logging in; try again later");
    flush();
    return;
  }
  connect_deadline_ = std::make_unique<net::asio::steady_timer>(executor());
  connect_deadline_->expires_after(std::chrono::milliseconds(options_.connect_timeout_ms));
  connect_deadline_->async_wait(session::bind_weak(this, [](const auto& self, const boost::system::error_code& ec) {
    if (!ec) self->on_connect_deadline();
  }));
}

void Session::on_connect_deadline() {
  // A CONNECT being checked is answered by the authenticator (its queue is bounded).
  if (is_closing() || connected_ || authenticating_) return;
  log()->debug("{} no CONNECT within {} ms: closing", log_prefix(), options_.connect_timeout_ms);
  fail(Refusal::connect_timeout, fmt::format("no complete CONNECT frame within {} ms", options_.connect_timeout_ms));
  flush();
}

void Session::encode(codec::Command command, const codec::Headers& headers, std::string_view body) {
  codec::encode(command, headers, body, version_, out());
}

void Session::fail(Refusal why, std::string_view detail, const codec::Frame* cause) {
  if (is_closing()) return;
  auto error = error_frame(why, cause != nullptr ? cause->command : codec::Command::error, detail,
                           cause != nullptr ? cause->header("receipt") : nullptr);
  // A frame naming a destination: the line names it too (a field in the JSON log format).
  const std::string* destination = cause != nullptr ? cause->header("destination") : nullptr;
  log()->debug("{} ERROR: {} {}", destination != nullptr ? log_prefix(*destination) : log_prefix(),
               error.headers.front().second, detail);
  encode(codec::Command::error, error.headers, error.body);
  if (error.keeps_connection) {
    flush();
  } else if (error.bounded_close) {
    close_after_flush(std::chrono::seconds(1));
  } else {
    close_after_flush();
  }
}

void Session::send_receipt(const std::string& receipt_id) {
  encode(codec::Command::receipt, {{"receipt-id", receipt_id}});
  flush();
}

void Session::maybe_receipt(const codec::Frame& frame) {
  if (const auto* r = frame.header("receipt")) send_receipt(*r);
}

void Session::on_data(std::string& buffer) {
  if (is_closing()) {
    buffer.clear();
    return;
  }
  if (authenticating_) {
    // Still checking CONNECT's password (someone else resumed reading, e.g. the memory gauge).
    pause_reading();
    return;
  }
  if (buffer.size() < need_at_least_) return;
  need_at_least_ = 0;
  std::size_t offset = 0;
  while (!is_closing() && !disconnecting_ && !authenticating_ && offset < buffer.size()) {
    auto step = codec::decode(std::string_view(buffer).substr(offset), version_, limits_);
    if (!step) {
      flush_sends();
      const auto& e = step.error();
      // The refused frame's receipt may have been read already: the ERROR names it (spec, ERROR).
      codec::Frame cause;
      const auto input = std::string_view(buffer).substr(offset);
      if (auto receipt = codec::peek_header(input, "receipt", version_)) cause.headers.emplace_back("receipt", *receipt);
      const auto why = refusal_for(e.code, Operation::decode);
      if (why == Refusal::frame_too_large && !connected_) {
        fail(why, fmt::format("before CONNECTED a frame may have at most {} bytes: {}", limits_.max_frame_bytes, e.detail),
             &cause);
        break;
      }
      fail(why, e.detail, &cause);
      break;
    }
    if (!step->frame) {
      offset += step->consumed;
      need_at_least_ = step->need_at_least;
      break;
    }
    if (step->frame->command == codec::Command::send && broker_.memory() != nullptr &&
        broker_.memory()->over_limit()) {
      // Past the memory limit: leave this SEND unread and stop reading until consumers drain.
      log()->debug("{} memory limit reached: pausing this producer", log_prefix());
      pause_reading();
      break;
    }
    if (step->frame->command == codec::Command::send && broker_.disk_alarm() != nullptr &&
        broker_.disk_alarm()->holding() && is_persistent(*step->frame)) {
      // The store's disk is under [journal] disk_free_limit_bytes: this persistent SEND waits
      // unread until space returns (the alarm's relief resumes every connection).
      log()->debug("{} disk free limit reached: pausing this producer", log_prefix());
      pause_reading();
      break;
    }
    if (step->frame->command == codec::Command::send && sends_to_blocked_destination(*step->frame)) {
      // Its queue is full (overflow = "block") or its topic has a subscriber over its backlog:
      // leave this SEND unread until that drains.
      log()->debug("{} destination full: pausing this producer", log_prefix());
      pause_reading();
      break;
    }
    // Over [limits] max_messages_per_second: this SEND waits unread until its token is due.
    if (step->frame->command == codec::Command::send && !take_message_token()) break;
    offset += step->consumed;
    handle(*step->frame);
  }
  flush_sends();
  buffer.erase(0, offset);
  if (disconnecting_ || is_closing()) buffer.clear();
  flush();
}

bool Session::is_persistent(const codec::Frame& frame) {
  const auto* flag = frame.header("persistent");
  return flag != nullptr && *flag == "true";  // as send_headers reads it
}

bool Session::sends_to_blocked_destination(const codec::Frame& frame) const {
  const auto* pressure = broker_.pressure();
  if (pressure == nullptr || !pressure->any()) return false;
  const auto* text = frame.header("destination");
  if (text == nullptr) return false;
  std::string_view rest(*text);
  while (true) {
    auto comma = rest.find(',');
    auto one = rest.substr(0, comma);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    auto dest = parse_destination(one, false);
    if (dest && dest->kind != model::DestinationKind::temp_queue && pressure->blocked(dest->key())) return true;
    if (comma == std::string_view::npos) return false;
    rest.remove_prefix(comma + 1);
  }
}

void Session::handle(codec::Frame& frame) {
  using codec::Command;
  if (!connected_ && frame.command != Command::connect && frame.command != Command::stomp) {
    fail(Refusal::not_connected, fmt::format("{} received before CONNECT", codec::to_string(frame.command)), &frame);
    return;
  }
  if (frame.command != Command::send) flush_sends();
  switch (frame.command) {
    case Command::connect:
    case Command::stomp: handle_connect(frame); return;
    case Command::send: handle_send(frame); return;
    case Command::subscribe: handle_subscribe(frame); return;
    case Command::unsubscribe: handle_unsubscribe(frame); return;
    case Command::ack: handle_ack(frame, true); return;
    case Command::nack: handle_ack(frame, false); return;
    case Command::begin: handle_begin(frame); return;
    case Command::commit: handle_commit(frame); return;
    case Command::abort: handle_abort(frame); return;
    case Command::disconnect: handle_disconnect(frame); return;
    case Command::connected:
    case Command::message:
    case Command::receipt:
    case Command::error:
      fail(Refusal::unexpected_frame, fmt::format("{} is a server frame", codec::to_string(frame.command)), &frame);
      return;
  }
}

void Session::deliver(core::ConsumerId id, std::vector<core::Delivery> batch) {
  if (is_closing()) return;  // the queue takes them back when the subscription is removed
  auto by = by_consumer_.find(id);
  if (by == by_consumer_.end()) return;
  auto it = subscriptions_.find(by->second);
  if (it == subscriptions_.end()) return;
  Subscription& sub = it->second;
  std::vector<std::uint64_t> dropped;
  for (auto& d : batch) {
    if (held_.empty() && !output_full()) {
      encode_delivery(sub, id, d);
    } else if (sub.droppable && !d.message->persistent) {
      slow_consumer(sub, dropped, d.tag);
      if (is_closing()) return;
    } else {
      // Past the output bound: the message stays counted in the core (unacked, holding this
      // subscription's credit) and is encoded once the client has read enough.
      held_.push_back(Held{id, std::move(d)});
    }
  }
  if (!dropped.empty()) broker_.ack(sub.consumer, std::move(dropped), nullptr);
  flush();
}

void Session::slow_consumer(Subscription& sub, std::vector<std::uint64_t>& dropped, std::uint64_t tag) {
  if (!slow_consumer_.drop(*log(), transport(), sub.id)) {
    // The client is not reading: the ERROR gets a moment to go out, no more (error_frame).
    fail(Refusal::slow_consumer,
         fmt::format("more than {} bytes of output unread (max_pending_output_bytes)", options_.max_pending_output_bytes));
    return;
  }
  dropped.push_back(tag);
}

void Session::drain_held() {
  while (held_next_ < held_.size() && !output_full() && !is_closing()) {
    Held& h = held_[held_next_++];
    auto by = by_consumer_.find(h.consumer);
    if (by == by_consumer_.end()) continue;  // unsubscribed: the queue has it back
    auto it = subscriptions_.find(by->second);
    if (it == subscriptions_.end()) continue;
    encode_delivery(it->second, h.consumer, h.delivery);
    h.delivery.message.reset();
  }
  if (held_next_ == held_.size()) {
    std::vector<Held>().swap(held_);
    held_next_ = 0;
  }
  flush();
}

void Session::encode_delivery(Subscription& sub, core::ConsumerId id, const core::Delivery& d) {
  char id_text[36];
  char ack_text[48];
  const model::Message& m = *d.message;
  transport().count_out();
  codec::FrameWriter w(out(), codec::Command::message, version_);
  w.header("subscription", sub.id);
  m.id.to_chars(id_text);
  w.header("message-id", std::string_view(id_text, sizeof id_text));
  switch (m.destination.kind) {
    case model::DestinationKind::queue: w.header("destination", "/queue/", m.destination.name); break;
    case model::DestinationKind::topic:
      if (!m.destination.name.empty() && m.destination.name.front() == '$') {
        w.header("destination", format_destination(m.destination));  // an exchange: "/exchange/..."
      } else {
        w.header("destination", "/topic/", m.destination.name);
      }
      break;
    case model::DestinationKind::temp_queue: w.header("destination", "/temp-queue/", m.destination.name); break;
  }
  // A wildcard subscription numbers its deliveries itself: its children's tags overlap.
  const bool child = id != sub.consumer;
  const std::uint64_t number = child ? sub.next_number++ : d.tag;
  if (version_ == codec::Version::v1_2 && sub.ack_mode != core::AckMode::auto_ack) {
    auto r = fmt::format_to_n(ack_text, sizeof ack_text, "{}.{}", sub.number, number);
    w.header("ack", std::string_view(ack_text, r.size));
  }
  // Present on every delivery, as RabbitMQ sends it: clients test it for "false" too.
  w.header("redelivered", d.redelivered ? "true" : "false");
  w.header("delivery-count", static_cast<std::int64_t>(d.delivery_count));
  if (m.persistent) w.header("persistent", "true");
  w.header("priority", static_cast<std::int64_t>(m.priority));
  w.header("timestamp", m.timestamp_ms);
  if (m.expires_ms != 0) w.header("expires", m.expires_ms);
  if (!m.correlation_id.empty()) w.header("correlation-id", m.correlation_id);
  if (!m.reply_to.empty()) w.header("reply-to", m.reply_to);
  if (!m.type.empty()) w.header("type", m.type);
  if (!m.content_type.empty()) w.header("content-type", m.content_type);
  for (const auto& [name, value] : m.properties) w.header(name, value);
  w.finish(m.body ? std::string_view(*m.body) : std::string_view());
  if (sub.ack_mode != core::AckMode::auto_ack) {
    sub.unacked.emplace(number, Pending{id, d.tag, d.message});
  } else {
    written_acks_.stage(id, d.tag);  // a wildcard subscription's child acks as itself
  }
}

void Session::on_write_started() { written_acks_.on_write_started(); }

void Session::on_write_done() {
  // Those of a subscription removed since are back in their queue already.
  written_acks_.on_write_done([this](core::ConsumerId consumer, session::WrittenAcks::Tags tags) {
    if (by_consumer_.contains(consumer)) broker_.ack(consumer, std::move(tags), nullptr);
  });
  if (!held_.empty()) drain_held();
}

void Session::attach_child(core::ConsumerId parent, core::ConsumerId child) {
  auto by = by_consumer_.find(parent);
  if (by == by_consumer_.end()) return;  // unsubscribed: the queues detach the child themselves
  auto* sub = find_subscription(by->second);
  if (sub == nullptr) return;
  sub->children.push_back(child);
  by_consumer_.emplace(child, sub->id);
}

void Session::detach_child(core::ConsumerId parent, core::ConsumerId child) {
  by_consumer_.erase(child);
  auto by = by_consumer_.find(parent);
  if (by == by_consumer_.end()) return;
  if (auto* sub = find_subscription(by->second)) {
    std::erase(sub->children, child);
  }
}

void Session::release_subscriptions() {
  for (auto& [id, sub] : subscriptions_) broker_.unsubscribe(sub.consumer, nullptr);
  subscriptions_.clear();
  by_consumer_.clear();
  written_acks_.clear();
}

void Session::on_closed() {
  log()->debug("{} closed", log_prefix());
  // Open transactions are aborted: their sends are dropped; deliveries they acked are still
  // held by the subscriptions and go back to their queues with them.
  if (auto* memory = broker_.memory()) {
    for (const auto& [name, tx] : transactions_) memory->sub(static_cast<std::int64_t>(tx.bytes));
  }
  transactions_.clear();
  held_.clear();  // their queues take them back with the subscriptions
  held_next_ = 0;
  slow_consumer_.log_dropped(*log(), transport());
  release_subscriptions();
  for (const auto& name : temp_queues_) {
    broker_.delete_queue(model::Destination{model::DestinationKind::temp_queue, name}, nullptr);
  }
  temp_queues_.clear();
  if (heartbeat_timer_) heartbeat_timer_->cancel();
  if (connect_deadline_) connect_deadline_->cancel();
  handshake_.release();
}

void Session::shutdown() {
  if (is_closing()) return;
  if (!connected_) {
    close();
    return;
  }
  flush_sends();
  disconnecting_ = true;
  shutting_down_ = true;
  if (sends_in_flight_ == 0) complete_disconnect();
  // else: the last store confirmation calls complete_disconnect(), which says goodbye.
}

void Session::close_by_admin(std::string_view reason) {
  admin_reason_ = reason.empty() ? std::string("closed by an administrator") : std::string(reason);
  log()->info("{} closed by an administrator: {}", log_prefix(), admin_reason_);
  shutdown();
}

void Session::complete_disconnect() {
  if (!disconnect_receipt_.empty()) send_receipt(disconnect_receipt_);
  if (shutting_down_ && !admin_reason_.empty()) {
    fail(Refusal::closed_by_administrator, admin_reason_);
  } else if (shutting_down_) {
    fail(Refusal::shutting_down);
  } else {
    close_after_flush();
  }
}

Session::Subscription* Session::find_subscription(std::string_view id) {
  auto it = subscriptions_.find(std::string(id));
  return it == subscriptions_.end() ? nullptr : &it->second;
}

void Session::start_heartbeats(std::uint32_t send_ms, std::uint32_t receive_ms) {
  if (send_ms == 0 && receive_ms == 0) return;
  heartbeat_timer_ = std::make_unique<net::asio::steady_timer>(executor());
  net::asio::co_spawn(executor(), heartbeat_loop(shared_from_this(), send_ms, receive_ms), [](std::exception_ptr) {});
}

net::asio::awaitable<void> Session::heartbeat_loop(std::shared_ptr<Session> self, std::uint32_t send_ms,
                                                   std::uint32_t receive_ms) {
  using namespace std::chrono;
  const std::uint32_t smallest = std::min(send_ms == 0 ? UINT32_MAX : send_ms, receive_ms == 0 ? UINT32_MAX : receive_ms);
  const auto tick = milliseconds(std::max<std::uint32_t>(smallest / 2, 10));
  while (!self->is_closing()) {
    self->heartbeat_timer_->expires_after(tick);
    boost::system::error_code ec;
    co_await self->heartbeat_timer_->async_wait(net::asio::redirect_error(net::asio::use_awaitable, ec));
    if (ec || self->is_closing()) co_return;
    const auto now = steady_clock::now();
    // Allow the client twice its interval: the spec leaves the margin to the receiver.
    // A producer paused at the memory limit is not read from: its silence is ours.
    // In 64 bits: twice a 32-bit interval the client chose must not wrap to a tiny timeout.
    const std::uint64_t allowed_ms = 2 * std::uint64_t{receive_ms};
    if (receive_ms != 0 && !self->is_paused() && now - self->last_read() > milliseconds(allowed_ms)) {
      log()->info("{} no heart-beat from the client for {} ms: closing", self->log_prefix(), allowed_ms);
      self->fail(Refusal::heart_beat_timeout, fmt::format("nothing received for {} ms", allowed_ms));
      co_return;
    }
    if (send_ms != 0 && self->queued_bytes() == 0 && now - self->last_write() >= milliseconds(send_ms) - tick) {
      self->out().push_back('\n');
      self->flush();
    }
  }
}

}  // namespace carrier::stomp
