#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "auth/authenticator.hpp"
#include "auth/permissions.hpp"
#include "core/broker.hpp"
#include "mqtt/codec/decoder.hpp"
#include "mqtt/codec/packet.hpp"
#include "mqtt/options.hpp"
#include "mqtt/session_state.hpp"
#include "net/handshake_limit.hpp"
#include "net/transport.hpp"
#include "session/bind_weak.hpp"
#include "session/consumer_adapter.hpp"
#include "session/protocol_session.hpp"
#include "session/slow_consumer.hpp"
#include "session/written_acks.hpp"

namespace carrier::mqtt {

class Service;
class Session;

// The core's view of one MQTT connection's subscriptions.
using SessionConsumer = session::ConsumerAdapter<Session>;

// One MQTT connection (3.1, 3.1.1 or 5.0, chosen by its CONNECT): decodes packets, turns them
// into Broker calls, and turns deliveries into PUBLISHes. Handlers per packet live in
// handle_<packet>.cpp; outbound delivery and its flow control in deliver.cpp.
//
// Lifecycle: accepted -> CONNECT (reading pauses while the authenticator checks the password,
// then while the client registry settles who owns the client id, taking it over from another
// connection if needed) -> CONNACK -> packets -> DISCONNECT, a protocol error (DISCONNECT with a reason code on MQTT 5), keep-alive timeout,
// take-over or broker shutdown -> closed. On close the subscriptions' consumers are detached;
// a persistent session's subscriptions stay in the core (named, durable) and its state goes
// to the registry; a will is published unless the client said goodbye.
// Made with make_shared over its transport (TCP, or a test's fake), which holds it while it
// does I/O; see session::ProtocolSession.
// Runs on: its shard, only.
class Session : public session::ProtocolSession, public std::enable_shared_from_this<Session> {
 public:
  // `handshake`: this connection's place among those not yet logged in, released at CONNACK.
  Session(std::shared_ptr<net::Transport> transport, core::Broker& broker, Service& service, const Options& options,
          net::HandshakeSlot handshake);
  ~Session() override;

  // Once the transport runs: arms the connect timeout and keep-alive watchdog.
  void start_watchdog();
  void shutdown() override;
  void close_by_admin(std::string_view reason) override;
  void deliver(core::ConsumerId id, std::vector<core::Delivery> batch);
  // Another connection claimed this client id: DISCONNECT 0x8E (MQTT 5), detach, then hand the
  // session over through `done` (nullopt if this one had already gone).
  void take_over(bool successor_clean_start, std::function<void(std::optional<Departure>)> done);
  // Who logged in (CONNECT's user name, once the authenticator accepted it); empty if anonymous.
  const std::string& user() const { return user_; }
  // As decided at CONNECT (the registry records them with the session).
  std::uint32_t session_expiry() const { return session_expiry_; }
  std::uint8_t protocol_level() const { return static_cast<std::uint8_t>(version_); }

 protected:
  void on_data(std::string& buffer) override;
  void on_write_started() override;
  void on_write_done() override;
  void on_closed() override;

 private:
  // One MQTT subscription: one core consumer, or two for a filter ending in `/#`.
  struct Subscription {
    std::string filter;  // as the client wrote it, `$share/...` included
    SubscriptionOptions options;
    std::vector<core::ConsumerId> consumers;
    bool named = false;   // a core named subscription (persistent session or shared)
    bool durable = false;
    bool wildcard_first = false;  // does not match `$` topics
    bool ready = false;           // SUBACK (or CONNACK on resume) sent: deliveries may go out
  };
  struct Outgoing {
    core::ConsumerId consumer;
    core::Delivery delivery;
  };
  struct Inflight {
    core::ConsumerId consumer;
    std::uint64_t tag = 0;
    std::uint8_t qos = 1;
    bool released = false;  // QoS 2: PUBREC came, PUBREL sent, waiting for PUBCOMP
  };
  struct InboundPublish {
    model::MessagePtr message;  // null when refused
    std::uint8_t qos = 0;
    std::uint16_t packet_id = 0;
    codec::ReasonCode refused = codec::ReasonCode::success;
  };

  // --- session.cpp: the read loop, output, closing
  void handle(codec::Packet& packet);
  void send(const codec::Packet& packet);
  // A packet over the client's maximum packet size: without its reason string and user
  // properties, or not at all (and the connection closes).
  void send_trimmed(const codec::Packet& packet);
  // A protocol violation or a server decision: DISCONNECT with `reason` on MQTT 5 (a CONNACK
  // before the session is connected), then close. MQTT 3.x just closes.
  void disconnect(codec::ReasonCode reason, std::string_view detail);
  // The goodbye once shutting down: 0x8B, or 0x98 with the reason when an administrator closed us.
  void say_goodbye();
  void on_decode_error(const codec::DecodeError& error, std::optional<codec::Version> connect_version);
  static net::asio::awaitable<void> watchdog_loop(std::shared_ptr<Session> self);
  std::shared_ptr<Session> self();
  // Whether reason strings and user properties may go in acknowledgements (MQTT 5 "request
  // problem information").
  bool problem_information() const { return version_ == codec::Version::v5 && request_problem_information_; }
  Departure make_departure(bool with_will);
  void publish_will_now();
  // Detaches every consumer; `done` once the core has them all removed.
  void detach_all(std::function<void()> done);
  // A persistent session tells the registry which subscriptions changed (it keeps their
  // records); `done` once recorded (at once when not persistent or nothing changed).
  void save_subscriptions(std::vector<SubscriptionChange> changes, std::function<void()> done = nullptr);
  // A persistent session keeps its half-done QoS 2 exchanges in the store (`$mqtt-qos2`).
  core::StateRecord qos2_record(bool inbound, std::uint16_t packet_id);
  void drop_qos2_record(std::unordered_map<std::uint16_t, model::MessageId>& records, std::uint16_t packet_id);

  // --- handle_connect.cpp
  void handle_connect(codec::Connect& connect);
  // The authenticator's answer: claim the client id, or refuse with CONNACK and close.
  void on_authenticated(auth::Outcome outcome, bool had_credentials);
  void claim_client_id();
  void on_claimed(bool existed, std::optional<SessionState> state);
  void finish_connect(bool session_present, std::optional<SessionState> resume);
  void refuse_connect(codec::ReasonCode reason, std::string_view detail);

  // --- handle_publish.cpp: PUBLISH and PUBREL from the client
  void handle_publish(codec::Publish& publish);
  void handle_pubrel(const codec::Pubrel& pubrel);
  // The PUBLISHes of one read go to the broker as one batch.
  void flush_publishes();
  // Whether a PUBLISH goes to a topic whose producers are held back because a subscriber is
  // over its backlog (core::DestinationPressure): it is left unread until that drains.
  bool publishes_to_blocked_topic(const codec::Publish& publish) const;

  // --- handle_subscribe.cpp
  void handle_subscribe(codec::Subscribe& subscribe);
  void handle_unsubscribe(const codec::Unsubscribe& unsubscribe);
  // Creates or re-attaches the core side of a subscription; `done` once every shard knows it.
  Status attach(Subscription& sub, bool want_retained, std::function<void(Status)> done);
  // Whether the ACL lets this client read what an MQTT filter matches (both core filters of `a/#`).
  bool may_subscribe(std::string_view mqtt_filter);
  void release(Subscription& sub, bool remove_named, std::function<void()> done);

  // --- handle_disconnect.cpp: DISCONNECT, AUTH, PINGREQ
  void handle_disconnect(const codec::Disconnect& disconnect);
  void handle_auth(const codec::Auth& auth);

  // --- deliver.cpp: outbound PUBLISH, PUBACK/PUBREC/PUBCOMP from the client, flow control
  void pump();
  // Sends one delivery if it can go now; false when the flow-control window is full.
  bool send_delivery(Outgoing& out);
  void settle(core::ConsumerId consumer, std::uint64_t tag);
  void handle_puback(const codec::Puback& puback);
  void handle_pubrec(const codec::Pubrec& pubrec);
  void handle_pubcomp(const codec::Pubcomp& pubcomp);
  std::uint16_t next_packet_id();

  core::Broker& broker_;
  Service& service_;
  auth::Permissions permissions_;  // the ACL as it applies to user_ and client_id_
  const Options& options_;
  codec::DecoderLimits limits_;
  codec::Version version_ = codec::Version::v3_1_1;
  std::size_t need_at_least_ = 0;

  // connection state
  bool connect_received_ = false;  // CONNECT seen (CONNACK may still be pending)
  bool connected_ = false;         // CONNACK sent
  bool registered_ = false;        // the registry knows this connection as the client's
  bool taken_over_ = false;
  bool clean_disconnect_ = false;  // DISCONNECT without will: no will
  bool shutting_down_ = false;
  std::string admin_reason_;  // set when an administrator closes us: DISCONNECT 0x98 says it
  // Closed, its departure not yet reported (detaching): a take-over arriving then waits for it.
  bool departing_ = false;
  std::function<void(std::optional<Departure>)> pending_take_over_;
  std::string client_id_;
  std::string user_;  // authenticated user name; empty: anonymous
  bool clean_start_ = true;
  std::uint32_t session_expiry_ = 0;  // seconds; 0: the session ends with the connection
  std::uint16_t keep_alive_ = 0;      // seconds, as enforced
  bool request_problem_information_ = true;
  // Apart: a Will is ~560 bytes, and most connections have none.
  std::unique_ptr<codec::Will> will_;
  // CONNACK properties decided at CONNECT (MQTT 5).
  std::optional<std::string> assigned_client_id_;
  std::optional<std::uint16_t> server_keep_alive_;
  std::optional<std::uint32_t> connack_session_expiry_;
  std::unique_ptr<net::asio::steady_timer> watchdog_;
  net::HandshakeSlot handshake_;  // released once CONNACK is sent or the connection closes

  // client's limits on what we send
  std::uint16_t client_receive_maximum_ = 65535;
  std::uint32_t client_max_packet_size_ = 0;  // 0: none
  std::uint16_t client_topic_alias_maximum_ = 0;
  std::unordered_map<std::string, std::uint16_t> outbound_aliases_;
  // The last destination delivered and its MQTT topic (nullopt: not spellable in MQTT):
  // consecutive deliveries mostly share a topic, and mapping + validating it costs more than
  // the rest of the PUBLISH.
  std::string last_core_name_;
  // The clock read once per chunk of input: the timestamp of every PUBLISH in it.
  std::int64_t received_at_ms_ = 0;
  std::optional<std::string> last_mqtt_name_;

  // inbound
  std::unordered_map<std::uint16_t, std::string> inbound_aliases_;
  std::vector<InboundPublish> publishes_;          // this read's, not yet handed to the broker
  std::size_t publish_batches_in_flight_ = 0;
  std::unordered_map<std::uint16_t, bool> inbound_qos2_;  // packet id -> PUBREC sent
  std::size_t inbound_unacked_ = 0;  // QoS 1 before PUBACK, QoS 2 before PUBREL
  // The `$mqtt-qos2` records of a persistent session's exchanges, by packet id.
  std::unordered_map<std::uint16_t, model::MessageId> inbound_records_;
  std::unordered_map<std::uint16_t, model::MessageId> outbound_records_;

  // subscriptions and outbound
  std::shared_ptr<SessionConsumer> consumer_;
  std::map<std::string, Subscription> subscriptions_;  // by filter
  std::unordered_map<core::ConsumerId, std::string> by_consumer_;
  // Made on the first delivery: an empty std::deque already holds ~600 bytes, and an idle
  // subscriber may never get one.
  std::unique_ptr<std::deque<Outgoing>> backlog_;
  std::unordered_map<std::uint16_t, Inflight> inflight_;
  std::uint16_t last_packet_id_ = 0;
  std::uint16_t outbound_window_ = 100;
  session::WrittenAcks written_acks_;  // QoS 0 deliveries, acked once on the wire
  session::SlowConsumer slow_consumer_;
  bool pumping_ = false;            // pump() is running (deliver.cpp)
};

}  // namespace carrier::mqtt
