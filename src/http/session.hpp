#pragma once

#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/asio.hpp"  // before Beast: it includes Asio

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "auth/authenticator.hpp"
#include "auth/permissions.hpp"
#include "core/broker.hpp"
#include "http/codec/query.hpp"
#include "http/options.hpp"
#include "http/resume_window.hpp"
#include "net/handshake_limit.hpp"
#include "session/protocol_session.hpp"
#include "session/slow_consumer.hpp"
#include "session/written_acks.hpp"

namespace carrier::protocol {
class ProtocolSet;
}

namespace carrier::http {

class Session;

// The core's view of a waiting GET .../messages: deliveries hop to the session if it still exists.
// One that reaches a consumer whose poll was answered with leases (a message that came before the
// pause took effect) is given back at once, not held until the leases end.
// Runs on: the session's shard.
class PollConsumer : public core::Consumer {
 public:
  PollConsumer(std::weak_ptr<Session> session, core::Broker& broker) : session_(std::move(session)), broker_(broker) {}
  void deliver(core::ConsumerId id, std::vector<core::Delivery> batch) override;

 private:
  std::weak_ptr<Session> session_;
  core::Broker& broker_;
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
          auth::Authenticator& authenticator, net::HandshakeSlot handshake,
          const protocol::ProtocolSet* protocols = nullptr);
  ~Session() override;

  // Once its transport runs: refuses the connection (503) if it got no handshake slot, else arms the timer.
  void begin();
  void shutdown() override;
  void close_by_admin(std::string_view reason) override;
  // False if the batch is for no waiting poll (it stays with its consumer).
  bool deliver_poll(core::ConsumerId id, std::vector<core::Delivery>& batch);
  bool streams_events() const { return events_.has_value(); }
  void deliver_events(core::ConsumerId id, std::vector<core::Delivery> batch);  // handle_events.cpp
  bool awaits_reply(core::ConsumerId id) const { return reply_ && reply_->consumer == id; }
  void deliver_reply(core::ConsumerId id, std::vector<core::Delivery> batch);  // handle_reply.cpp

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
  // A leased response's consumer belongs to the lease table: nothing to do once it is written;
  // if it never is, its leases end (the client never saw them).
  struct Settling {
    core::ConsumerId consumer;
    std::vector<std::uint64_t> tags;
    std::vector<core::LeaseId> leases;
    bool leased = false;
  };
  // What GET .../messages asked for (handle_receive.cpp).
  struct PollParams {
    std::uint32_t max = 0;
    std::uint64_t wait_ms = 0;
    bool lease = false;
    std::uint64_t visibility_ms = 0;
  };
  struct Poll {
    core::ConsumerId consumer;
    std::uint32_t max = 0;
    std::uint64_t request = 0;  // request_seq_ of the GET it answers
    bool lease = false;
    std::uint64_t visibility_ms = 0;
    std::uint32_t reserved = 0;  // leases reserved for it (LeaseTable::reserve)
  };

  // Parses and handles complete requests from `input` until it is used up or a request waits.
  void parse(std::string& input);
  void start_request();
  void parse_failed(const boost::system::error_code& ec);
  // Authentication, then route(). Runs with the request in current_.
  void handle();
  void on_authenticated(auth::Outcome outcome, std::uint64_t seq);
  void route();  // routes.cpp
  // False, and 403 answered, when the ACL does not give the user `right` on `destination`.
  bool allowed(auth::Right right, const model::Destination& destination, std::string_view action);
  bool wants_websocket() const;  // websocket_upgrade.cpp
  void upgrade_websocket();
  void handle_send(const model::Destination& destination, const codec::Params& params);     // handle_send.cpp
  // Whether `n` more messages may be sent on this connection now; false: answered 429.
  bool take_message_tokens(std::size_t n);
  void handle_receive(const model::Destination& destination, const codec::Params& params);  // handle_receive.cpp
  std::optional<PollParams> poll_params(const codec::Params& params);  // nullopt: answered (400)
  // Attaches `request` (its consumer set here) as the waiting poll.
  void start_poll(core::SubscribeRequest request, const PollParams& params);
  // /healthz, /readyz, /metrics and /admin/v1/... (handle_admin.cpp, handle_admin_api.cpp).
  static bool is_health_probe(std::string_view path);
  void route_operations(const std::vector<std::string_view>& parts, std::string_view query);
  void route_admin_api(admin::Service& service, const std::vector<std::string_view>& parts, std::string_view query);
  // GET /console/...: the web console's embedded files, served without credentials (console/handle_console.cpp).
  static bool is_console_path(std::string_view path);
  void handle_console(std::string_view path);
  // /admin/v1/federation/links[/{name}] (handle_federation_admin.cpp).
  void route_federation_admin(const std::vector<std::string_view>& parts);
  // Answers the current request from a later callback (a collection across shards): does
  // nothing if the connection or that request is gone by then. A status >= 400 sends `body` as
  // a problem's detail.
  std::function<void(int status, std::string_view content_type, std::string body)> responder();
  void handle_relay(std::string_view path, std::string_view query);                          // handle_relay.cpp
  void answer_poll(std::vector<core::Delivery> batch);
  void poll_expired(std::uint64_t seq);
  void release_reservation(const Poll& poll);
  // POST /v1/leases/{id}/{ack,nack}, /v1/leases/{ack,nack}: `id` empty for the batch form (handle_lease.cpp).
  void handle_lease(std::string_view id, std::string_view action, const codec::Params& params);
  // /v1/subscriptions/{name}[/messages|/events] (handle_subscription.cpp); `resource` is the
  // last segment, empty for the subscription itself.
  void handle_subscription(std::string name, std::string_view resource, const codec::Params& params);
  void put_subscription(std::string name);
  // GET .../events (handle_events.cpp): the response never ends; each delivery is one event.
  void handle_events(const model::Destination& destination, const codec::Params& params);
  // GET /v1/subscriptions/{name}/events: `request` attaches to the durable subscription.
  void handle_subscription_events(core::SubscribeRequest request, const codec::Params& params);
  // nullopt: answered (400). True: format=json.
  std::optional<bool> events_format(const codec::Params& params);
  // The 200 and its headers, the stream's state, the keep-alive timer.
  void start_events(core::ConsumerId consumer, bool droppable, bool json);
  void write_event(const core::Delivery& d);
  // A resuming stream's batches until its Last-Event-ID is resolved: what the client had
  // (through that id) is confirmed and taken out of `batch`.
  void resume_events(std::vector<core::Delivery>& batch);
  // Written events of a durable stream join its window; past the window the oldest are acked.
  void confirm_written(core::ConsumerId consumer, std::vector<std::uint64_t> tags);
  void drain_events();
  void events_keep_alive();
  // POST .../messages?reply=wait (handle_reply.cpp): the timeout if asked, nullopt if not.
  Result<std::optional<std::uint64_t>> reply_wait(const codec::Params& params) const;
  void send_awaiting_reply(std::vector<model::MessagePtr> messages, std::uint64_t timeout_ms);
  void end_reply();
  static constexpr std::uint64_t kDefaultReplyTimeoutMs = 5000;

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
  auth::Permissions permissions_;  // the ACL as it applies to user_
  net::HandshakeSlot handshake_;  // released at the first complete request, or at close
  const protocol::ProtocolSet* protocols_;  // the sessions GET /ws hands a connection to
  std::shared_ptr<net::Transport> websocket_;  // after an upgrade: what now carries the connection

  std::optional<Parser> parser_;
  std::optional<Request> current_;  // the request being handled
  std::uint64_t request_seq_ = 0;   // tells a late callback from one for the current request
  Phase phase_ = Phase::idle;
  Clock::time_point phase_since_;
  bool parsing_ = false;        // parse() is on the stack: finish_request() must not re-enter it
  bool continue_sent_ = false;  // "100 Continue" answered to this request's Expect
  bool keep_alive_ = true;
  bool shutting_down_ = false;
  std::string goodbye_ = "the broker is shutting down";  // a 503's detail when we close
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

  // A Server-Sent Events stream, once its response has begun: it owns the connection until it
  // closes. Deliveries past the output bound wait in `held` (the core's credit bounds them), or
  // are dropped under the slow-consumer policy when they may be (non-persistent topic messages).
  struct Events {
    core::ConsumerId consumer;
    bool droppable = false;
    bool json = false;
    std::vector<core::Delivery> held;
    std::size_t held_next = 0;
    // A durable subscription's stream only: its written events wait in the window (acked as
    // they fall out of it), so that a reconnect with Last-Event-ID finds them in the subscription.
    std::optional<ResumeWindow> window;
    // The Last-Event-ID the stream was opened with, until found or known not to be there.
    std::optional<std::string> resume_from;
  };
  std::optional<Events> events_;
  // A request waiting for its reply on a temporary queue of its own.
  struct Reply {
    core::ConsumerId consumer;
    model::Destination queue;
  };
  std::optional<Reply> reply_;
  std::uint64_t replies_ = 0;  // numbers this connection's reply queues
  session::WrittenAcks event_acks_;
  session::SlowConsumer slow_consumer_;
  std::unique_ptr<session::MessageRate> message_rate_;  // [limits] max_messages_per_second; null: off
};

// /metrics: `text` with the federation's carrier_federation_* series appended (if it runs), to
// `done` on `shard` (handle_federation_admin.cpp).
void append_federation_metrics(const protocol::ProtocolSet* protocols, model::ShardId shard, std::string text,
                               std::function<void(std::string)> done);

}  // namespace carrier::http
