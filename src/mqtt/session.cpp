#include "mqtt/session.hpp"

#include <fmt/format.h>

#include "base/logging.hpp"
#include "core/disk_alarm.hpp"
#include "mqtt/codec/encoder.hpp"
#include "mqtt/message_mapping.hpp"
#include "mqtt/reason_codes.hpp"
#include "mqtt/service.hpp"
#include "mqtt/session_record.hpp"
#include "mqtt/log.hpp"

namespace carrier::mqtt {

namespace {

// Reason strings are cut to something reasonable (the detail may quote client input).
std::string reason_text(std::string_view detail) {
  std::string out(detail.substr(0, 200));
  if (!codec::is_valid_utf8(out)) return "invalid request";
  return out;
}

}  // namespace

Session::Session(std::shared_ptr<net::Transport> transport, core::Broker& broker, Service& service,
                 const Options& options, net::HandshakeSlot handshake)
    : session::ProtocolSession(std::move(transport)),
      broker_(broker),
      service_(service),
      permissions_(service.authenticator().access(), shard()),
      options_(options),
      handshake_(std::move(handshake)),
      slow_consumer_(options_.slow_consumer, "QoS 0 messages") {
  // Until CONNECT, only a CONNECT-sized packet is read (raised in handle_connect).
  limits_.max_packet_size = std::min(options_.max_packet_size, options_.max_connect_packet_size);
  outbound_window_ = std::max<std::uint16_t>(1, options_.max_inflight);
  set_max_queued_bytes(options_.max_pending_output_bytes);
  limit_message_rate(options_.max_messages_per_second,
                     options_.message_burst != 0 ? options_.message_burst : options_.max_messages_per_second);
}

Session::~Session() = default;

std::shared_ptr<Session> Session::self() { return shared_from_this(); }

void Session::send(const codec::Packet& packet) {
  std::string& buffer = out();
  const std::size_t before = buffer.size();
  codec::encode(packet, version_, buffer);
  // Nothing larger than the MQTT 5 client's maximum packet size goes out (MQTT-3.1.2-24);
  // deliveries check it themselves (deliver.cpp), these are the broker's own packets.
  if (client_max_packet_size_ != 0 && buffer.size() - before > client_max_packet_size_) {
    buffer.resize(before);
    send_trimmed(packet);
  }
}

void Session::send_trimmed(const codec::Packet& packet) {
  // The reason string and user properties are what the spec lets a sender leave out to fit
  // (MQTT-3.2.2-19/20 and the like for every acknowledgement and DISCONNECT); a PUBLISH's user
  // properties belong to its message (deliveries do not come this way).
  codec::Packet trimmed = packet;
  std::visit(
      [](auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (!std::is_same_v<T, codec::Publish> && requires { p.properties.reason_string; }) {
          p.properties.reason_string.reset();
          p.properties.user_properties.clear();
        }
      },
      trimmed);
  std::string& buffer = out();
  const std::size_t before = buffer.size();
  codec::encode(trimmed, version_, buffer);
  if (buffer.size() - before <= client_max_packet_size_) return;
  // Even the bare packet does not fit: it is not sent, and a client that cannot take the
  // broker's answers cannot go on. Mosquitto closes the same way when its CONNACK does not fit.
  log()->info("{} {} of {} bytes exceeds the client's maximum packet size {}: closing", log_prefix(),
              codec::to_string(codec::type_of(packet)), buffer.size() - before, client_max_packet_size_);
  buffer.resize(before);
  close_after_flush();
}

void Session::on_data(std::string& buffer) {
  if (is_closing()) {
    buffer.clear();
    return;
  }
  if (connect_received_ && !connected_) {
    // Still settling the CONNECT (someone else resumed reading, e.g. the memory gauge).
    pause_reading();
    return;
  }
  if (buffer.size() < need_at_least_) return;
  need_at_least_ = 0;
  received_at_ms_ = broker_.now_ms();
  std::size_t offset = 0;
  while (!is_closing() && !is_paused() && offset < buffer.size()) {
    auto r = codec::decode(std::string_view(buffer).substr(offset), version_, limits_);
    if (r.error) {
      flush_publishes();
      on_decode_error(*r.error, r.connect_version);
      break;
    }
    if (!r.packet) {
      need_at_least_ = r.need_at_least;
      break;
    }
    if (std::holds_alternative<codec::Publish>(*r.packet) && broker_.memory() != nullptr &&
        broker_.memory()->over_limit()) {
      // Past the memory limit: leave this PUBLISH unread and stop reading until consumers
      // drain (the relief resumes every connection; this one then decodes it again).
      log()->debug("{} memory limit reached: pausing this publisher", log_prefix());
      pause_reading();
      break;
    }
    if (const auto* p = std::get_if<codec::Publish>(&*r.packet);
        p != nullptr && p->qos >= 1 && broker_.disk_alarm() != nullptr && broker_.disk_alarm()->holding()) {
      // The store's disk is under [journal] disk_free_limit_bytes: a QoS 1/2 PUBLISH (persistent,
      // message_mapping) waits unread until space returns; QoS 0 keeps flowing.
      log()->debug("{} disk free limit reached: pausing this publisher", log_prefix());
      pause_reading();
      break;
    }
    if (const auto* p = std::get_if<codec::Publish>(&*r.packet); p != nullptr && publishes_to_blocked_topic(*p)) {
      // A subscriber of its topic is over its backlog: QoS 0 included, the publisher waits in
      // TCP back-pressure, never disconnected; the relief resumes it.
      log()->debug("{} topic held back by a slow subscriber: pausing this publisher", log_prefix());
      pause_reading();
      break;
    }
    // Over [limits] max_messages_per_second: this PUBLISH waits unread until its token is due.
    if (std::holds_alternative<codec::Publish>(*r.packet) && !take_message_token()) break;
    offset += r.consumed;
    handle(*r.packet);
  }
  flush_publishes();
  buffer.erase(0, offset);
  if (is_closing()) buffer.clear();
  flush();
}

void Session::handle(codec::Packet& packet) {
  if (!std::holds_alternative<codec::Publish>(packet)) flush_publishes();
  if (!connect_received_ && !std::holds_alternative<codec::Connect>(packet)) {
    log()->debug("{} {} before CONNECT: closing", log_prefix(), codec::to_string(codec::type_of(packet)));
    close();
    return;
  }
  std::visit(
      [this](auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, codec::Connect>) {
          handle_connect(p);
        } else if constexpr (std::is_same_v<T, codec::Publish>) {
          handle_publish(p);
        } else if constexpr (std::is_same_v<T, codec::Puback>) {
          handle_puback(p);
        } else if constexpr (std::is_same_v<T, codec::Pubrec>) {
          handle_pubrec(p);
        } else if constexpr (std::is_same_v<T, codec::Pubrel>) {
          handle_pubrel(p);
        } else if constexpr (std::is_same_v<T, codec::Pubcomp>) {
          handle_pubcomp(p);
        } else if constexpr (std::is_same_v<T, codec::Subscribe>) {
          handle_subscribe(p);
        } else if constexpr (std::is_same_v<T, codec::Unsubscribe>) {
          handle_unsubscribe(p);
        } else if constexpr (std::is_same_v<T, codec::Pingreq>) {
          send(codec::Pingresp{});
        } else if constexpr (std::is_same_v<T, codec::Disconnect>) {
          handle_disconnect(p);
        } else if constexpr (std::is_same_v<T, codec::Auth>) {
          handle_auth(p);
        } else {
          // CONNACK, SUBACK, UNSUBACK, PINGRESP: server packets.
          disconnect(codec::ReasonCode::protocol_error,
                     fmt::format("{} is sent by servers only", codec::to_string(codec::type_of(codec::Packet(p)))));
        }
      },
      packet);
}

void Session::on_decode_error(const codec::DecodeError& error, std::optional<codec::Version> connect_version) {
  log()->debug("{} bad packet: {}", log_prefix(), error.to_string());
  if (!connect_received_) {
    // A CONNECT that did not decode: answer in the shape of the version it asked for, when known.
    if (connect_version == codec::Version::v5) {
      version_ = codec::Version::v5;
      connect_received_ = true;
      refuse_connect(error.reason, error.detail);
      return;
    }
    if (error.reason == codec::ReasonCode::unsupported_protocol_version) {
      // MQTT 3.1.1 section 3.2.2.3: return code 1, in the 3.1.1 shape a client of any level reads.
      version_ = codec::Version::v3_1_1;
      send(codec::Connack{false, static_cast<codec::ReasonCode>(codec::ConnectReturnCode::unacceptable_protocol_version),
                          {}});
      close_after_flush();
      return;
    }
    close();
    return;
  }
  disconnect(error.reason, error.detail);
}

void Session::disconnect(codec::ReasonCode reason, std::string_view detail) {
  if (is_closing()) return;
  if (!connected_) {
    if (connect_received_) {
      refuse_connect(reason, detail);
    } else {
      close();
    }
    return;
  }
  log()->debug("{} DISCONNECT {}: {}", log_prefix(), codec::to_string(reason), detail);
  if (version_ == codec::Version::v5) {
    codec::Disconnect d{.reason = reason};
    if (!detail.empty()) d.properties.reason_string = reason_text(detail);
    send(d);
  }
  close_after_flush();
}

void Session::start_watchdog() {
  watchdog_ = std::make_unique<net::asio::steady_timer>(executor());
  net::asio::co_spawn(executor(), watchdog_loop(self()), [](std::exception_ptr) {});
}

net::asio::awaitable<void> Session::watchdog_loop(std::shared_ptr<Session> self) {
  using namespace std::chrono;
  const auto started = steady_clock::now();
  while (!self->is_closing()) {
    // Ticks of a quarter of the keep-alive (bounded), so a timeout is seen within 25% of it.
    const auto tick = self->keep_alive_ == 0 ? milliseconds(250)
                                             : std::clamp(milliseconds(self->keep_alive_ * 250), milliseconds(50),
                                                          milliseconds(1000));
    self->watchdog_->expires_after(tick);
    boost::system::error_code ec;
    co_await self->watchdog_->async_wait(net::asio::redirect_error(net::asio::use_awaitable, ec));
    if (ec || self->is_closing()) co_return;
    const auto now = steady_clock::now();
    if (!self->connect_received_) {
      if (now - started > milliseconds(self->options_.connect_timeout_ms)) {
        log()->debug("{} no CONNECT within {} ms: closing", self->log_prefix(), self->options_.connect_timeout_ms);
        self->close();
        co_return;
      }
      continue;
    }
    // MQTT: a client silent for one and a half keep-alive periods is gone.
    // Not while the broker itself holds the reading back (memory limit).
    if (self->connected_ && self->keep_alive_ != 0 && !self->is_paused() &&
        now - self->last_read() > milliseconds(std::int64_t(self->keep_alive_) * 1500)) {
      log()->info("{} client '{}' silent for 1.5 x {} s: closing", self->log_prefix(), self->client_id_,
                  self->keep_alive_);
      self->disconnect(codec::ReasonCode::keep_alive_timeout,
                       fmt::format("nothing received for {} ms", std::int64_t(self->keep_alive_) * 1500));
      co_return;
    }
  }
}

void Session::on_write_started() { written_acks_.on_write_started(); }

void Session::on_write_done() {
  // Those of a subscription released since are back with the core already.
  written_acks_.on_write_done([this](core::ConsumerId consumer, session::WrittenAcks::Tags tags) {
    if (by_consumer_.contains(consumer)) broker_.ack(consumer, std::move(tags), nullptr);
  });
  // Deliveries that waited for the output to drain (deliver.cpp).
  if (backlog_ && !backlog_->empty()) {
    pump();
    flush();
  }
}

void Session::publish_will_now() {
  if (!will_) return;
  log()->debug("{} publishing the will of '{}' to '{}'", log_prefix(), client_id_, will_->topic);
  broker_.send({will_message(*will_, broker_.next_message_id(), broker_.now_ms(), id())}, nullptr);
  will_.reset();
}

Departure Session::make_departure(bool with_will) {
  Departure d;
  d.connection = id();
  d.persistent = session_expiry_ > 0;
  d.expiry_seconds = session_expiry_;
  d.protocol_level = protocol_level();
  for (const auto& [filter, sub] : subscriptions_) d.state.subscriptions.emplace(filter, sub.options);
  auto record_of = [](const auto& records, std::uint16_t packet_id) {
    auto it = records.find(packet_id);
    return it == records.end() ? model::MessageId{} : it->second;
  };
  // Those still waiting for the store count too: the message is on its way, a resend must not
  // route it again (its record, if any, is in the message's own store batch).
  for (const auto& [packet_id, confirmed] : inbound_qos2_) {
    d.state.inbound_qos2.push_back({packet_id, record_of(inbound_records_, packet_id)});
  }
  for (const auto& [packet_id, f] : inflight_) {
    if (f.released) d.state.outbound_pubrel.push_back({packet_id, record_of(outbound_records_, packet_id)});
  }
  if (with_will && will_) {
    const std::uint32_t delay =
        version_ == codec::Version::v5 ? will_->properties.will_delay_interval.value_or(0) : 0;
    if (d.persistent && delay > 0) {
      d.will = will_message(*will_, broker_.next_message_id(), broker_.now_ms(), id());
      d.will_delay_seconds = delay;
    } else {
      publish_will_now();
    }
  }
  will_.reset();
  return d;
}

void Session::detach_all(std::function<void()> done) {
  const bool persistent = session_expiry_ > 0;
  // One countdown holds `done` (it may carry the whole departure); each release gets a handle
  // to it, never a copy of `done`, so leaving costs O(subscriptions).
  struct Countdown {
    std::size_t remaining;
    std::function<void()> done;
  };
  auto count = std::make_shared<Countdown>(Countdown{subscriptions_.size() + 1, std::move(done)});
  auto step = [count]() {
    if (--count->remaining == 0 && count->done) count->done();
  };
  // A session ending with its connection deletes its durable subscriptions and lets go of its
  // shared groups (it may hold them from when it was persistent).
  for (auto& [filter, sub] : subscriptions_) release(sub, !persistent && sub.named, step);
  subscriptions_.clear();
  by_consumer_.clear();
  if (backlog_) backlog_->clear();
  inflight_.clear();
  written_acks_.clear();
  step();
}

void Session::take_over(bool successor_clean_start, std::function<void(std::optional<Departure>)> done) {
  if (departing_ && !taken_over_) {
    // Closed and still detaching: the session state goes to the successor when that is done,
    // not to the registry after the successor has been granted an empty one.
    pending_take_over_ = std::move(done);
    return;
  }
  if (is_closed() || taken_over_) {
    done(std::nullopt);
    return;
  }
  log()->info("{} client '{}' connected again elsewhere: session taken over", log_prefix(), client_id_);
  taken_over_ = true;
  registered_ = false;
  if (connected_ && version_ == codec::Version::v5) {
    // With a reason string: paho 1.6 reads a DISCONNECT's reason code only when properties follow.
    codec::Disconnect d{.reason = codec::ReasonCode::session_taken_over};
    d.properties.reason_string = "another connection took over this client's session";
    send(d);
  }
  // MQTT 5 3.1.4: the old connection's will is published (subject to its delay).
  Departure d = make_departure(connected_ && !clean_disconnect_);
  (void)successor_clean_start;
  detach_all([d = std::move(d), done = std::move(done)]() mutable { done(std::move(d)); });
  close_after_flush();
}

void Session::on_closed() {
  log()->debug("{} closed", log_prefix());
  slow_consumer_.log_dropped(*log(), transport());
  if (watchdog_) watchdog_->cancel();
  handshake_.release();
  if (taken_over_) return;  // take_over() has detached and reported
  // A will belongs to an accepted connection that did not say goodbye, also when the broker
  // closes it to shut down (MQTT 5 3.1.2.5: the server closed the connection).
  const bool with_will = connected_ && !clean_disconnect_;
  if (registered_) service_.begin_departure();
  Departure d = make_departure(with_will);
  if (!registered_) {
    detach_all(nullptr);
    return;
  }
  registered_ = false;
  departing_ = true;
  // The registry hears of it once the core has the consumers removed, so a reconnecting client
  // does not compete with this connection's consumers.
  detach_all([s = self(), d = std::move(d)]() mutable {
    s->departing_ = false;
    if (s->pending_take_over_) {
      auto handed = std::move(s->pending_take_over_);
      s->pending_take_over_ = nullptr;
      s->service_.end_departure();
      handed(std::move(d));
      return;
    }
    s->service_.depart(s->client_id_, std::move(d));
  });
}

void Session::shutdown() {
  if (is_closing()) return;
  if (!connected_) {
    close();
    return;
  }
  flush_publishes();
  shutting_down_ = true;
  if (publish_batches_in_flight_ == 0) say_goodbye();
  // else: the last store confirmation says goodbye (handle_publish.cpp).
}

void Session::close_by_admin(std::string_view reason) {
  admin_reason_ = reason.empty() ? std::string("closed by an administrator") : std::string(reason);
  log()->info("{} closed by an administrator: {}", log_prefix(), admin_reason_);
  shutdown();
}

void Session::say_goodbye() {
  if (!admin_reason_.empty()) {
    disconnect(codec::ReasonCode::administrative_action, admin_reason_);
  } else {
    disconnect(codec::ReasonCode::server_shutting_down, "broker shutting down");
  }
}

void Session::save_subscriptions(std::vector<SubscriptionChange> changes, std::function<void()> done) {
  if (session_expiry_ == 0 || !registered_ || changes.empty()) {
    if (done) done();
    return;
  }
  service_.update(client_id_, id(), std::move(changes), shard(), std::move(done));
}

core::StateRecord Session::qos2_record(bool inbound, std::uint16_t packet_id) {
  const model::MessageId record = broker_.next_message_id();
  (inbound ? inbound_records_ : outbound_records_)[packet_id] = record;
  return core::StateRecord{std::string(kQos2Queue),
                           encode_qos2(Qos2Record{client_id_, inbound, packet_id}, record, broker_.now_ms()), {}};
}

void Session::drop_qos2_record(std::unordered_map<std::uint16_t, model::MessageId>& records, std::uint16_t packet_id) {
  auto it = records.find(packet_id);
  if (it == records.end()) return;
  broker_.write_state({core::StateRecord{std::string(kQos2Queue), nullptr, it->second}}, nullptr);
  records.erase(it);
}

}  // namespace carrier::mqtt
