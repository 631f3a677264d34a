#include "client/stomp_client.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <exception>
#include <utility>
#include <vector>

#include "base/logging.hpp"
#include "client/connect_stream.hpp"
#include "net/tls_context.hpp"
#include "stomp/codec/encoder.hpp"
#include "client/log.hpp"

namespace carrier::client {

namespace asio = net::asio;
using stomp::codec::Command;
using stomp::codec::Frame;
using stomp::codec::Version;

namespace {

// The CONNECT's entry in PendingRequests; receipt ids are "rcpt-N", so it cannot collide.
constexpr std::string_view kConnectId = "CONNECT";
// Server silence tolerated before the connection is declared dead, in negotiated intervals
// (the spec leaves the margin to the implementation; ActiveMQ uses 1.5, we allow for a loaded
// loopback test machine).
constexpr int kSilenceFactor = 2;
// A blocking wait gives the I/O thread's own timeout this much extra before giving up itself.
// The I/O thread always completes a request (answer, timeout or disconnect), so this only
// guards against a bug there.
constexpr Milliseconds kWaitMargin{5'000};

std::string ms_text(Milliseconds ms) {
  if (ms.count() % 1000 == 0) return std::to_string(ms.count() / 1000) + " s";
  return std::to_string(ms.count()) + " ms";
}

// "10,20" -> {10, 20}; anything unparsable counts as 0 (no heart-beat), as servers do.
std::pair<Milliseconds, Milliseconds> parse_heart_beat(const std::string* value) {
  if (value == nullptr) return {Milliseconds{0}, Milliseconds{0}};
  auto comma = value->find(',');
  if (comma == std::string::npos) return {Milliseconds{0}, Milliseconds{0}};
  auto parse = [](std::string_view text) {
    std::int64_t n = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    return (ec == std::errc() && n > 0) ? Milliseconds{n} : Milliseconds{0};
  };
  return {parse(std::string_view(*value).substr(0, comma)),
          parse(std::string_view(*value).substr(comma + 1))};
}

Milliseconds negotiate(Milliseconds mine, Milliseconds theirs) {
  if (mine.count() == 0 || theirs.count() == 0) return Milliseconds{0};
  return std::max(mine, theirs);
}

Version parse_version(const std::string* value) {
  if (value == nullptr) return Version::v1_0;  // a 1.0 server sends no version header
  if (*value == "1.2") return Version::v1_2;
  if (*value == "1.1") return Version::v1_1;
  return Version::v1_0;
}

// An ERROR frame as an Error: its `message` header and the first line of its body.
Error error_from_frame(const Frame& frame, Errc code) {
  std::string detail = "server ERROR";
  if (const auto* message = frame.header("message")) detail += ": " + *message;
  if (!frame.body.empty()) {
    std::string_view first_line(frame.body);
    first_line = first_line.substr(0, first_line.find('\n'));
    if (!first_line.empty() && (frame.header("message") == nullptr ||
                                first_line != *frame.header("message"))) {
      detail += " (" + std::string(first_line) + ")";
    }
  }
  return Error(code, std::move(detail));
}

}  // namespace

std::string_view to_string(AckMode mode) {
  switch (mode) {
    case AckMode::automatic: return "auto";
    case AckMode::client: return "client";
    case AckMode::client_individual: return "client-individual";
  }
  return "auto";
}

std::optional<AckMode> parse_ack_mode(std::string_view text) {
  if (text == "auto") return AckMode::automatic;
  if (text == "client") return AckMode::client;
  if (text == "client-individual") return AckMode::client_individual;
  return std::nullopt;
}

Result<Endpoint> parse_endpoint(std::string_view text, std::uint16_t default_port) {
  Endpoint endpoint;
  std::string_view port_text;
  if (text.starts_with('[')) {
    auto close = text.find(']');
    if (close == std::string_view::npos) {
      return unexpected(Errc::invalid_argument, "no ']' in address " + std::string(text));
    }
    endpoint.host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return unexpected(Errc::invalid_argument, "bad address " + std::string(text));
      }
      port_text = rest.substr(1);
    }
  } else {
    auto colon = text.rfind(':');
    if (colon != std::string_view::npos && text.find(':') != colon) {
      return unexpected(Errc::invalid_argument,
                        "IPv6 address needs brackets: [" + std::string(text) + "]:port");
    }
    endpoint.host = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) port_text = text.substr(colon + 1);
  }
  if (endpoint.host.empty()) {
    return unexpected(Errc::invalid_argument, "no host in address " + std::string(text));
  }
  endpoint.port = default_port;
  if (!port_text.empty() || text.ends_with(':')) {
    unsigned port = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port == 0 ||
        port > 65535) {
      return unexpected(Errc::invalid_argument, "bad port in address " + std::string(text));
    }
    endpoint.port = static_cast<std::uint16_t>(port);
  }
  return endpoint;
}

std::string normalize_destination(std::string_view name) {
  if (name.starts_with('/')) return std::string(name);
  return "/queue/" + std::string(name);
}

const std::string* Message::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

// ---- lifecycle -------------------------------------------------------------------------------

StompClient::StompClient() {
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] { io_.run(); });
}

StompClient::~StompClient() {
  close();
  // Without the guard, run() returns once close() has ended every coroutine and timer.
  work_.reset();
  thread_.join();
}

void StompClient::on_error(ErrorCallback callback) { on_error_ = std::move(callback); }

Status StompClient::connect(std::string_view host, std::uint16_t port, ConnectOptions options) {
  if (auto s = check_not_io_thread(); !s) return s;
  State expected = State::idle;
  if (!state_.compare_exchange_strong(expected, State::connecting)) {
    return unexpected(Errc::invalid_argument, "connect() on a client that was already used");
  }
  options_ = std::move(options);
  auto framing = prepare_stream(stream_, options_.tls, options_.websocket_path, "v12.stomp", host);
  if (!framing) {
    state_.store(State::closed);
    return unexpected(std::move(framing).error());
  }
  websocket_ = std::move(*framing);

  Headers headers{{"accept-version", options_.version},
                  {"host", options_.vhost.empty() ? std::string(host) : options_.vhost}};
  if (!options_.login.empty()) {
    headers.emplace_back("login", options_.login);
    headers.emplace_back("passcode", options_.passcode);
  }
  headers.emplace_back("heart-beat", std::to_string(options_.heart_beat.send.count()) + "," +
                                         std::to_string(options_.heart_beat.receive.count()));
  std::string bytes;
  stomp::codec::encode(Command::connect, headers, {}, Version::v1_0, bytes);
  {
    std::lock_guard lock(mutex_);
    buffered_bytes_ += bytes.size();
  }

  auto promise = std::make_shared<std::promise<Status>>();
  auto done = promise->get_future();
  std::string where = std::string(host) + ":" + std::to_string(port);
  asio::post(io_, [this, bytes = std::move(bytes), host = std::string(host), port, where,
                   promise]() mutable {
    if (state_.load() != State::connecting) {  // close() came first
      promise->set_value(unexpected(end_reason()));
      return;
    }
    auto completion = [this, promise, where](Result<Frame> answer) {
      if (answer) {
        promise->set_value(ok());
        return;
      }
      Error error = std::move(answer).error();
      if (error.code == Errc::timed_out) {
        error.detail = "no CONNECTED from " + where + " within " + ms_text(options_.timeout);
      }
      end_connection(error);  // no-op when the connection already ended with this error
      promise->set_value(unexpected(std::move(error)));
    };
    (void)pending_.add(std::string(kConnectId), options_.timeout, std::move(completion));
    append_output(bytes);
    spawn(run_session(this, std::move(host), port), "session");
  });
  done.wait();
  return done.get();
}

Status StompClient::disconnect() {
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
  auto promise = std::make_shared<std::promise<Status>>();
  auto done = promise->get_future();
  post_frame(Command::disconnect, {}, {}, [promise](Status s) { promise->set_value(s); });
  Status result = ok();
  if (done.wait_for(options_.timeout + kWaitMargin) != std::future_status::ready) {
    result = unexpected(Errc::timed_out, "no RECEIPT for DISCONNECT");
  } else {
    result = done.get();
  }
  asio::post(io_, [this] { end_connection(Error(Errc::shutting_down, "disconnected")); });
  return result;
}

void StompClient::close() {
  State current = state_.load();
  for (;;) {
    if (current == State::closed) return;
    if (current == State::idle) {
      if (!state_.compare_exchange_weak(current, State::closed)) continue;
      std::lock_guard lock(mutex_);
      end_reason_ = Error(Errc::shutting_down, "closed by the client");
      return;
    }
    // closing: a disconnect() in progress gets cut short, which is what close() is for.
    if (state_.compare_exchange_weak(current, State::closing)) break;
  }
  asio::post(io_, [this] { end_connection(Error(Errc::shutting_down, "closed by the client")); });
}

std::string StompClient::server() const {
  std::lock_guard lock(mutex_);
  return server_;
}

std::string StompClient::session() const {
  std::lock_guard lock(mutex_);
  return session_;
}

// ---- caller-thread requests ------------------------------------------------------------------

Status StompClient::check_connected() const {
  auto state = state_.load();
  if (state == State::connected) return ok();
  if (state == State::closed) return unexpected(end_reason());
  return unexpected(Errc::unavailable, "not connected");
}

Status StompClient::check_not_io_thread() const {
  if (on_io_thread()) {
    return unexpected(Errc::invalid_argument,
                      "blocking client call from a client callback (the I/O thread)");
  }
  return ok();
}

Error StompClient::end_reason() const {
  std::lock_guard lock(mutex_);
  return end_reason_.value_or(Error(Errc::unavailable, "not connected"));
}

std::string StompClient::next_id(std::string_view prefix) {
  return std::string(prefix) + std::to_string(next_id_.fetch_add(1));
}

void StompClient::post_frame(Command command, Headers headers, std::string_view body,
                             ReceiptCallback on_receipt, std::function<void()> prepare) {
  std::string receipt_id;
  PendingRequests::Completion done;
  if (on_receipt) {
    receipt_id = next_id("rcpt-");
    headers.emplace_back("receipt", receipt_id);
    done = [this, receipt_id, on_receipt = std::move(on_receipt)](Result<Frame> answer) {
      if (answer) return on_receipt(ok());
      Error error = std::move(answer).error();
      if (error.code == Errc::timed_out) {
        error.detail = "no RECEIPT for " + receipt_id + " within " + ms_text(options_.timeout);
      }
      on_receipt(unexpected(std::move(error)));
    };
  }
  std::string bytes;
  stomp::codec::encode(command, headers, body, version_.load(), bytes);
  const std::size_t size = bytes.size();
  {
    std::lock_guard lock(mutex_);
    buffered_bytes_ += size;
  }
  asio::post(io_, [this, bytes = std::move(bytes), receipt_id = std::move(receipt_id),
                   done = std::move(done), prepare = std::move(prepare)]() mutable {
    if (prepare && state_.load() != State::closed) prepare();
    submit(std::move(bytes), std::move(receipt_id), std::move(done));
  });
  // Back-pressure: wait for the writer to catch up. Never on the I/O thread, which is the one
  // that drains the buffer.
  if (on_io_thread()) return;
  std::unique_lock lock(mutex_);
  buffer_drained_.wait(lock, [this] {
    return buffered_bytes_ <= options_.max_buffered_bytes || end_reason_.has_value();
  });
}

Status StompClient::send_frame(Command command, Headers headers, std::string_view body,
                               bool with_receipt, std::function<void()> prepare) {
  if (auto s = check_connected(); !s) return s;
  if (!with_receipt) {
    post_frame(command, std::move(headers), body, {}, std::move(prepare));
    return ok();
  }
  if (auto s = check_not_io_thread(); !s) return s;
  auto promise = std::make_shared<std::promise<Status>>();
  auto done = promise->get_future();
  post_frame(command, std::move(headers), body, [promise](Status s) { promise->set_value(s); },
             std::move(prepare));
  if (done.wait_for(options_.timeout + kWaitMargin) != std::future_status::ready) {
    return unexpected(Errc::timed_out, "no answer from the client's I/O thread");
  }
  return done.get();
}

Status StompClient::send(std::string_view destination, std::string_view body, Headers headers,
                         bool with_receipt) {
  SendOptions options;
  options.headers = std::move(headers);
  options.receipt = with_receipt;
  return send(destination, body, options);
}

namespace {
Headers send_headers(std::string_view destination, const SendOptions& options) {
  Headers headers;
  headers.reserve(options.headers.size() + 3);
  headers.emplace_back("destination", std::string(destination));
  headers.insert(headers.end(), options.headers.begin(), options.headers.end());
  if (!options.transaction.empty()) headers.emplace_back("transaction", options.transaction);
  return headers;
}
}  // namespace

Status StompClient::send(std::string_view destination, std::string_view body,
                         const SendOptions& options) {
  return send_frame(Command::send, send_headers(destination, options), body, options.receipt);
}

void StompClient::async_send(std::string_view destination, std::string_view body,
                             SendOptions options, ReceiptCallback on_receipt) {
  if (auto s = check_connected(); !s) return on_receipt(s);
  post_frame(Command::send, send_headers(destination, options), body, std::move(on_receipt));
}

std::future<Status> StompClient::async_send(std::string_view destination, std::string_view body,
                                            SendOptions options) {
  auto promise = std::make_shared<std::promise<Status>>();
  auto done = promise->get_future();
  async_send(destination, body, std::move(options),
             [promise](Status s) { promise->set_value(std::move(s)); });
  return done;
}

Result<std::string> StompClient::subscribe(std::string_view destination,
                                           SubscribeOptions options, MessageCallback callback) {
  if (auto s = check_connected(); !s) return unexpected(s.error());
  std::string id = options.id.empty() ? next_id("sub-") : options.id;
  Headers headers{{"destination", std::string(destination)},
                  {"id", id},
                  {"ack", std::string(to_string(options.ack))}};
  if (options.prefetch) {
    headers.emplace_back("activemq.prefetchSize", std::to_string(*options.prefetch));
    headers.emplace_back("prefetch-count", std::to_string(*options.prefetch));
  }
  if (!options.selector.empty()) headers.emplace_back("selector", options.selector);
  headers.insert(headers.end(), options.headers.begin(), options.headers.end());
  auto prepare = [this, id, callback = std::move(callback)]() mutable {
    subscriptions_[id] = Subscription{std::move(callback)};
  };
  if (auto s = send_frame(Command::subscribe, std::move(headers), {}, options.receipt,
                          std::move(prepare));
      !s) {
    return unexpected(s.error());
  }
  return id;
}

Status StompClient::unsubscribe(std::string_view id, bool with_receipt) {
  // Forgotten first: MESSAGE frames already on the way for it are dropped, not queued.
  auto prepare = [this, id = std::string(id)] { subscriptions_.erase(id); };
  return send_frame(Command::unsubscribe, Headers{{"id", std::string(id)}}, {}, with_receipt,
                    std::move(prepare));
}

Result<Message> StompClient::receive(Milliseconds timeout) {
  if (auto s = check_not_io_thread(); !s) return unexpected(s.error());
  std::unique_lock lock(mutex_);
  inbox_ready_.wait_for(lock, timeout,
                        [this] { return !inbox_.empty() || end_reason_.has_value(); });
  if (!inbox_.empty()) {
    Message message = std::move(inbox_.front());
    inbox_.pop_front();
    return message;
  }
  if (end_reason_) return unexpected(*end_reason_);
  return unexpected(Errc::timed_out, "no message within " + ms_text(timeout));
}

Status StompClient::ack_or_nack(Command command, const Message& message,
                                std::string_view transaction) {
  Headers headers;
  switch (version_.load()) {
    case Version::v1_2:
      // The `ack` header is required for client acks in 1.2; a server that left it out most
      // likely accepts the message id there.
      headers.emplace_back("id", message.ack_id.empty() ? message.message_id : message.ack_id);
      break;
    case Version::v1_1:
      headers.emplace_back("message-id", message.message_id);
      headers.emplace_back("subscription", message.subscription);
      break;
    case Version::v1_0:
      if (command == Command::nack) {
        return unexpected(Errc::invalid_argument, "NACK needs STOMP 1.1 or later");
      }
      headers.emplace_back("message-id", message.message_id);
      break;
  }
  if (!transaction.empty()) headers.emplace_back("transaction", std::string(transaction));
  return send_frame(command, std::move(headers), {}, false);
}

Status StompClient::ack(const Message& message, std::string_view transaction) {
  return ack_or_nack(Command::ack, message, transaction);
}

Status StompClient::nack(const Message& message, std::string_view transaction) {
  return ack_or_nack(Command::nack, message, transaction);
}

Status StompClient::begin(std::string_view transaction) {
  return send_frame(Command::begin, Headers{{"transaction", std::string(transaction)}}, {},
                    false);
}

Status StompClient::commit(std::string_view transaction, bool with_receipt) {
  return send_frame(Command::commit, Headers{{"transaction", std::string(transaction)}}, {},
                    with_receipt);
}

Status StompClient::abort(std::string_view transaction, bool with_receipt) {
  return send_frame(Command::abort, Headers{{"transaction", std::string(transaction)}}, {},
                    with_receipt);
}

// ---- I/O thread ------------------------------------------------------------------------------

void StompClient::spawn(asio::awaitable<void> coroutine, const char* what) {
  // Ordinary I/O failures come back through redirect_error; an exception here is a bug (or
  // bad_alloc): log it and end the connection rather than the process.
  asio::co_spawn(io_, std::move(coroutine), [this, what](std::exception_ptr failure) {
    if (!failure) return;
    std::string text = "unknown exception";
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      text = e.what();
    } catch (...) {
    }
    log()->error("client {} coroutine failed: {}", what, text);
    end_connection(Error(Errc::io_error, std::string("client ") + what + " failed: " + text));
  });
}

void StompClient::submit(std::string bytes, std::string receipt_id,
                         PendingRequests::Completion done) {
  if (state_.load() == State::closed) {
    {
      std::lock_guard lock(mutex_);
      buffered_bytes_ -= bytes.size();
    }
    buffer_drained_.notify_all();
    if (done) done(unexpected(end_reason()));
    return;
  }
  if (done) {
    // Ids come from a counter, so add() cannot find a duplicate.
    (void)pending_.add(std::move(receipt_id), options_.timeout, std::move(done));
  }
  append_output(bytes);
}

void StompClient::append_output(std::string_view bytes) {
  writer_.append(bytes);
}

asio::awaitable<void> StompClient::run_session(StompClient* self, std::string host,
                                               std::uint16_t port) {
  boost::system::error_code ec;
  auto endpoints = co_await self->resolver_.async_resolve(
      host, std::to_string(port), asio::redirect_error(asio::use_awaitable, ec));
  if (self->state_.load() != State::connecting) co_return;  // timed out or closed meanwhile
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

asio::awaitable<void> StompClient::write_loop(StompClient* self) {
  const auto ec = co_await self->writer_.run(
      self->stream_, {.closed = [self] { return self->state_.load() == State::closed; },
                      .drained = {},
                      .wrote = [self](std::size_t size) {
                        {
                          std::lock_guard lock(self->mutex_);
                          self->buffered_bytes_ -= size;
                        }
                        self->buffer_drained_.notify_all();
                        self->last_write_ = Clock::now();
                      },
                      .frame = WebSocketFraming::frame_hook(self->websocket_.get())});
  if (ec) self->end_connection(Error(Errc::io_error, "write to server: " + ec.message()));
}

asio::awaitable<void> StompClient::read_loop(StompClient* self) {
  std::vector<char> chunk(64 * 1024);
  std::string input;
  std::size_t need = 0;  // the decoder said: no progress before the input holds this much
  for (;;) {
    boost::system::error_code ec;
    std::size_t n = co_await self->stream_.async_read_some(
        asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (self->state_.load() == State::closing) {
        // The server closes after the DISCONNECT receipt; that is the goodbye, not a failure.
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
      // Nothing before CONNECTED is escaped, so 1.0 rules until the version is known.
      Version version =
          self->state_.load() == State::connecting ? Version::v1_0 : self->version_.load();
      auto step = stomp::codec::decode(std::string_view(input).substr(offset), version,
                                       self->options_.limits);
      if (!step) {
        self->end_connection(
            Error(Errc::protocol_error, "bad frame from server: " + step.error().detail));
        co_return;
      }
      offset += step->consumed;
      if (step->frame) {
        self->handle_frame(std::move(*step->frame));
        if (self->state_.load() == State::closed) co_return;
        continue;
      }
      if (step->consumed > 0) continue;
      need = step->need_at_least;
      break;
    }
    input.erase(0, offset);
  }
}

asio::awaitable<void> StompClient::heart_beat_loop(StompClient* self) {
  Milliseconds tick = Milliseconds::max();
  if (self->send_interval_.count() > 0) tick = std::min(tick, self->send_interval_ / 2);
  if (self->receive_interval_.count() > 0) tick = std::min(tick, self->receive_interval_ / 2);
  tick = std::max(tick, Milliseconds{1});
  for (;;) {
    boost::system::error_code ec;
    self->heart_beat_timer_.expires_after(tick);
    co_await self->heart_beat_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec || self->state_.load() == State::closed) co_return;
    auto now = Clock::now();
    if (self->receive_interval_.count() > 0 &&
        now - self->last_read_ > kSilenceFactor * self->receive_interval_) {
      self->end_connection(Error(Errc::timed_out,
                                 "server silent for longer than " +
                                     ms_text(kSilenceFactor * self->receive_interval_) +
                                     " (heart-beat " + ms_text(self->receive_interval_) + ")"));
      co_return;
    }
    // Send when the next tick would be too late to keep within the interval.
    if (self->send_interval_.count() > 0 && self->writer_.idle() &&
        now - self->last_write_ + tick >= self->send_interval_) {
      {
        std::lock_guard lock(self->mutex_);
        self->buffered_bytes_ += 1;
      }
      self->append_output("\n");
    }
  }
}

void StompClient::handle_frame(Frame frame) {
  switch (frame.command) {
    case Command::connected:
      handle_connected(frame);
      return;
    case Command::message:
      handle_message(std::move(frame));
      return;
    case Command::receipt: {
      const std::string* id = frame.header("receipt-id");
      if (id == nullptr || !pending_.complete(*id, frame)) {
        // A late receipt for a request that already timed out, most likely.
        log()->debug("RECEIPT for no waiting request ({})", id ? *id : "no receipt-id");
      }
      return;
    }
    case Command::error: {
      // A refused CONNECT is nearly always credentials; later ERRORs are the server rejecting
      // a frame. Either way the server closes the connection after it, so everything waiting
      // fails with the server's words.
      auto code =
          state_.load() == State::connecting ? Errc::permission_denied : Errc::protocol_error;
      end_connection(error_from_frame(frame, code));
      return;
    }
    default:
      end_connection(Error(Errc::protocol_error,
                           "unexpected " + std::string(stomp::codec::to_string(frame.command)) +
                               " frame from server"));
      return;
  }
}

void StompClient::handle_connected(const Frame& frame) {
  if (state_.load() != State::connecting) {
    end_connection(Error(Errc::protocol_error, "second CONNECTED frame"));
    return;
  }
  version_.store(parse_version(frame.header("version")));
  auto [server_send, server_receive] = parse_heart_beat(frame.header("heart-beat"));
  send_interval_ = negotiate(options_.heart_beat.send, server_receive);
  receive_interval_ = negotiate(options_.heart_beat.receive, server_send);
  {
    std::lock_guard lock(mutex_);
    if (const auto* s = frame.header("server")) server_ = *s;
    if (const auto* s = frame.header("session")) session_ = *s;
  }
  State expected = State::connecting;
  // close() may have moved the state on meanwhile; its end_connection is already queued.
  if (!state_.compare_exchange_strong(expected, State::connected)) return;
  if (send_interval_.count() > 0 || receive_interval_.count() > 0) {
    spawn(heart_beat_loop(this), "heart-beat");
  }
  (void)pending_.complete(kConnectId, frame);
}

void StompClient::handle_message(Frame frame) {
  Message message;
  message.headers = std::move(frame.headers);
  message.body = std::move(frame.body);
  if (const auto* v = message.header("destination")) message.destination = *v;
  if (const auto* v = message.header("message-id")) message.message_id = *v;
  if (const auto* v = message.header("subscription")) message.subscription = *v;
  if (const auto* v = message.header("ack")) message.ack_id = *v;

  Subscription* subscription = nullptr;
  if (message.subscription.empty()) {
    // 1.0 servers may leave the header out; with one subscription there is no doubt.
    if (subscriptions_.size() == 1) subscription = &subscriptions_.begin()->second;
  } else {
    auto it = subscriptions_.find(message.subscription);
    if (it == subscriptions_.end()) {
      log()->debug("MESSAGE for unknown subscription {} dropped", message.subscription);
      return;
    }
    subscription = &it->second;
  }
  if (subscription != nullptr && subscription->callback) {
    try {
      subscription->callback(message);
    } catch (const std::exception& e) {
      log()->error("message callback threw: {}", e.what());
    }
    return;
  }
  {
    std::lock_guard lock(mutex_);
    inbox_.push_back(std::move(message));
  }
  inbox_ready_.notify_one();
}

void StompClient::end_connection(const Error& reason) {
  State previous = state_.exchange(State::closed);
  if (previous == State::closed) return;
  {
    std::lock_guard lock(mutex_);
    end_reason_ = reason;
    buffered_bytes_ -= writer_.discard();
  }
  inbox_ready_.notify_all();
  buffer_drained_.notify_all();
  boost::system::error_code ignored;
  stream_.socket().close(ignored);
  resolver_.cancel();
  writer_.wake();
  heart_beat_timer_.cancel();
  pending_.fail_all(reason);
  subscriptions_.clear();
  if (previous == State::connected) {
    log()->debug("connection ended: {}", reason.to_string());
    if (on_error_) on_error_(reason);
  }
}

}  // namespace carrier::client
