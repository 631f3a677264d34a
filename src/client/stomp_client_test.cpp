#include "client/stomp_client.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stomp/codec/decoder.hpp"
#include "stomp/codec/encoder.hpp"

namespace carrier::client {
namespace {

namespace asio = net::asio;
using namespace std::chrono_literals;
using stomp::codec::Command;
using stomp::codec::Frame;
using stomp::codec::Version;

struct FakeServerBehaviour {
  std::string version = "1.2";      // CONNECTED's version header; "" = leave it out (1.0)
  std::string heart_beat = "0,0";   // CONNECTED's heart-beat header
  bool answer_connect = true;       // false: never answer CONNECT
  bool answer_receipts = true;      // false: swallow receipt requests
  std::string required_login;       // non-empty: ERROR on CONNECT with another login
  std::string error_destination = "/queue/forbidden";  // SEND there: ERROR, then close
};


// Just enough of a STOMP server for the client's tests: CONNECTED, RECEIPT, SEND echoed as
// MESSAGE to the subscriptions on its destination, ERROR on request. It records every frame it
// gets so tests can check what the client put on the wire.
//
// Runs on: its own thread and io_context; the test thread reads the records under mutex_.
class FakeStompServer {
 public:
  using Behaviour = FakeServerBehaviour;

  explicit FakeStompServer(Behaviour behaviour = {}) : behaviour_(std::move(behaviour)) {
    acceptor_.open(net::tcp::v4());
    acceptor_.set_option(net::tcp::acceptor::reuse_address(true));
    acceptor_.bind(net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(io_, accept_loop(this), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }

  ~FakeStompServer() {
    io_.stop();
    thread_.join();
  }

  std::uint16_t port() const { return port_; }

  std::vector<Frame> frames() {
    std::lock_guard lock(mutex_);
    return frames_;
  }
  std::vector<Frame> frames(Command command) {
    std::vector<Frame> out;
    for (auto& f : frames()) {
      if (f.command == command) out.push_back(f);
    }
    return out;
  }
  std::size_t bytes_read() const { return bytes_read_.load(); }

  // Waits (on a condition variable, not by sleeping) until `pred` holds over the frames.
  bool wait_for(std::function<bool(const std::vector<Frame>&)> pred,
                std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return pred(frames_); });
  }

 private:
  struct Subscriber {
    std::string id;
    std::string destination;
    std::string* out;  // the connection's pending output
  };

  static asio::awaitable<void> accept_loop(FakeStompServer* self) {
    for (;;) {
      boost::system::error_code ec;
      net::tcp::socket socket(self->io_);
      co_await self->acceptor_.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      asio::co_spawn(self->io_, serve(self, std::move(socket)), asio::detached);
    }
  }

  static asio::awaitable<void> serve(FakeStompServer* self, net::tcp::socket socket) {
    std::string input;
    std::string out;
    std::vector<char> chunk(16 * 1024);
    Version version = Version::v1_0;
    bool close_after_write = false;
    for (;;) {
      boost::system::error_code ec;
      std::size_t n = co_await socket.async_read_some(
          asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
      if (ec) break;
      self->bytes_read_ += n;
      input.append(chunk.data(), n);
      std::size_t offset = 0;
      for (;;) {
        auto step = stomp::codec::decode(std::string_view(input).substr(offset), version, {});
        if (!step) {
          ADD_FAILURE() << "client sent a bad frame: " << step.error().to_string();
          co_return;
        }
        offset += step->consumed;
        if (!step->frame) {
          if (step->consumed > 0) continue;
          break;
        }
        close_after_write |= self->handle(*step->frame, version, out);
      }
      input.erase(0, offset);
      if (!out.empty()) {
        std::string batch;
        batch.swap(out);
        co_await asio::async_write(socket, asio::buffer(batch),
                                   asio::redirect_error(asio::use_awaitable, ec));
        if (ec) break;
      }
      if (close_after_write) break;
    }
    std::lock_guard lock(self->mutex_);
    std::erase_if(self->subscribers_, [&](const Subscriber& s) { return s.out == &out; });
  }

  // Returns true when the connection must close after the output is written.
  bool handle(const Frame& frame, Version& version, std::string& out) {
    {
      std::lock_guard lock(mutex_);
      frames_.push_back(frame);
    }
    changed_.notify_all();
    auto header = [&](std::string_view name) {
      const std::string* v = frame.header(name);
      return v ? *v : std::string();
    };
    auto receipt = [&] {
      if (frame.header("receipt") && behaviour_.answer_receipts) {
        stomp::codec::encode(Command::receipt, {{"receipt-id", header("receipt")}}, {}, version,
                             out);
      }
    };
    switch (frame.command) {
      case Command::connect:
      case Command::stomp: {
        if (!behaviour_.answer_connect) return false;
        if (!behaviour_.required_login.empty() && header("login") != behaviour_.required_login) {
          stomp::codec::encode(Command::error, {{"message", "bad credentials"}},
                               "login refused", Version::v1_0, out);
          return true;
        }
        stomp::codec::Headers headers{{"heart-beat", behaviour_.heart_beat},
                                      {"server", "fake/1"},
                                      {"session", "s-1"}};
        if (!behaviour_.version.empty()) headers.emplace_back("version", behaviour_.version);
        stomp::codec::encode(Command::connected, headers, {}, Version::v1_0, out);
        version = behaviour_.version == "1.2"   ? Version::v1_2
                  : behaviour_.version == "1.1" ? Version::v1_1
                                                : Version::v1_0;
        return false;
      }
      case Command::send: {
        if (header("destination") == behaviour_.error_destination) {
          stomp::codec::Headers headers{{"message", "not allowed to send there"}};
          if (frame.header("receipt")) headers.emplace_back("receipt-id", header("receipt"));
          stomp::codec::encode(Command::error, headers, {}, version, out);
          return true;
        }
        std::lock_guard lock(mutex_);
        for (auto& s : subscribers_) {
          if (s.destination != header("destination")) continue;
          std::string n = std::to_string(++next_message_);
          stomp::codec::Headers headers{{"destination", s.destination},
                                        {"message-id", "m-" + n},
                                        {"subscription", s.id}};
          if (version == Version::v1_2) headers.emplace_back("ack", "a-" + n);
          for (const auto& [k, v] : frame.headers) {
            if (k != "destination" && k != "receipt" && k != "content-length") {
              headers.emplace_back(k, v);
            }
          }
          stomp::codec::encode(Command::message, headers, frame.body, version, *s.out);
        }
        break;
      }
      case Command::subscribe: {
        std::lock_guard lock(mutex_);
        subscribers_.push_back(Subscriber{header("id"), header("destination"), &out});
        break;
      }
      case Command::unsubscribe: {
        std::lock_guard lock(mutex_);
        std::erase_if(subscribers_, [&](const Subscriber& s) {
          return s.out == &out && s.id == header("id");
        });
        break;
      }
      case Command::disconnect:
        receipt();
        return true;
      default:
        break;
    }
    receipt();
    return false;
  }

  Behaviour behaviour_;
  asio::io_context io_{1};
  net::tcp::acceptor acceptor_{io_};
  std::uint16_t port_ = 0;
  std::atomic<std::size_t> bytes_read_{0};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Frame> frames_;
  std::vector<Subscriber> subscribers_;  // all on the server thread; one connection's out
  int next_message_ = 0;
  std::thread thread_;
};

bool has_header(const Frame& frame, std::string_view name, std::string_view value) {
  const std::string* v = frame.header(name);
  return v != nullptr && *v == value;
}

ConnectOptions quick(Milliseconds timeout = 2s) {
  ConnectOptions options;
  options.timeout = timeout;
  return options;
}

TEST(StompClientTest, ConnectsSendsAndReceives) {
  FakeStompServer server;
  StompClient client;
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), quick()));
  EXPECT_TRUE(client.connected());
  EXPECT_EQ(client.version(), Version::v1_2);
  EXPECT_EQ(client.server(), "fake/1");
  EXPECT_EQ(client.session(), "s-1");

  SubscribeOptions sub;
  sub.prefetch = 7;
  sub.selector = "color = 'red'";
  sub.receipt = true;
  auto id = client.subscribe("/queue/a", sub);
  ASSERT_TRUE(id);
  ASSERT_TRUE(client.send("/queue/a", "hello", {{"color", "red"}}, true));
  auto message = client.receive(2s);
  ASSERT_TRUE(message) << message.error().to_string();
  EXPECT_EQ(message->body, "hello");
  EXPECT_EQ(message->destination, "/queue/a");
  EXPECT_EQ(message->subscription, *id);
  EXPECT_EQ(message->ack_id, "a-1");
  ASSERT_NE(message->header("color"), nullptr);
  EXPECT_EQ(*message->header("color"), "red");

  auto subscribes = server.frames(Command::subscribe);
  ASSERT_EQ(subscribes.size(), 1u);
  EXPECT_TRUE(has_header(subscribes[0], "activemq.prefetchSize", "7"));
  EXPECT_TRUE(has_header(subscribes[0], "prefetch-count", "7"));
  EXPECT_TRUE(has_header(subscribes[0], "selector", "color = 'red'"));
  EXPECT_TRUE(has_header(subscribes[0], "ack", "auto"));
  auto connects = server.frames(Command::connect);
  ASSERT_EQ(connects.size(), 1u);
  EXPECT_TRUE(has_header(connects[0], "accept-version", "1.2"));
  EXPECT_TRUE(has_header(connects[0], "host", "127.0.0.1"));

  ASSERT_TRUE(client.disconnect());
  EXPECT_FALSE(client.connected());
  auto after = client.receive(10ms);
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().code, Errc::shutting_down);
  EXPECT_FALSE(client.send("/queue/a", "late"));
}

TEST(StompClientTest, ReceiveTimesOut) {
  FakeStompServer server;
  StompClient client;
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), quick()));
  ASSERT_TRUE(client.subscribe("/queue/empty"));
  auto start = std::chrono::steady_clock::now();
  auto message = client.receive(100ms);
  ASSERT_FALSE(message);
  EXPECT_EQ(message.error().code, Errc::timed_out);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
}

TEST(StompClientTest, KeepsAWindowOfReceiptsInFlight) {
  FakeStompServer server;
  constexpr int kCount = 2000;
  constexpr int kWindow = 64;
  std::mutex mutex;  // before the client, which calls back into them until it is destroyed
  std::condition_variable slot_free;
  int in_flight = 0;
  int confirmed = 0;
  int failed = 0;
  StompClient client;
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), quick()));
  for (int i = 0; i < kCount; ++i) {
    {
      std::unique_lock lock(mutex);
      slot_free.wait(lock, [&] { return in_flight < kWindow; });
      ++in_flight;
    }
    // append, not "m" + std::to_string(i): g++ 12 at -O3 reports a false -Wrestrict (GCC 105329).
    client.async_send("/queue/w", std::string("m").append(std::to_string(i)), {}, [&](Status s) {
      {
        std::lock_guard lock(mutex);
        --in_flight;
        (s ? confirmed : failed)++;
      }
      slot_free.notify_one();
    });
  }
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(slot_free.wait_for(lock, 10s, [&] { return in_flight == 0; }));
  }
  EXPECT_EQ(confirmed, kCount);
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(server.frames(Command::send).size(), static_cast<std::size_t>(kCount));

  auto future = client.async_send("/queue/w", "last");
  ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(future.get());
}

TEST(StompClientTest, ReceiptTimeoutIsAnError) {
  FakeStompServer::Behaviour behaviour;
  behaviour.answer_receipts = false;
  FakeStompServer server(behaviour);
  StompClient client;
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), quick(150ms)));
  auto start = std::chrono::steady_clock::now();
  auto sent = client.send("/queue/a", "x", {}, true);
  ASSERT_FALSE(sent);
  EXPECT_EQ(sent.error().code, Errc::timed_out);
  EXPECT_NE(sent.error().detail.find("RECEIPT"), std::string::npos) << sent.error().detail;
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
  // The connection itself is still fine.
  EXPECT_TRUE(client.connected());
  EXPECT_TRUE(client.send("/queue/a", "y"));
}

TEST(StompClientTest, ErrorFrameFailsPendingCallsAndReportsIt) {
  FakeStompServer server;
  // Declared before the client: its I/O thread may still be inside a callback that touches them
  // until the client's destructor joins it.
  std::mutex mutex;
  std::condition_variable reported;
  std::vector<Error> errors;
  StompClient client;
  client.on_error([&](const Error& e) {
    {
      std::lock_guard lock(mutex);
      errors.push_back(e);
    }
    reported.notify_all();
  });
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), quick()));
  ASSERT_TRUE(client.subscribe("/queue/a"));
  auto pending = client.async_send("/queue/slow", "x");  // answered before the ERROR
  auto sent = client.send("/queue/forbidden", "x", {}, true);
  ASSERT_FALSE(sent);
  EXPECT_EQ(sent.error().code, Errc::protocol_error);
  EXPECT_NE(sent.error().detail.find("not allowed to send there"), std::string::npos)
      << sent.error().detail;
  EXPECT_TRUE(pending.get());
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(reported.wait_for(lock, 5s, [&] { return !errors.empty(); }));
    EXPECT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].detail.find("not allowed"), std::string::npos);
  }
  EXPECT_FALSE(client.connected());
  auto later = client.send("/queue/a", "y");
  ASSERT_FALSE(later);
  EXPECT_EQ(later.error().code, Errc::protocol_error);
  auto received = client.receive(1s);  // a blocked consumer learns why, without waiting 1 s
  ASSERT_FALSE(received);
  EXPECT_EQ(received.error().code, Errc::protocol_error);
}

TEST(StompClientTest, ConnectRefused) {
  std::uint16_t port;
  {
    FakeStompServer server;  // find a port nobody listens on any more
    port = server.port();
  }
  StompClient client;
  auto connected = client.connect("127.0.0.1", port, quick());
  ASSERT_FALSE(connected);
  EXPECT_EQ(connected.error().code, Errc::io_error);
  EXPECT_FALSE(client.connected());
}

TEST(StompClientTest, ConnectTimesOutWithoutConnected) {
  FakeStompServer::Behaviour behaviour;
  behaviour.answer_connect = false;
  FakeStompServer server(behaviour);
  StompClient client;
  auto start = std::chrono::steady_clock::now();
  auto connected = client.connect("127.0.0.1", server.port(), quick(150ms));
  ASSERT_FALSE(connected);
  EXPECT_EQ(connected.error().code, Errc::timed_out);
  EXPECT_NE(connected.error().detail.find("CONNECTED"), std::string::npos);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(StompClientTest, RefusedConnectIsPermissionDenied) {
  FakeStompServer::Behaviour behaviour;
  behaviour.required_login = "admin";
  FakeStompServer server(behaviour);
  {
    StompClient client;
    ConnectOptions options = quick();
    options.login = "guest";
    options.passcode = "guest";
    auto connected = client.connect("127.0.0.1", server.port(), options);
    ASSERT_FALSE(connected);
    EXPECT_EQ(connected.error().code, Errc::permission_denied);
    EXPECT_NE(connected.error().detail.find("bad credentials"), std::string::npos);
  }
  StompClient client;
  ConnectOptions options = quick();
  options.login = "admin";
  options.passcode = "secret";
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), options));
  auto connects = server.frames(Command::connect);
  ASSERT_EQ(connects.size(), 2u);
  EXPECT_TRUE(has_header(connects[1], "passcode", "secret"));
}

// ACK and NACK carry what each version asks for.
void check_ack_headers(const std::string& version, AckMode mode) {
  SCOPED_TRACE("version " + version);
  FakeStompServer::Behaviour behaviour;
  behaviour.version = version;
  FakeStompServer server(behaviour);
  StompClient client;
  ConnectOptions options = quick();
  options.version = "1.0,1.1,1.2";
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), options));
  SubscribeOptions sub;
  sub.ack = mode;
  sub.id = "s1";
  ASSERT_TRUE(client.subscribe("/queue/acks", sub));
  ASSERT_TRUE(client.send("/queue/acks", "one", {}, true));
  auto message = client.receive(2s);
  ASSERT_TRUE(message);
  ASSERT_TRUE(client.ack(*message));
  auto nacked = client.nack(*message);
  ASSERT_TRUE(client.disconnect());  // its receipt orders it after the ACK

  auto acks = server.frames(Command::ack);
  ASSERT_EQ(acks.size(), 1u);
  if (version == "1.2") {
    EXPECT_TRUE(has_header(acks[0], "id", "a-1"));
    EXPECT_TRUE(nacked);
  } else if (version == "1.1") {
    EXPECT_TRUE(has_header(acks[0], "message-id", "m-1"));
    EXPECT_TRUE(has_header(acks[0], "subscription", "s1"));
    EXPECT_TRUE(nacked);
  } else {
    EXPECT_TRUE(has_header(acks[0], "message-id", "m-1"));
    EXPECT_EQ(acks[0].header("subscription"), nullptr);
    ASSERT_FALSE(nacked);  // 1.0 has no NACK
    EXPECT_EQ(nacked.error().code, Errc::invalid_argument);
  }
  auto subscribes = server.frames(Command::subscribe);
  ASSERT_EQ(subscribes.size(), 1u);
  EXPECT_TRUE(has_header(subscribes[0], "ack", to_string(mode)));
}

TEST(StompClientTest, AckHeadersFollowTheVersion) {
  check_ack_headers("1.2", AckMode::client_individual);
  check_ack_headers("1.1", AckMode::client);
  check_ack_headers("", AckMode::client);
}

TEST(StompClientTest, CallbackSubscriptionAcksOnTheIoThread) {
  FakeStompServer server;
  std::mutex mutex;  // before the client, which calls back into them until it is destroyed
  std::condition_variable arrived;
  std::vector<std::string> bodies;
  StompClient client;
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), quick()));
  SubscribeOptions sub;
  sub.ack = AckMode::client_individual;
  sub.receipt = true;
  auto id = client.subscribe("/queue/cb", sub, [&](const Message& m) {
    EXPECT_TRUE(client.ack(m));  // non-blocking, allowed in a callback
    EXPECT_FALSE(client.send("/queue/x", "y", {}, true));  // blocking: refused, not deadlocked
    {
      std::lock_guard lock(mutex);
      bodies.push_back(m.body);
    }
    arrived.notify_all();
  });
  ASSERT_TRUE(id);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client.send("/queue/cb", std::to_string(i)));
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(arrived.wait_for(lock, 5s, [&] { return bodies.size() == 3; }));
  }
  EXPECT_EQ(bodies, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_TRUE(server.wait_for([](const std::vector<Frame>& frames) {
    return std::count_if(frames.begin(), frames.end(),
                         [](const Frame& f) { return f.command == Command::ack; }) == 3;
  }));
  EXPECT_FALSE(client.receive(10ms));  // nothing went to the inbox

  ASSERT_TRUE(client.unsubscribe(*id, true));
  ASSERT_TRUE(client.send("/queue/cb", "after", {}, true));
  EXPECT_EQ(bodies.size(), 3u);
}

TEST(StompClientTest, TransactionsCarryTheirId) {
  FakeStompServer server;
  StompClient client;
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), quick()));
  ASSERT_TRUE(client.begin("tx1"));
  SendOptions in_tx;
  in_tx.transaction = "tx1";
  ASSERT_TRUE(client.send("/queue/t", "a", in_tx));
  ASSERT_TRUE(client.commit("tx1"));
  ASSERT_TRUE(client.begin("tx2"));
  ASSERT_TRUE(client.abort("tx2"));

  auto frames = server.frames();
  std::vector<Command> commands;
  for (const auto& f : frames) commands.push_back(f.command);
  EXPECT_EQ(commands, (std::vector<Command>{Command::connect, Command::begin, Command::send,
                                            Command::commit, Command::begin, Command::abort}));
  EXPECT_TRUE(has_header(frames[2], "transaction", "tx1"));
  EXPECT_TRUE(has_header(frames[3], "transaction", "tx1"));
  EXPECT_NE(frames[3].header("receipt"), nullptr);
  EXPECT_TRUE(has_header(frames[5], "transaction", "tx2"));
}

TEST(StompClientTest, SendsHeartBeatsWhenIdle) {
  FakeStompServer::Behaviour behaviour;
  behaviour.heart_beat = "0,50";  // the server wants one every 50 ms
  FakeStompServer server(behaviour);
  StompClient client;
  ConnectOptions options = quick();
  options.heart_beat.send = 50ms;
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), options));
  auto connects = server.frames(Command::connect);
  ASSERT_EQ(connects.size(), 1u);
  EXPECT_TRUE(has_header(connects[0], "heart-beat", "50,0"));
  std::size_t before = server.bytes_read();
  auto start = std::chrono::steady_clock::now();
  while (server.bytes_read() < before + 3 && std::chrono::steady_clock::now() - start < 5s) {
    std::this_thread::sleep_for(10ms);  // the test samples; the client is timer-driven
  }
  EXPECT_GE(server.bytes_read(), before + 3);
  EXPECT_TRUE(client.connected());
}

TEST(StompClientTest, DetectsServerSilence) {
  FakeStompServer::Behaviour behaviour;
  behaviour.heart_beat = "50,0";  // promises a heart-beat every 50 ms, then never sends one
  FakeStompServer server(behaviour);
  std::mutex mutex;  // before the client, which calls back into them until it is destroyed
  std::condition_variable reported;
  std::optional<Error> error;
  StompClient client;
  client.on_error([&](const Error& e) {
    {
      std::lock_guard lock(mutex);
      error = e;
    }
    reported.notify_all();
  });
  ConnectOptions options = quick();
  options.heart_beat.receive = 50ms;
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), options));
  std::unique_lock lock(mutex);
  ASSERT_TRUE(reported.wait_for(lock, 5s, [&] { return error.has_value(); }));
  EXPECT_EQ(error->code, Errc::timed_out);
  EXPECT_NE(error->detail.find("silent"), std::string::npos);
  EXPECT_FALSE(client.connected());
}

TEST(StompClientTest, LargeBodiesRoundTrip) {
  FakeStompServer server;
  StompClient client;
  ConnectOptions options = quick(5s);
  options.max_buffered_bytes = 1 << 20;  // smaller than one body: sends wait for the writer
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), options));
  ASSERT_TRUE(client.subscribe("/queue/big"));
  std::string body(3 << 20, 'x');
  body[12345] = '\0';  // bodies are binary-safe
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client.send("/queue/big", body));
  for (int i = 0; i < 3; ++i) {
    auto message = client.receive(5s);
    ASSERT_TRUE(message) << message.error().to_string();
    EXPECT_EQ(message->body, body);
  }
}

TEST(StompClientTest, DestructorClosesALiveConnection) {
  FakeStompServer server;
  auto start = std::chrono::steady_clock::now();
  {
    StompClient client;
    ASSERT_TRUE(client.connect("127.0.0.1", server.port(), quick()));
    client.async_send("/queue/a", "x", {}, [](Status) {});
    ASSERT_TRUE(client.subscribe("/queue/a"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST(StompClientTest, CallsBeforeConnectFail) {
  StompClient client;
  EXPECT_FALSE(client.send("/queue/a", "x"));
  EXPECT_FALSE(client.subscribe("/queue/a"));
  EXPECT_TRUE(client.disconnect());
}

TEST(EndpointTest, ParsesHostAndPort) {
  auto e = parse_endpoint("127.0.0.1:61614", 61613);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 61614);
  e = parse_endpoint("broker.example", 61613);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "broker.example");
  EXPECT_EQ(e->port, 61613);
  e = parse_endpoint("[::1]:7000", 61613);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "::1");
  EXPECT_EQ(e->port, 7000);
  EXPECT_FALSE(parse_endpoint("host:", 1));
  EXPECT_FALSE(parse_endpoint("host:99999", 1));
  EXPECT_FALSE(parse_endpoint("host:12x", 1));
  EXPECT_FALSE(parse_endpoint(":80", 1));
  EXPECT_FALSE(parse_endpoint("::1", 1));
}

TEST(EndpointTest, BareNamesAreQueues) {
  EXPECT_EQ(normalize_destination("orders"), "/queue/orders");
  EXPECT_EQ(normalize_destination("/topic/prices"), "/topic/prices");
}

}  // namespace
}  // namespace carrier::client
