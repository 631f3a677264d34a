#include "client/mqtt_client.hpp"

#include <algorithm>
#include <exception>
#include <future>
#include <random>
#include <utility>
#include <variant>

#include "base/logging.hpp"
#include "client/connect_stream.hpp"
#include "net/tls_context.hpp"
#include "mqtt/codec/encoder.hpp"
#include "client/log.hpp"

namespace carrier::client {

namespace asio = net::asio;
namespace codec = mqtt::codec;

namespace {

// How often the I/O thread checks deadlines and keep-alive.
constexpr std::chrono::milliseconds kTick{100};
// A blocking wait gives the I/O thread's own deadline this much extra before giving up itself.
constexpr std::chrono::milliseconds kMqttWaitMargin{5'000};

std::string millis_text(std::chrono::milliseconds ms) {
  if (ms.count() % 1000 == 0) return std::to_string(ms.count() / 1000) + " s";
  return std::to_string(ms.count()) + " ms";
}

std::string random_client_id() {
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::random_device device;
  std::mt19937_64 random(device());
  std::string id = "carrier-";
  for (int i = 0; i < 12; ++i) id += kDigits[random() % 36];
  return id;
}

std::string reason_text(codec::ReasonCode reason, const codec::Properties& properties) {
  std::string text = codec::to_string(reason);
  if (properties.reason_string) text += " (" + *properties.reason_string + ")";
  return text;
}

}  // namespace

// ---- lifecycle -------------------------------------------------------------------------------

MqttClient::MqttClient() {
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] { io_.run(); });
}

MqttClient::~MqttClient() {
  close();
  work_.reset();
  thread_.join();
}

void MqttClient::on_error(MqttErrorCallback callback) { on_error_ = std::move(callback); }
void MqttClient::on_message(MqttMessageCallback callback) { on_message_ = std::move(callback); }

std::size_t MqttClient::in_flight() const {
  std::lock_guard lock(mutex_);
  return window_used_;
}

Status MqttClient::connect(std::string_view host, std::uint16_t port, MqttConnectOptions options) {
  if (auto s = check_not_io_thread(); !s) return s;
  State expected = State::idle;
  if (!state_.compare_exchange_strong(expected, State::connecting)) {
    return unexpected(Errc::invalid_argument, "connect() on a client that was already used");
  }
  options_ = std::move(options);
  auto framing = prepare_stream(stream_, options_.tls, options_.websocket_path, "mqtt", host);
  if (!framing) {
    state_.store(State::closed);
    return unexpected(std::move(framing).error());
  }
  websocket_ = std::move(*framing);
  if (options_.client_id.empty()) options_.client_id = random_client_id();
  options_.max_in_flight = std::max<std::uint16_t>(1, std::min<std::uint16_t>(options_.max_in_flight, 65534));
  window_.store(options_.max_in_flight);

  codec::Connect connect;
  connect.version = options_.version;
  connect.clean_start = options_.clean_start;
  connect.keep_alive = static_cast<std::uint16_t>(std::min<std::int64_t>(options_.keep_alive.count(), 65535));
  connect.client_id = options_.client_id;
  connect.username = options_.username;
  connect.password = options_.password;
  std::string bytes;
  codec::encode(connect, bytes);
  {
    std::lock_guard lock(mutex_);
    buffered_bytes_ += bytes.size();  // the writer takes it off once written
  }

  auto promise = std::make_shared<std::promise<Status>>();
  auto done = promise->get_future();
  std::string where = std::string(host) + ":" + std::to_string(port);
  asio::post(io_, [this, bytes = std::move(bytes), host = std::string(host), port, where, promise]() mutable {
    if (state_.load() != State::connecting) {  // close() came first
      std::lock_guard lock(mutex_);
      promise->set_value(unexpected(end_reason_.value_or(Error(Errc::shutting_down, "closed"))));
      return;
    }
    connack_ = [this, promise, where](Result<codec::Packet> answer) {
      if (answer) return promise->set_value(ok());
      Error error = std::move(answer).error();
      if (error.code == Errc::timed_out) {
        error.detail = "no CONNACK from " + where + " within " + millis_text(options_.timeout);
      }
      end_connection(error);
      promise->set_value(unexpected(std::move(error)));
    };
    connack_deadline_ = Clock::now() + options_.timeout;
    append_output(bytes);
    spawn(run_session(this, std::move(host), port), "session");
    spawn(tick_loop(this), "tick");
  });
  done.wait();
  return done.get();
}

Status MqttClient::disconnect() {
  if (auto s = check_not_io_thread(); !s) return s;
  State expected = State::connected;
  if (!state_.compare_exchange_strong(expected, State::closing)) {
    if (expected == State::closed) return ok();
    if (expected == State::idle) {
      close();
      return ok();
    }
    return unexpected(Errc::invalid_argument, "disconnect() while connecting or closing");
  }
  std::string bytes;
  codec::encode(codec::Disconnect{}, options_.version, bytes);
  {
    std::lock_guard lock(mutex_);
    buffered_bytes_ += bytes.size();
  }
  asio::post(io_, [this, bytes = std::move(bytes)] {
    if (state_.load() == State::closed) {
      std::lock_guard lock(mutex_);
      buffered_bytes_ -= bytes.size();
      return;
    }
    disconnect_queued_ = true;
    append_output(bytes);
  });
  std::unique_lock lock(mutex_);
  bool ended = changed_.wait_for(lock, options_.timeout + kMqttWaitMargin, [this] { return end_reason_.has_value(); });
  lock.unlock();
  if (!ended) {
    close();
    return unexpected(Errc::timed_out, "DISCONNECT not written within " + millis_text(options_.timeout));
  }
  return ok();
}

void MqttClient::close() {
  State current = state_.load();
  for (;;) {
    if (current == State::closed) return;
    if (current == State::idle) {
      if (!state_.compare_exchange_weak(current, State::closed)) continue;
      std::lock_guard lock(mutex_);
      end_reason_ = Error(Errc::shutting_down, "closed by the client");
      return;
    }
    if (state_.compare_exchange_weak(current, State::closing)) break;
  }
  asio::post(io_, [this] { end_connection(Error(Errc::shutting_down, "closed by the client")); });
}

// ---- caller-thread requests ------------------------------------------------------------------

Status MqttClient::check_connected() const {
  auto state = state_.load();
  if (state == State::connected) return ok();
  if (state == State::closed) {
    std::lock_guard lock(mutex_);
    return unexpected(end_reason_.value_or(Error(Errc::unavailable, "not connected")));
  }
  return unexpected(Errc::unavailable, "not connected");
}

Status MqttClient::check_not_io_thread() const {
  if (on_io_thread()) {
    return unexpected(Errc::invalid_argument, "blocking client call from a client callback (the I/O thread)");
  }
  return ok();
}

Result<std::uint16_t> MqttClient::take_packet_id(bool window) {
  std::unique_lock lock(mutex_);
  auto free = [&] {
    if (end_reason_) return true;
    if (window && window_used_ >= window_.load()) return false;
    return ids_used_ < 65535;
  };
  if (!free()) {
    if (on_io_thread()) return unexpected(Errc::invalid_argument, "in-flight window full on the I/O thread");
    changed_.wait(lock, free);
  }
  if (end_reason_) return unexpected(*end_reason_);
  while (ids_in_use_[next_id_]) next_id_ = static_cast<std::uint16_t>(next_id_ == 65535 ? 1 : next_id_ + 1);
  std::uint16_t id = next_id_;
  next_id_ = static_cast<std::uint16_t>(next_id_ == 65535 ? 1 : next_id_ + 1);
  ids_in_use_[id] = true;
  ++ids_used_;
  if (window) ++window_used_;
  return id;
}

void MqttClient::post_bytes(std::string bytes, std::uint16_t id, Answer done, bool counts_in_window) {
  const std::size_t size = bytes.size();
  {
    std::lock_guard lock(mutex_);
    buffered_bytes_ += size;
  }
  asio::post(io_, [this, bytes = std::move(bytes), id, done = std::move(done), counts_in_window]() mutable {
    if (state_.load() == State::closed) {
      Error reason(Errc::shutting_down, "closed");
      {
        std::lock_guard lock(mutex_);
        buffered_bytes_ -= bytes.size();
        if (end_reason_) reason = *end_reason_;
      }
      changed_.notify_all();
      if (done) {
        release_id(id, counts_in_window);
        done(unexpected(std::move(reason)));
      }
      return;
    }
    if (done) {
      pending_[id] = Pending{Clock::now() + options_.timeout, std::move(done), false, counts_in_window};
    }
    append_output(bytes);
  });
  wait_for_buffer();
}

void MqttClient::wait_for_buffer() {
  if (on_io_thread()) return;
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return buffered_bytes_ <= options_.max_buffered_bytes || end_reason_.has_value(); });
}

Result<codec::Packet> MqttClient::request(std::string bytes, std::uint16_t id) {
  auto promise = std::make_shared<std::promise<Result<codec::Packet>>>();
  auto done = promise->get_future();
  post_bytes(std::move(bytes), id, [promise](Result<codec::Packet> answer) { promise->set_value(std::move(answer)); },
             false);
  if (done.wait_for(options_.timeout + kMqttWaitMargin) != std::future_status::ready) {
    return unexpected(Errc::timed_out, "no answer from the client's I/O thread");
  }
  return done.get();
}

Status MqttClient::async_publish(std::string_view topic, std::string_view payload, std::uint8_t qos, bool retain,
                                 MqttPublishCallback done) {
  if (qos > 2) return unexpected(Errc::invalid_argument, "QoS must be 0, 1 or 2");
  if (auto s = check_connected(); !s) return s;
  codec::Publish publish;
  publish.qos = qos;
  publish.retain = retain;
  publish.topic = std::string(topic);
  publish.payload = std::string(payload);
  if (qos == 0) {
    std::string bytes;
    codec::encode(publish, options_.version, bytes);
    post_bytes(std::move(bytes), 0, {}, false);
    if (done) done(ok());
    return ok();
  }
  auto id = take_packet_id(true);
  if (!id) return unexpected(id.error());
  publish.packet_id = *id;
  std::string bytes;
  codec::encode(publish, options_.version, bytes);
  auto answer = [done = std::move(done)](Result<codec::Packet> result) {
    if (!done) return;
    if (result) return done(ok());
    done(unexpected(std::move(result).error()));
  };
  post_bytes(std::move(bytes), *id, std::move(answer), true);
  return ok();
}

Status MqttClient::publish(std::string_view topic, std::string_view payload, std::uint8_t qos, bool retain) {
  if (qos == 0) return async_publish(topic, payload, qos, retain, {});
  if (auto s = check_not_io_thread(); !s) return s;
  auto promise = std::make_shared<std::promise<Status>>();
  auto done = promise->get_future();
  if (auto s = async_publish(topic, payload, qos, retain, [promise](Status s) { promise->set_value(std::move(s)); });
      !s) {
    return s;
  }
  if (done.wait_for(options_.timeout + kMqttWaitMargin) != std::future_status::ready) {
    return unexpected(Errc::timed_out, "no answer from the client's I/O thread");
  }
  return done.get();
}

Result<std::vector<codec::ReasonCode>> MqttClient::subscribe(std::vector<codec::SubscribeTopic> topics) {
  if (topics.empty()) return unexpected(Errc::invalid_argument, "SUBSCRIBE needs at least one filter");
  if (auto s = check_not_io_thread(); !s) return unexpected(s.error());
  if (auto s = check_connected(); !s) return unexpected(s.error());
  auto id = take_packet_id(false);
  if (!id) return unexpected(id.error());
  codec::Subscribe subscribe;
  subscribe.packet_id = *id;
  subscribe.topics = std::move(topics);
  std::string bytes;
  codec::encode(subscribe, options_.version, bytes);
  auto answer = request(std::move(bytes), *id);
  if (!answer) return unexpected(std::move(answer).error());
  const auto* suback = std::get_if<codec::Suback>(&*answer);
  if (suback == nullptr) return unexpected(Errc::protocol_error, "SUBSCRIBE answered by something else than SUBACK");
  return suback->reasons;
}

Result<std::uint8_t> MqttClient::subscribe(std::string_view filter, std::uint8_t qos) {
  auto reasons = subscribe({codec::SubscribeTopic{.filter = std::string(filter), .qos = qos}});
  if (!reasons) return unexpected(std::move(reasons).error());
  if (reasons->size() != 1) return unexpected(Errc::protocol_error, "SUBACK with a wrong number of reason codes");
  auto reason = reasons->front();
  if (codec::is_failure(reason)) {
    return unexpected(Errc::permission_denied,
                      "subscription to " + std::string(filter) + " refused: " + codec::to_string(reason));
  }
  return codec::value(reason);
}

Status MqttClient::unsubscribe(std::vector<std::string> filters) {
  if (filters.empty()) return unexpected(Errc::invalid_argument, "UNSUBSCRIBE needs at least one filter");
  if (auto s = check_not_io_thread(); !s) return s;
  if (auto s = check_connected(); !s) return s;
  auto id = take_packet_id(false);
  if (!id) return unexpected(id.error());
  codec::Unsubscribe unsubscribe;
  unsubscribe.packet_id = *id;
  unsubscribe.filters = std::move(filters);
  std::string bytes;
  codec::encode(unsubscribe, options_.version, bytes);
  auto answer = request(std::move(bytes), *id);
  if (!answer) return unexpected(std::move(answer).error());
  if (!std::holds_alternative<codec::Unsuback>(*answer)) {
    return unexpected(Errc::protocol_error, "UNSUBSCRIBE answered by something else than UNSUBACK");
  }
  return ok();
}

Status MqttClient::ping() {
  if (auto s = check_not_io_thread(); !s) return s;
  if (auto s = check_connected(); !s) return s;
  auto promise = std::make_shared<std::promise<Status>>();
  auto done = promise->get_future();
  std::string bytes;
  codec::encode(codec::Pingreq{}, options_.version, bytes);
  {
    std::lock_guard lock(mutex_);
    buffered_bytes_ += bytes.size();
  }
  asio::post(io_, [this, bytes = std::move(bytes), promise] {
    if (state_.load() == State::closed) {
      {
        std::lock_guard lock(mutex_);
        buffered_bytes_ -= bytes.size();
        promise->set_value(unexpected(end_reason_.value_or(Error(Errc::shutting_down, "closed"))));
      }
      changed_.notify_all();
      return;
    }
    pings_.push_back([promise](Status s) { promise->set_value(std::move(s)); });
    ping_deadlines_.push_back(Clock::now() + options_.timeout);
    append_output(bytes);
  });
  if (done.wait_for(options_.timeout + kMqttWaitMargin) != std::future_status::ready) {
    return unexpected(Errc::timed_out, "no answer from the client's I/O thread");
  }
  return done.get();
}

Status MqttClient::wait_for_acks() {
  if (auto s = check_not_io_thread(); !s) return s;
  std::unique_lock lock(mutex_);
  bool done = changed_.wait_for(lock, options_.timeout + kMqttWaitMargin,
                                [this] { return window_used_ == 0 || end_reason_.has_value(); });
  if (publish_failure_) return unexpected(*publish_failure_);
  if (window_used_ == 0) return ok();
  if (end_reason_) return unexpected(*end_reason_);
  if (!done) return unexpected(Errc::timed_out, std::to_string(window_used_) + " publishes not acknowledged");
  return ok();
}

// ---- I/O thread ------------------------------------------------------------------------------

void MqttClient::spawn(asio::awaitable<void> coroutine, const char* what) {
  asio::co_spawn(io_, std::move(coroutine), [this, what](std::exception_ptr failure) {
    if (!failure) return;
    std::string text = "unknown exception";
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      text = e.what();
    } catch (...) {
    }
    log()->error("mqtt client {} coroutine failed: {}", what, text);
    end_connection(Error(Errc::io_error, std::string("mqtt client ") + what + " failed: " + text));
  });
}

void MqttClient::append_output(std::string_view bytes) {
  writer_.append(bytes);
}

asio::awaitable<void> MqttClient::run_session(MqttClient* self, std::string host, std::uint16_t port) {
  boost::system::error_code ec;
  auto endpoints =
      co_await self->resolver_.async_resolve(host, std::to_string(port), asio::redirect_error(asio::use_awaitable, ec));
  if (self->state_.load() != State::connecting) co_return;
  if (ec) {
    self->end_connection(Error(Errc::io_error, "resolve " + host + ": " + ec.message()));
    co_return;
  }
  const std::string failure = co_await connect_stream(self->stream_, endpoints, host + ":" + std::to_string(port));
  if (self->state_.load() != State::connecting) co_return;
  if (!failure.empty()) {
    self->end_connection(Error(Errc::io_error, failure));
    co_return;
  }
  if (self->websocket_) {
    auto upgraded = co_await self->websocket_->handshake(self->stream_, host, port);
    if (self->state_.load() != State::connecting) co_return;
    if (!upgraded) {
      self->end_connection(upgraded.error());
      co_return;
    }
  }
  self->last_read_ = self->last_write_ = Clock::now();
  self->spawn(write_loop(self), "writer");
  self->spawn(read_loop(self), "reader");
}

asio::awaitable<void> MqttClient::write_loop(MqttClient* self) {
  const auto ec = co_await self->writer_.run(
      self->stream_,
      {.closed = [self] { return self->state_.load() == State::closed; },
       .drained =
           [self] {
             if (!self->disconnect_queued_) return false;
             // DISCONNECT is written: the goodbye is complete.
             self->end_connection(Error(Errc::shutting_down, "disconnected"));
             return true;
           },
       .wrote =
           [self](std::size_t size) {
             {
               std::lock_guard lock(self->mutex_);
               self->buffered_bytes_ -= size;
             }
             self->changed_.notify_all();
             self->last_write_ = Clock::now();
           },
       .frame = WebSocketFraming::frame_hook(self->websocket_.get())});
  if (ec) self->end_connection(Error(Errc::io_error, "write to server: " + ec.message()));
}

asio::awaitable<void> MqttClient::read_loop(MqttClient* self) {
  std::vector<char> chunk(64 * 1024);
  std::string input;
  std::size_t need = 0;
  for (;;) {
    boost::system::error_code ec;
    std::size_t n =
        co_await self->stream_.async_read_some(asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (self->state_.load() == State::closing) {
        self->end_connection(Error(Errc::shutting_down, "disconnected"));
      } else if (ec == asio::error::eof) {
        self->end_connection(Error(Errc::io_error, "server closed the connection"));
      } else {
        self->end_connection(Error(Errc::io_error, "read from server: " + ec.message()));
      }
      co_return;
    }
    self->last_read_ = Clock::now();
    if (auto appended = WebSocketFraming::append_input(self->websocket_.get(), {chunk.data(), n}, input); !appended) {
      self->end_connection(appended.error());
      co_return;
    }
    if (input.size() < need) continue;
    std::size_t offset = 0;
    for (;;) {
      auto step = codec::decode(std::string_view(input).substr(offset), self->options_.version, self->options_.limits);
      if (step.error) {
        self->end_connection(Error(Errc::protocol_error, "bad packet from server: " + step.error->to_string()));
        co_return;
      }
      if (step.packet) {
        offset += step.consumed;
        self->handle_packet(std::move(*step.packet));
        if (self->state_.load() == State::closed) co_return;
        continue;
      }
      need = step.need_at_least;
      break;
    }
    input.erase(0, offset);
  }
}

asio::awaitable<void> MqttClient::tick_loop(MqttClient* self) {
  const auto keep_alive = std::chrono::duration_cast<Clock::duration>(self->options_.keep_alive);
  for (;;) {
    boost::system::error_code ec;
    self->tick_timer_.expires_after(kTick);
    co_await self->tick_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec || self->state_.load() == State::closed) co_return;
    auto now = Clock::now();
    if (self->connack_ && now > self->connack_deadline_) {
      auto done = std::move(*self->connack_);
      self->connack_.reset();
      done(unexpected(Errc::timed_out, "no CONNACK"));
      co_return;
    }
    if (!self->ping_deadlines_.empty() && now > self->ping_deadlines_.front()) {
      self->end_connection(
          Error(Errc::timed_out, "no PINGRESP from the server within " + millis_text(self->options_.timeout)));
      co_return;
    }
    for (const auto& [id, pending] : self->pending_) {
      if (now > pending.deadline) {
        self->end_connection(Error(Errc::timed_out, "packet " + std::to_string(id) + " not acknowledged within " +
                                                        millis_text(self->options_.timeout)));
        co_return;
      }
    }
    if (keep_alive.count() > 0 && self->state_.load() == State::connected && self->pings_.empty() &&
        now - self->last_write_ >= keep_alive / 2) {
      std::string bytes;
      codec::encode(codec::Pingreq{}, self->options_.version, bytes);
      {
        std::lock_guard lock(self->mutex_);
        self->buffered_bytes_ += bytes.size();
      }
      self->pings_.push_back([](Status) {});
      self->ping_deadlines_.push_back(now + self->options_.timeout);
      self->append_output(bytes);
    }
  }
}

void MqttClient::queue_packet(const codec::Packet& packet) {
  std::string bytes;
  codec::encode(packet, options_.version, bytes);
  {
    std::lock_guard lock(mutex_);
    buffered_bytes_ += bytes.size();
  }
  append_output(bytes);
}

void MqttClient::handle_packet(codec::Packet packet) {
  const bool v5 = options_.version == codec::Version::v5;
  if (auto* connack = std::get_if<codec::Connack>(&packet)) {
    if (!connack_) {
      end_connection(Error(Errc::protocol_error, "unexpected CONNACK"));
      return;
    }
    auto done = std::move(*connack_);
    connack_.reset();
    if (codec::value(connack->reason) != 0) {
      std::string reason = v5 ? reason_text(connack->reason, connack->properties)
                              : "return code " + std::to_string(codec::value(connack->reason));
      done(unexpected(Errc::permission_denied, "CONNECT refused: " + reason));
      return;
    }
    if (v5 && connack->properties.receive_maximum) {
      window_.store(std::min(options_.max_in_flight, *connack->properties.receive_maximum));
    }
    State expected = State::connecting;
    if (!state_.compare_exchange_strong(expected, State::connected)) {
      // close() came first; its end_connection is queued behind us.
      done(unexpected(Errc::shutting_down, "closed by the client"));
      return;
    }
    done(packet);
    return;
  }
  if (auto* publish = std::get_if<codec::Publish>(&packet)) {
    handle_publish(*publish);
    return;
  }
  if (auto* puback = std::get_if<codec::Puback>(&packet)) {
    if (codec::is_failure(puback->reason)) {
      complete(puback->packet_id,
               unexpected(Errc::protocol_error, "PUBLISH refused: " + reason_text(puback->reason, puback->properties)));
    } else {
      complete(puback->packet_id, std::move(packet));
    }
    return;
  }
  if (auto* pubrec = std::get_if<codec::Pubrec>(&packet)) {
    auto it = pending_.find(pubrec->packet_id);
    if (codec::is_failure(pubrec->reason)) {
      complete(pubrec->packet_id,
               unexpected(Errc::protocol_error, "PUBLISH refused: " + reason_text(pubrec->reason, pubrec->properties)));
      return;
    }
    if (it != pending_.end()) {
      it->second.released = true;
      it->second.deadline = Clock::now() + options_.timeout;
    }
    codec::Pubrel pubrel;
    pubrel.packet_id = pubrec->packet_id;
    if (it == pending_.end() && v5) pubrel.reason = codec::ReasonCode::packet_identifier_not_found;
    queue_packet(pubrel);
    return;
  }
  if (auto* pubcomp = std::get_if<codec::Pubcomp>(&packet)) {
    complete(pubcomp->packet_id, std::move(packet));
    return;
  }
  if (auto* pubrel = std::get_if<codec::Pubrel>(&packet)) {
    codec::Pubcomp pubcomp;
    pubcomp.packet_id = pubrel->packet_id;
    if (awaiting_pubrel_.erase(pubrel->packet_id) == 0 && v5) {
      pubcomp.reason = codec::ReasonCode::packet_identifier_not_found;
    }
    queue_packet(pubcomp);
    return;
  }
  if (auto* suback = std::get_if<codec::Suback>(&packet)) {
    complete(suback->packet_id, std::move(packet));
    return;
  }
  if (auto* unsuback = std::get_if<codec::Unsuback>(&packet)) {
    complete(unsuback->packet_id, std::move(packet));
    return;
  }
  if (std::holds_alternative<codec::Pingresp>(packet)) {
    if (pings_.empty()) return;  // unasked; harmless
    auto done = std::move(pings_.front());
    pings_.pop_front();
    ping_deadlines_.pop_front();
    done(ok());
    return;
  }
  if (auto* disconnect = std::get_if<codec::Disconnect>(&packet)) {
    end_connection(Error(Errc::unavailable,
                         "server sent DISCONNECT: " + reason_text(disconnect->reason, disconnect->properties)));
    return;
  }
  end_connection(Error(Errc::protocol_error,
                       std::string("unexpected ") + codec::to_string(codec::type_of(packet)) + " from server"));
}

void MqttClient::handle_publish(codec::Publish& publish) {
  bool deliver = true;
  if (publish.qos == 2) {
    // Delivered on PUBLISH (method A of the spec); a repeat before PUBREL is not delivered again.
    deliver = awaiting_pubrel_.insert(publish.packet_id).second;
  }
  if (deliver && on_message_) {
    MqttMessage message{std::move(publish.topic), std::move(publish.payload), publish.qos, publish.retain,
                        publish.dup};
    try {
      on_message_(message);
    } catch (const std::exception& e) {
      log()->error("mqtt message callback threw: {}", e.what());
    }
  }
  if (publish.qos == 1) {
    codec::Puback puback;
    puback.packet_id = publish.packet_id;
    queue_packet(puback);
  } else if (publish.qos == 2) {
    codec::Pubrec pubrec;
    pubrec.packet_id = publish.packet_id;
    queue_packet(pubrec);
  }
}

void MqttClient::complete(std::uint16_t id, Result<codec::Packet> answer) {
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    log()->debug("answer for packet id {} that nobody waits for", id);
    return;
  }
  Pending pending = std::move(it->second);
  pending_.erase(it);
  if (!answer && pending.counts_in_window) {
    std::lock_guard lock(mutex_);
    if (!publish_failure_) publish_failure_ = answer.error();
  }
  // The callback first: once the id is free, wait_for_acks() may return, and by then every
  // confirmation must have been reported.
  pending.done(std::move(answer));
  release_id(id, pending.counts_in_window);
}

void MqttClient::release_id(std::uint16_t id, bool counts_in_window) {
  {
    std::lock_guard lock(mutex_);
    if (!ids_in_use_[id]) return;
    ids_in_use_[id] = false;
    --ids_used_;
    if (counts_in_window) --window_used_;
  }
  changed_.notify_all();
}

void MqttClient::end_connection(const Error& reason) {
  State previous = state_.exchange(State::closed);
  if (previous == State::closed) return;
  {
    std::lock_guard lock(mutex_);
    end_reason_ = reason;
    buffered_bytes_ -= writer_.discard();
  }
  changed_.notify_all();
  boost::system::error_code ignored;
  stream_.socket().close(ignored);
  resolver_.cancel();
  writer_.wake();
  tick_timer_.cancel();
  if (connack_) {
    auto done = std::move(*connack_);
    connack_.reset();
    done(unexpected(reason));
  }
  auto pending = std::move(pending_);
  pending_.clear();
  for (auto& [id, entry] : pending) {
    entry.done(unexpected(reason));
    release_id(id, entry.counts_in_window);
  }
  auto pings = std::move(pings_);
  pings_.clear();
  ping_deadlines_.clear();
  for (auto& done : pings) done(unexpected(reason));
  if (previous == State::connected) {
    log()->debug("mqtt connection ended: {}", reason.to_string());
    if (on_error_) on_error_(reason);
  }
}

}  // namespace carrier::client
