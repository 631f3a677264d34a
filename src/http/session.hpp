#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/asio.hpp"  // before Beast: it includes Asio

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "auth/authenticator.hpp"
#include "core/broker.hpp"
#include "http/codec/query.hpp"
#include "http/options.hpp"
#include "net/handshake_limit.hpp"
#include "session/protocol_session.hpp"

namespace carrier::http {

class Session;

// The core's view of a waiting GET .../messages: deliveries hop to the session if it still exists.
// Runs on: the session's shard.
class PollConsumer : public core::Consumer {
 public:
  explicit PollConsumer(std::weak_ptr<Session> session) : session_(std::move(session)) {}
  void deliver(core::ConsumerId id, std::vector<core::Delivery> batch) override;

 private:
  std::weak_ptr<Session> session_;
};

// One HTTP/1.1 connection: Beast's parser reads requests from the bytes its transport hands in
// (keep-alive and pipelining: one request is handled at a time, in order, and bytes that come
// meanwhile wait in backlog_), routes them (routes.cpp), and writes each response to out().
// A request that waits (a password check, the store, a long poll) leaves the connection in the
// `handling` phase until its response is written. One timer enforces the header, body and idle
// timeouts; it is re-armed only when a deadline moves earlier.
// Lifecycle: made by the listener's accept handler on the accepting shard, begin() after start();
// ends when the connection closes (a waiting poll's consumer is detached then: its messages go
// back to the queue).
// Runs on: its shard, only.
class Session : public session::ProtocolSession, public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<net::Transport> transport, core::Broker& broker, const Options& options,
          auth::Authenticator& authenticator, net::HandshakeSlot handshake);
  ~Session() override;

  // Once its transport runs: refuses the connection (503) if it got no handshake slot, else arms the timer.
  void begin();
  void shutdown() override;
  void deliver_poll(core::ConsumerId id, std::vector<core::Delivery> batch);

 protected:
  void on_data(std::string& buffer) override;
  void on_write_started() override;
  void on_write_done() override;
  void on_closed() override;

 private:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;
  using Clock = std::chrono::steady_clock;
  // Beast speaks boost::string_view.
  static std::string_view view(boost::beast::string_view s) { return {s.data(), s.size()}; }
  enum class Phase { idle, header, body, handling };

  // A poll's consumer and what its response carried: acked once that response is on the wire,
  // then detached (the rest of what it was given goes back to the queue).
  struct Settling {
    core::ConsumerId consumer;
    std::vector<std::uint64_t> tags;
  };
  struct Poll {
    core::ConsumerId consumer;
    std::uint32_t max = 0;
    std::uint64_t request = 0;  // request_seq_ of the GET it answers
  };

  // Parses and handles complete requests from `input` until it is used up or a request waits.
  void parse(std::string& input);
  void start_request();
  void parse_failed(const boost::system::error_code& ec);
  // Authentication, then route(). Runs with the request in current_.
  void handle();
  void on_authenticated(auth::Outcome outcome, std::uint64_t seq);
  void route();  // routes.cpp
  void handle_send(const model::Destination& destination, const codec::Params& params);     // handle_send.cpp
  void handle_receive(const model::Destination& destination, const codec::Params& params);  // handle_receive.cpp
  void handle_relay(std::string_view path, std::string_view query);                          // handle_relay.cpp
  void answer_poll(std::vector<core::Delivery> batch);
  void poll_expired(std::uint64_t seq);

  // Writes a response and ends the request; `extra_headers` are whole "Name: value\r\n" lines.
  void respond(int status, std::string_view content_type, std::string_view body, std::string_view extra_headers = {});
  void problem(int status, std::string_view detail, std::string_view extra_headers = {});
  void problem(const Error& error);
  // The request has its response: the next one may be read.
  void finish_request();

  void arm_deadline(Clock::time_point at);
  void on_deadline();

  core::Broker& broker_;
  const Options& options_;
  auth::Authenticator& authenticator_;
  net::HandshakeSlot handshake_;  // released at the first complete request, or at close

  std::optional<Parser> parser_;
  std::optional<Request> current_;  // the request being handled
  std::uint64_t request_seq_ = 0;   // tells a late callback from one for the current request
  Phase phase_ = Phase::idle;
  Clock::time_point phase_since_;
  bool parsing_ = false;        // parse() is on the stack: finish_request() must not re-enter it
  bool continue_sent_ = false;  // "100 Continue" answered to this request's Expect
  bool keep_alive_ = true;
  bool shutting_down_ = false;
  std::string backlog_;  // bytes received while a request was being handled

  // Authorization header value this connection last presented successfully, and its user:
  // later requests with the same value skip the password check (see docs/http.md).
  std::string authorized_;
  bool has_authorized_ = false;
  std::string user_;

  std::shared_ptr<PollConsumer> poll_consumer_;
  std::optional<Poll> poll_;
  std::unique_ptr<net::asio::steady_timer> request_timer_;  // a poll's wait, a send's store timeout
  std::vector<Settling> staged_;   // in out(), not yet being written
  std::vector<Settling> writing_;  // in the write under way

  net::asio::steady_timer deadline_;
  Clock::time_point deadline_at_ = Clock::time_point::max();
};

}  // namespace carrier::http
