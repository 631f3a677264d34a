#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "base/result.hpp"
#include "client/pending_requests.hpp"
#include "client/websocket_framing.hpp"
#include "client/write_loop.hpp"
#include "net/asio.hpp"
#include "net/options.hpp"
#include "stomp/codec/decoder.hpp"
#include "stomp/codec/frame.hpp"

namespace carrier::client {

using Headers = stomp::codec::Headers;
using Milliseconds = std::chrono::milliseconds;

// STOMP heart-beat offer, as in the CONNECT `heart-beat` header: `send` = the smallest interval
// we can send at, `receive` = the interval we want the server to send at. 0 = none.
struct HeartBeat {
  Milliseconds send{0};
  Milliseconds receive{0};
};

struct ConnectOptions {
  std::string login;
  std::string passcode;
  std::string vhost;              // the `host` header; empty = the host name connected to
  HeartBeat heart_beat{};
  std::string version = "1.2";    // `accept-version`: "1.2", or a list such as "1.0,1.1,1.2"
  Milliseconds timeout{10'000};   // TCP connect + CONNECTED, and every receipt wait
  // Sends block the calling thread (never the I/O thread) while more than this many encoded
  // bytes wait to be written, so a fast producer cannot grow memory without bound.
  std::size_t max_buffered_bytes = 8u << 20;
  stomp::codec::DecoderLimits limits{};
  // Not empty: connect to that path of an HTTP listener ("/ws") and speak STOMP over a WebSocket.
  std::string websocket_path;
  net::TlsClientOptions tls{};     // TLS: enabled, CA, client certificate (mutual TLS)
};

enum class AckMode { automatic, client, client_individual };
// The wire spelling: "auto", "client", "client-individual".
std::string_view to_string(AckMode mode);
std::optional<AckMode> parse_ack_mode(std::string_view text);

struct SubscribeOptions {
  std::string id;                      // empty = generated ("sub-1", "sub-2", ...)
  AckMode ack = AckMode::automatic;
  std::optional<unsigned> prefetch;    // sent as both activemq.prefetchSize and prefetch-count
  std::string selector;                // sent as `selector` when not empty
  Headers headers;                     // extra headers, sent as given
  bool receipt = false;                // block until the server confirms the subscription
};

struct SendOptions {
  Headers headers;
  bool receipt = false;      // block until RECEIPT (or ERROR, timeout, disconnect)
  std::string transaction;   // send within this transaction when not empty
};

// A MESSAGE frame, with the headers a consumer needs pulled out.
struct Message {
  std::string destination;
  std::string message_id;
  std::string subscription;
  std::string ack_id;        // the 1.2 `ack` header; empty before 1.2
  Headers headers;           // every header as received
  std::string body;

  const std::string* header(std::string_view name) const;
};

// "host:port" (also "[v6::addr]:port", or "host" alone with `default_port`), for --server
// flags and configuration.
struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
};
Result<Endpoint> parse_endpoint(std::string_view text, std::uint16_t default_port);

// A destination as users type it: "/queue/a" and "/topic/b" (anything starting with '/') are
// kept; a bare name "orders" means the queue "/queue/orders".
std::string normalize_destination(std::string_view name);

// Message callbacks run on the I/O thread: they must not block on this client (no receipt
// waits, no receive()); ack()/nack() and sends without receipt are fine there.
using MessageCallback = std::function<void(const Message&)>;
using ErrorCallback = std::function<void(const Error&)>;
using ReceiptCallback = std::function<void(Status)>;

// A STOMP 1.0/1.1/1.2 client over one TCP connection.
//
// Threads: one background I/O thread per client, started by the constructor and joined by the
// destructor, runs an io_context with a reader coroutine (decodes frames with the codec), a
// writer coroutine (drains the output buffer with one write per batch: frames queued while a
// write is in flight go out together) and a heart-beat coroutine. All connection state lives on
// that thread; public calls are thread-safe, encode on the caller's thread and post the bytes.
// Blocking calls (connect, send with receipt, commit, receive, disconnect) wait on a future or
// condition variable, never by polling, and must not be called from a callback.
//
// Lifecycle: connect() once; after disconnect(), close(), an ERROR frame or a lost connection
// the client stays closed (make a new one to reconnect). An ERROR frame fails every pending
// call with its message and is reported to the error callback.
class StompClient {
 public:
  StompClient();
  ~StompClient();
  StompClient(const StompClient&) = delete;
  StompClient& operator=(const StompClient&) = delete;

  // Called on the I/O thread once when the connection ends other than by disconnect()/close():
  // an ERROR frame, a read/write failure, server heart-beat silence. Set before connect().
  void on_error(ErrorCallback callback);

  // Opens the TCP connection (TCP_NODELAY), sends CONNECT and waits for CONNECTED, all within
  // options.timeout. An ERROR answer is Errc::permission_denied (servers refuse CONNECT for
  // credentials), with the server's message.
  Status connect(std::string_view host, std::uint16_t port, ConnectOptions options = {});

  Status send(std::string_view destination, std::string_view body, Headers headers = {},
              bool with_receipt = false);
  Status send(std::string_view destination, std::string_view body, const SendOptions& options);

  // Sends with a receipt and returns at once; `on_receipt` runs exactly once, on the I/O thread
  // (or on the calling thread when the client is not connected): ok on RECEIPT, an error on
  // ERROR, timeout or disconnect. Lets a producer keep a window of receipts in flight.
  void async_send(std::string_view destination, std::string_view body, SendOptions options,
                  ReceiptCallback on_receipt);
  std::future<Status> async_send(std::string_view destination, std::string_view body,
                                 SendOptions options = {});

  // Returns the subscription id. With a callback, messages go to it (on the I/O thread);
  // without, they wait for receive().
  Result<std::string> subscribe(std::string_view destination, SubscribeOptions options = {},
                                MessageCallback callback = {});
  Status unsubscribe(std::string_view id, bool with_receipt = false);

  // The next MESSAGE for a subscription without callback; Errc::timed_out when none arrived in
  // `timeout`, or the reason the connection ended once it has and nothing is left.
  Result<Message> receive(Milliseconds timeout);

  // ACK/NACK as the negotiated version wants: `id` = the `ack` header in 1.2, `message-id` and
  // `subscription` in 1.1, `message-id` in 1.0 (which has no NACK).
  Status ack(const Message& message, std::string_view transaction = {});
  Status nack(const Message& message, std::string_view transaction = {});

  Status begin(std::string_view transaction);
  Status commit(std::string_view transaction, bool with_receipt = true);
  Status abort(std::string_view transaction, bool with_receipt = true);

  // DISCONNECT with a receipt, waits for it (every earlier frame was then handled by the
  // server), closes the socket. Ok when already closed by close() or disconnect().
  Status disconnect();
  // Closes the socket now; pending calls fail with Errc::shutting_down.
  void close();

  bool connected() const { return state_.load() == State::connected; }
  // The version the server chose; valid after connect().
  stomp::codec::Version version() const { return version_.load(); }
  // CONNECTED's `server` and `session` headers; valid after connect().
  std::string server() const;
  std::string session() const;

 private:
  enum class State { idle, connecting, connected, closing, closed };
  struct Subscription {
    MessageCallback callback;
  };
  using Clock = std::chrono::steady_clock;
  using Command = stomp::codec::Command;

  // Caller thread.
  Status check_connected() const;
  Status check_not_io_thread() const;
  bool on_io_thread() const { return std::this_thread::get_id() == thread_.get_id(); }
  std::string next_id(std::string_view prefix);
  // Encodes a frame and hands it to the I/O thread; with `on_receipt`, adds a `receipt` header
  // and registers the wait before the frame can reach the wire. `prepare` runs on the I/O
  // thread first (a SUBSCRIBE registers its subscription there, before any MESSAGE can arrive).
  void post_frame(Command command, Headers headers, std::string_view body,
                  ReceiptCallback on_receipt, std::function<void()> prepare = {});
  // post_frame, then with a receipt waits for it.
  Status send_frame(Command command, Headers headers, std::string_view body, bool with_receipt,
                    std::function<void()> prepare = {});
  Status ack_or_nack(Command command, const Message& message, std::string_view transaction);
  Error end_reason() const;

  // I/O thread.
  static net::asio::awaitable<void> run_session(StompClient* self, std::string host,
                                                std::uint16_t port);
  static net::asio::awaitable<void> read_loop(StompClient* self);
  static net::asio::awaitable<void> write_loop(StompClient* self);
  static net::asio::awaitable<void> heart_beat_loop(StompClient* self);
  void spawn(net::asio::awaitable<void> coroutine, const char* what);
  void submit(std::string bytes, std::string receipt_id, PendingRequests::Completion done);
  void append_output(std::string_view bytes);
  void handle_frame(stomp::codec::Frame frame);
  void handle_connected(const stomp::codec::Frame& frame);
  void handle_message(stomp::codec::Frame frame);
  // Closes the connection once; fails pending calls, wakes blocked callers, and reports
  // `reason` to the error callback when the connection was up (not closing, not connecting).
  void end_connection(const Error& reason);

  // Fixed at construction; the io_context outlives every member below that uses it.
  net::asio::io_context io_{1};
  std::optional<net::asio::executor_work_guard<net::asio::io_context::executor_type>> work_;

  // I/O thread only.
  net::tcp::resolver resolver_{io_};
  net::SocketStream stream_{io_};
  net::asio::steady_timer heart_beat_timer_{io_};
  PendingRequests pending_{io_.get_executor()};
  std::unordered_map<std::string, Subscription> subscriptions_;
  WriteLoop writer_{io_};
  std::unique_ptr<WebSocketFraming> websocket_;  // set by connect() for options.websocket_path
  Clock::time_point last_read_{};
  Clock::time_point last_write_{};
  Milliseconds send_interval_{0};     // negotiated: we send at least this often
  Milliseconds receive_interval_{0};  // negotiated: the server sends at least this often
  ErrorCallback on_error_;            // set before connect(), then read on the I/O thread

  // Set on the caller thread before connect() posts anything, then read-only.
  ConnectOptions options_;

  std::atomic<State> state_{State::idle};
  std::atomic<stomp::codec::Version> version_{stomp::codec::Version::v1_2};
  std::atomic<std::uint64_t> next_id_{1};

  // Guards the fields below; the I/O thread writes them, callers read and wait.
  mutable std::mutex mutex_;
  std::condition_variable inbox_ready_;    // a message arrived or the connection ended
  std::condition_variable buffer_drained_; // buffered_bytes_ fell, or the connection ended
  std::deque<Message> inbox_;
  std::size_t buffered_bytes_ = 0;
  std::optional<Error> end_reason_;       // why the connection ended, once it has
  std::string server_;
  std::string session_;

  std::thread thread_;  // last: started after every member above exists
};

}  // namespace carrier::client
