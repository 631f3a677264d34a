#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "auth/authenticator.hpp"
#include "auth/permissions.hpp"
#include "core/broker.hpp"
#include "net/handshake_limit.hpp"
#include "net/transport.hpp"
#include "session/bind_weak.hpp"
#include "session/consumer_adapter.hpp"
#include "session/protocol_session.hpp"
#include "session/slow_consumer.hpp"
#include "session/written_acks.hpp"
#include "stomp/codec/decoder.hpp"
#include "stomp/ack_request.hpp"
#include "stomp/codec/frame.hpp"
#include "stomp/errors.hpp"
#include "stomp/options.hpp"

namespace carrier::stomp {

class Session;

// The core's view of one STOMP connection's subscriptions.
using SubscriptionConsumer = session::ConsumerAdapter<Session>;

// One STOMP connection: decodes frames, turns them into Broker calls, and turns deliveries into
// MESSAGE frames. Every ERROR frame is followed by closing the connection, as the spec requires.
// Handlers for each frame kind live in handle_<frame>.cpp.
// Lifetime: made with make_shared over its transport (TCP, or a test's fake), which holds it
// while it does I/O; see session::ProtocolSession.
// Runs on: its shard, only.
class Session : public session::ProtocolSession, public std::enable_shared_from_this<Session> {
 public:
  // `handshake`: this connection's place among those not yet logged in (empty: none was free).
  Session(std::shared_ptr<net::Transport> transport, core::Broker& broker, const Options& options,
          auth::Authenticator& authenticator, net::HandshakeSlot handshake);
  ~Session() override;

  // Once the transport runs: refuses the connection if it got no handshake slot, else arms the
  // CONNECT deadline.
  void begin();

  void shutdown() override;
  void close_by_admin(std::string_view reason) override;
  void deliver(core::ConsumerId id, std::vector<core::Delivery> batch);
  // A wildcard queue subscription gained (lost) the consumer of one more queue.
  void attach_child(core::ConsumerId parent, core::ConsumerId child);
  void detach_child(core::ConsumerId parent, core::ConsumerId child);
  // Who logged in (CONNECT's login, once the authenticator accepted it); empty if anonymous.
  const std::string& user() const { return user_; }

 protected:
  void on_data(std::string& buffer) override;
  void on_write_started() override;
  void on_write_done() override;
  void on_closed() override;

 private:
  // A client-acked delivery held: which consumer (a wildcard subscription has one per queue)
  // and its tag there.
  struct Pending {
    core::ConsumerId consumer;
    std::uint64_t tag;
    model::MessagePtr message;
  };
  struct Subscription {
    std::string id;                 // the client's id
    std::uint64_t number = 0;       // ours, in ack tokens
    std::string durable_name;       // a durable subscription's broker-wide name
    std::string temp_queue;         // a temporary queue's qualified name, if it is on one
    bool automatic = false;         // made for a SEND's reply-to:/temp-queue/ (RabbitMQ)
    core::ConsumerId consumer;
    core::AckMode ack_mode = core::AckMode::auto_ack;
    // Client-acked deliveries held, by the subscription's own delivery number (the ack token's
    // second part): the consumer's tag, except on a wildcard subscription, whose children's tags
    // overlap. Its order is delivery order, for cumulative acks.
    std::map<std::uint64_t, Pending> unacked;
    bool droppable = false;  // private topic subscription, ack:auto: the slow-consumer policy applies
    // Wildcard queue subscriptions: `consumer` is the parent; deliveries come from its children.
    std::vector<core::ConsumerId> children;
    std::uint64_t next_number = 1;
  };
  // A delivery that came while the output was over its bound: encoded once writes drain it.
  struct Held {
    core::ConsumerId consumer;
    core::Delivery delivery;
  };
  struct PendingSend {
    std::vector<model::MessagePtr> messages;  // several for a composite destination
    std::string receipt;
  };
  struct Tx {
    core::Transaction work;
    std::size_t bytes = 0;     // of the buffered sends, counted in the broker's memory gauge
    std::size_t messages = 0;  // sends, acks and nacks buffered
    // The subscription's number for each of work.acks / work.nacks, to hold them again on ABORT.
    std::vector<std::uint64_t> ack_numbers;
    std::vector<std::uint64_t> nack_numbers;
  };

  void handle(codec::Frame& frame);
  void handle_connect(codec::Frame& frame);
  // The authenticator's answer to CONNECT: CONNECTED, or ERROR and close. Reading is paused
  // while a password is being checked.
  void on_authenticated(auth::Outcome outcome, bool had_credentials, std::uint32_t send_ms, std::uint32_t receive_ms);
  void handle_send(codec::Frame& frame);
  void handle_subscribe(codec::Frame& frame);
  void handle_unsubscribe(codec::Frame& frame);
  void handle_ack(codec::Frame& frame, bool is_ack);
  void handle_begin(codec::Frame& frame);
  void handle_commit(codec::Frame& frame);
  void handle_abort(codec::Frame& frame);
  // Adds `bytes` of sends and `messages` entries to a transaction if its bounds allow; otherwise
  // aborts it, answers `frame` with an ERROR naming the bound, and returns false.
  bool admit_to_transaction(std::unordered_map<std::string, Tx>::iterator it, std::size_t bytes,
                            std::size_t messages, const codec::Frame& frame);
  // Ends a transaction without committing: its sends are dropped, the deliveries it acked or
  // nacked go back to their queues (redelivered).
  void abort_transaction(std::unordered_map<std::string, Tx>::iterator it);
  std::size_t transaction_byte_limit() const;
  void handle_disconnect(codec::Frame& frame);

  // Whether a SEND names a destination whose producers are held back (core::DestinationPressure):
  // a queue full with overflow = "block", or a topic a slow subscriber is over its backlog on.
  bool sends_to_blocked_destination(const codec::Frame& frame) const;
  static bool is_persistent(const codec::Frame& frame);
  // SEND frames of one read are routed as one batch; any other frame flushes them first.
  void flush_sends();
  // One message per destination of a composite SEND ("/queue/a,/topic/b"), sharing one body.
  std::variant<std::vector<model::MessagePtr>, Refused> build_messages(codec::Frame& frame);
  // "/temp-queue/x" names this connection's own temporary queue; others' stay as they are.
  Result<model::Destination> resolve_destination(std::string_view text, bool for_subscribe);
  std::string qualify_temp_name(std::string_view name) const;
  // A temporary queue name this connection may own: unqualified, or qualified with our session.
  bool is_own_temp_name(std::string_view name) const;
  // RabbitMQ: a SEND with reply-to:/temp-queue/x subscribes the sender to that queue (id: the
  // reply-to as written), unless a subscription on it exists.
  void subscribe_reply_queue(const std::string& name, std::string_view spelling);
  // Finds the deliveries an ACK/NACK names (cumulative for ack:client).
  // `numbers` gets the subscription's number of each.
  Result<std::vector<core::DeliveryRef>> resolve_ack(const AckRequest& request, Subscription*& sub,
                                                     std::vector<std::uint64_t>& numbers);

  void encode_delivery(Subscription& sub, core::ConsumerId id, const core::Delivery& d);
  // Encodes held deliveries while the output is under its bound.
  void drain_held();
  // The output is over its bound and a droppable delivery came: drop it or disconnect.
  void slow_consumer(Subscription& sub, std::vector<std::uint64_t>& dropped, std::uint64_t tag);

  void send_receipt(const std::string& receipt_id);
  void maybe_receipt(const codec::Frame& frame);
  // ERROR frame for `why` (errors.hpp), `detail` as its body, then close. `cause`: the refused
  // frame, whose command some messages name and whose receipt the ERROR answers.
  void fail(Refusal why, std::string_view detail = {}, const codec::Frame* cause = nullptr);
  void encode(codec::Command command, const codec::Headers& headers, std::string_view body = {});
  void start_heartbeats(std::uint32_t send_ms, std::uint32_t receive_ms);
  void on_connect_deadline();
  static net::asio::awaitable<void> heartbeat_loop(std::shared_ptr<Session> self, std::uint32_t send_ms,
                                                   std::uint32_t receive_ms);
  Subscription* find_subscription(std::string_view id);
  void release_subscriptions();
  void complete_disconnect();

  core::Broker& broker_;
  Options options_;
  auth::Authenticator& authenticator_;
  auth::Permissions permissions_;  // the ACL as it applies to user_ and client_id_
  bool authenticating_ = false;  // CONNECT's password is being checked: frames after it wait
  std::string user_;
  codec::DecoderLimits limits_;
  codec::Version version_ = codec::Version::v1_2;
  bool connected_ = false;
  std::string session_id_;
  std::string client_id_;
  std::unordered_set<std::string> temp_queues_;  // ours, deleted when the connection closes
  std::shared_ptr<SubscriptionConsumer> consumer_;
  std::unordered_map<std::string, Subscription> subscriptions_;  // by client id
  std::unordered_map<core::ConsumerId, std::string> by_consumer_;
  session::WrittenAcks written_acks_;  // ack:auto deliveries, acked once on the wire
  std::uint64_t next_subscription_number_ = 1;
  // Non-empty only while the output is over its bound; taken from held_next_ on (a vector: an
  // idle connection pays nothing for it, unlike a deque).
  std::vector<Held> held_;
  std::size_t held_next_ = 0;
  session::SlowConsumer slow_consumer_;
  std::unordered_map<std::string, Tx> transactions_;
  std::vector<PendingSend> sends_;
  std::size_t sends_in_flight_ = 0;     // batches the store has not confirmed yet
  std::string disconnect_receipt_;
  bool disconnecting_ = false;
  bool shutting_down_ = false;
  std::string admin_reason_;  // set when an administrator closes us: the ERROR says it
  std::size_t need_at_least_ = 0;
  std::unique_ptr<net::asio::steady_timer> heartbeat_timer_;
  net::HandshakeSlot handshake_;                              // released once CONNECTED or closed
  std::unique_ptr<net::asio::steady_timer> connect_deadline_;  // until CONNECT is read
};

}  // namespace carrier::stomp
