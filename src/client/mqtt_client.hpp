#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/result.hpp"
#include "client/websocket_framing.hpp"
#include "client/write_loop.hpp"
#include "mqtt/codec/decoder.hpp"
#include "mqtt/codec/packet.hpp"
#include "net/asio.hpp"
#include "net/options.hpp"

namespace carrier::client {

struct MqttConnectOptions {
  std::string client_id;  // empty: "carrier-" and a random suffix
  std::optional<std::string> username;
  std::optional<std::string> password;
  bool clean_start = true;
  std::chrono::seconds keep_alive{30};  // 0: no PINGREQs, no silence detection
  mqtt::codec::Version version = mqtt::codec::Version::v3_1_1;
  // TCP connect + CONNACK, SUBACK, UNSUBACK, PINGRESP, and the acknowledgement of every QoS 1
  // or 2 PUBLISH: one missing for this long ends the connection (Errc::timed_out).
  std::chrono::milliseconds timeout{10'000};
  // QoS 1 and 2 PUBLISHes sent and not yet acknowledged (PUBACK, PUBCOMP). A publishing thread
  // waits for a free slot. With MQTT 5 the server's receive maximum lowers it. At most 65535.
  std::uint16_t max_in_flight = 1000;
  // A publishing thread blocks while more than this many encoded bytes wait for the socket.
  std::size_t max_buffered_bytes = 8u << 20;
  mqtt::codec::DecoderLimits limits{.max_packet_size = 16u << 20};
  // Not empty: connect to that path of an HTTP listener ("/ws") and speak MQTT over a WebSocket.
  std::string websocket_path;
  net::TlsClientOptions tls{};  // TLS: enabled, CA, client certificate (mutual TLS)
};

// An application message delivered by the server. QoS 1 and 2 deliveries are acknowledged by
// the client after the callback returns (PUBACK, or PUBREC ... PUBCOMP); a QoS 2 PUBLISH the
// server repeats before its PUBREL is not delivered twice.
struct MqttMessage {
  std::string topic;
  std::string payload;
  std::uint8_t qos = 0;
  bool retain = false;
  bool dup = false;
};

using MqttMessageCallback = std::function<void(const MqttMessage&)>;
using MqttErrorCallback = std::function<void(const Error&)>;
using MqttPublishCallback = std::function<void(Status)>;

// A minimal MQTT 3.1.1 / 5.0 client over one TCP connection (clean sessions; no reconnect, no
// topic aliases, no AUTH), built on carrier_mqtt_codec. Written for `carrier bench` and tests.
//
// Threads: like StompClient, one I/O thread per client runs a reader coroutine (the codec's
// decoder), a writer coroutine (everything queued while a write is in flight leaves in the
// next write; TCP_NODELAY) and a keep-alive coroutine. Public calls are thread-safe: they
// encode on the caller's thread and post the bytes. Callbacks run on the I/O thread and must
// not call the blocking methods (connect, publish with QoS > 0 and no callback, subscribe,
// ping, disconnect); those return Errc::invalid_argument there instead of deadlocking.
//
// Lifecycle: connect() once; after disconnect(), close() or a lost connection the client stays
// closed. A lost connection (read/write failure, server DISCONNECT, decode error, missing
// acknowledgement or keep-alive answer) fails every pending call and is reported once to the
// error callback.
class MqttClient {
 public:
  MqttClient();
  ~MqttClient();
  MqttClient(const MqttClient&) = delete;
  MqttClient& operator=(const MqttClient&) = delete;

  // Both set before connect(); they run on the I/O thread.
  void on_error(MqttErrorCallback callback);
  void on_message(MqttMessageCallback callback);

  // TCP connect (TCP_NODELAY), CONNECT, waits for CONNACK. A refused CONNACK is
  // Errc::permission_denied with the server's reason.
  Status connect(std::string_view host, std::uint16_t port, MqttConnectOptions options = {});

  // QoS 0: queued for writing; `done` (if any) runs at once with ok. QoS 1 and 2: waits on the
  // calling thread for a free slot in the in-flight window, then returns; `done` runs exactly
  // once on the I/O thread on PUBACK / PUBCOMP (ok), a failure reason code (MQTT 5) or the end
  // of the connection. Returns early with the error when the client is not connected.
  Status async_publish(std::string_view topic, std::string_view payload, std::uint8_t qos,
                       bool retain, MqttPublishCallback done);
  // Blocks until acknowledged for QoS 1 and 2; QoS 0 returns once queued.
  Status publish(std::string_view topic, std::string_view payload, std::uint8_t qos,
                 bool retain = false);

  // SUBSCRIBE, waits for SUBACK; one reason code per filter (the granted QoS, or >= 0x80 for a
  // refused filter). Deliveries go to the on_message callback.
  Result<std::vector<mqtt::codec::ReasonCode>> subscribe(
      std::vector<mqtt::codec::SubscribeTopic> topics);
  Result<std::uint8_t> subscribe(std::string_view filter, std::uint8_t qos);  // granted QoS
  Status unsubscribe(std::vector<std::string> filters);

  // PINGREQ, waits for PINGRESP: the server has read everything sent before.
  Status ping();
  // Waits (up to the timeout) until no QoS 1/2 publish is in flight; fails if one fails.
  Status wait_for_acks();
  // DISCONNECT, written out, then the socket is closed. Ok when already closed.
  Status disconnect();
  // Closes the socket now; pending calls fail with Errc::shutting_down.
  void close();

  bool connected() const { return state_.load() == State::connected; }
  // The in-flight window in force after connect(): max_in_flight, lowered by an MQTT 5
  // server's receive maximum.
  std::uint16_t in_flight_limit() const { return window_.load(); }
  std::size_t in_flight() const;

 private:
  enum class State { idle, connecting, connected, closing, closed };
  using Clock = std::chrono::steady_clock;
  using Answer = std::function<void(Result<mqtt::codec::Packet>)>;

  // An outgoing QoS 1/2 PUBLISH or a SUBSCRIBE/UNSUBSCRIBE waiting for its answer.
  struct Pending {
    Clock::time_point deadline;
    Answer done;
    bool released = false;  // QoS 2: PUBREC came, PUBREL sent, waiting for PUBCOMP
    bool counts_in_window = false;
  };

  // Caller thread.
  Status check_connected() const;
  Status check_not_io_thread() const;
  bool on_io_thread() const { return std::this_thread::get_id() == thread_.get_id(); }
  // Takes a free packet id (under mutex_), waiting for a window slot when `window`.
  Result<std::uint16_t> take_packet_id(bool window);
  // Posts encoded bytes; with `done`, registers the wait for packet `id` on the I/O thread
  // before the bytes can reach the wire. Then waits while too many bytes are buffered.
  void post_bytes(std::string bytes, std::uint16_t id, Answer done, bool counts_in_window);
  void wait_for_buffer();
  Result<mqtt::codec::Packet> request(std::string bytes, std::uint16_t id);

  // I/O thread.
  static net::asio::awaitable<void> run_session(MqttClient* self, std::string host,
                                                std::uint16_t port);
  static net::asio::awaitable<void> read_loop(MqttClient* self);
  static net::asio::awaitable<void> write_loop(MqttClient* self);
  static net::asio::awaitable<void> tick_loop(MqttClient* self);
  void spawn(net::asio::awaitable<void> coroutine, const char* what);
  void append_output(std::string_view bytes);
  void queue_packet(const mqtt::codec::Packet& packet);
  void handle_packet(mqtt::codec::Packet packet);
  void handle_publish(mqtt::codec::Publish& publish);
  void complete(std::uint16_t id, Result<mqtt::codec::Packet> answer);
  void release_id(std::uint16_t id, bool counts_in_window);
  void end_connection(const Error& reason);

  net::asio::io_context io_{1};
  std::optional<net::asio::executor_work_guard<net::asio::io_context::executor_type>> work_;

  // I/O thread only.
  net::tcp::resolver resolver_{io_};
  net::SocketStream stream_{io_};
  net::asio::steady_timer tick_timer_{io_};
  WriteLoop writer_{io_};
  std::unique_ptr<WebSocketFraming> websocket_;  // set by connect() for options.websocket_path
  bool disconnect_queued_ = false;  // the writer ends the connection once it is written
  Clock::time_point last_read_{};
  Clock::time_point last_write_{};
  std::map<std::uint16_t, Pending> pending_;          // by packet id
  std::deque<std::function<void(Status)>> pings_;      // PINGRESPs answer in order
  std::deque<Clock::time_point> ping_deadlines_;
  std::optional<Answer> connack_;
  Clock::time_point connack_deadline_{};
  std::set<std::uint16_t> awaiting_pubrel_;           // incoming QoS 2 ids
  MqttMessageCallback on_message_;
  MqttErrorCallback on_error_;

  MqttConnectOptions options_;  // set before connect() posts anything, then read-only

  std::atomic<State> state_{State::idle};
  std::atomic<std::uint16_t> window_{1000};

  // Guards the fields below.
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // an id freed, the buffer drained, the connection ended
  std::vector<bool> ids_in_use_ = std::vector<bool>(65536, false);
  std::uint16_t next_id_ = 1;
  std::size_t window_used_ = 0;  // QoS 1/2 publishes holding an id
  std::size_t ids_used_ = 0;
  std::size_t buffered_bytes_ = 0;
  std::optional<Error> end_reason_;
  std::optional<Error> publish_failure_;  // the first failed acknowledgement, for wait_for_acks

  std::thread thread_;  // last
};

}  // namespace carrier::client
