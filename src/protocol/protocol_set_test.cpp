#include "protocol/protocol_set.hpp"

#include "net/connection.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace carrier::protocol {
namespace {

using namespace std::chrono_literals;

// Records what the set asks of it. Takes the recovered records of the queues "$<name>-...",
// as MQTT takes "$mqtt-sessions".
class FakeProtocol final : public Protocol {
 public:
  FakeProtocol(std::string name, net::ListenerOptions listener, core::Executor& executor)
      : Protocol(name, listener), executor_(executor), reserved_("queue:$" + name + "-") {}

  void start_session(std::shared_ptr<net::Connection> connection) override {
    record(sessions_, connection->shard());
    connection->close();
  }
  bool recover(std::string_view queue_key, const model::Message& message) override {
    if (!queue_key.starts_with(reserved_)) return false;
    recovered.push_back(std::string(queue_key) + " " + message.correlation_id);
    return true;
  }
  void start(model::ShardId shard) override { record(starts_, shard); }
  bool idle() const override { return idle_now; }

  // Waits (bounded) until `count` sessions (starts) ran, each on the shard it was given.
  std::vector<std::uint32_t> wait_sessions(std::size_t count) { return wait(sessions_, count); }
  std::vector<std::uint32_t> wait_starts(std::size_t count) { return wait(starts_, count); }
  std::size_t session_count() {
    std::lock_guard lock(mutex_);
    return sessions_.size();
  }

  std::vector<std::string> recovered;
  bool idle_now = true;

 private:
  void record(std::vector<std::uint32_t>& calls, model::ShardId shard) {
    // A call made off its shard is recorded as a shard that does not exist.
    const auto current = executor_.current();
    std::lock_guard lock(mutex_);
    calls.push_back(current && *current == shard ? shard.value() : 999);
    changed_.notify_all();
  }
  std::vector<std::uint32_t> wait(std::vector<std::uint32_t>& calls, std::size_t count) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, 10s, [&] { return calls.size() >= count; });
    return calls;
  }

  core::Executor& executor_;
  std::string reserved_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::uint32_t> sessions_;
  std::vector<std::uint32_t> starts_;
};

const net::ListenerOptions kAnyPort{true, "127.0.0.1", 0};
const net::ListenerOptions kOff{false, "127.0.0.1", 0};

// Registers a fake protocol and keeps a pointer to it for the test to look at.
FakeProtocol& add_fake(ProtocolSet& set, net::ShardPool& pool, std::string name, net::ListenerOptions listener) {
  auto fake = std::make_unique<FakeProtocol>(std::move(name), listener, pool);
  auto& ref = *fake;
  set.add(std::move(fake));
  return ref;
}

bool can_connect(const net::tcp::endpoint& endpoint) {
  net::asio::io_context context;
  net::tcp::socket socket(context);
  boost::system::error_code ec;
  socket.connect(endpoint, ec);
  return !ec;
}

TEST(ProtocolSet, EnabledProtocolsListenAndGetTheirConnectionsOnTheAcceptingShard) {
  net::ShardPool pool(2);
  ProtocolSet set(pool);
  auto& alpha = add_fake(set, pool, "alpha", kAnyPort);
  auto& beta = add_fake(set, pool, "beta", kOff);
  auto& gamma = add_fake(set, pool, "gamma", kAnyPort);
  ASSERT_TRUE(set.open());

  const auto listening = set.listening();
  ASSERT_EQ(listening.size(), 2u);  // beta is off: no listener
  EXPECT_EQ(listening[0].first, "alpha");
  EXPECT_EQ(listening[1].first, "gamma");
  EXPECT_NE(listening[0].second.port(), 0);
  EXPECT_NE(listening[0].second.port(), listening[1].second.port());

  pool.start();
  set.start_listening();
  ASSERT_TRUE(can_connect(listening[0].second));
  ASSERT_TRUE(can_connect(listening[0].second));
  ASSERT_TRUE(can_connect(listening[1].second));
  // Round-robin over the shards, each session started on the shard its socket belongs to.
  const auto alpha_shards = alpha.wait_sessions(2);
  EXPECT_EQ(std::multiset<std::uint32_t>(alpha_shards.begin(), alpha_shards.end()), (std::multiset<std::uint32_t>{0, 1}));
  EXPECT_EQ(gamma.wait_sessions(1).size(), 1u);
  EXPECT_EQ(beta.session_count(), 0u);

  // Stopped listeners refuse new connections (the close is posted to shard 0: wait for it).
  set.stop_listening();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (can_connect(listening[0].second) && std::chrono::steady_clock::now() < deadline) {
  }
  EXPECT_FALSE(can_connect(listening[0].second));
  pool.force_stop();
}

TEST(ProtocolSet, AnAddressInUseStopsOpenWithTheListenersError) {
  net::asio::io_context context;
  net::tcp::acceptor taken(context, net::tcp::endpoint(net::asio::ip::make_address("127.0.0.1"), 0));
  const auto port = taken.local_endpoint().port();

  net::ShardPool pool(1);
  ProtocolSet set(pool);
  add_fake(set, pool, "alpha", kAnyPort);
  add_fake(set, pool, "beta", net::ListenerOptions{true, "127.0.0.1", port});
  const auto st = set.open();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::io_error);
  EXPECT_EQ(st.error().detail.rfind("beta: cannot listen on 127.0.0.1:" + std::to_string(port) + ": ", 0), 0u)
      << st.error().detail;
}

TEST(ProtocolSet, RecoveredRecordsGoToTheProtocolThatKeepsTheirQueue) {
  net::ShardPool pool(1);
  ProtocolSet set(pool);
  auto& alpha = add_fake(set, pool, "alpha", kOff);
  auto& beta = add_fake(set, pool, "beta", kOff);
  model::Message record;
  record.correlation_id = "r1";

  EXPECT_TRUE(set.recover("queue:$beta-sessions", record));
  EXPECT_TRUE(set.recover("queue:$alpha-state", record));
  EXPECT_FALSE(set.recover("queue:orders", record));  // the core's
  EXPECT_EQ(alpha.recovered, (std::vector<std::string>{"queue:$alpha-state r1"}));
  EXPECT_EQ(beta.recovered, (std::vector<std::string>{"queue:$beta-sessions r1"}));
}

TEST(ProtocolSet, FindsAProtocolByItsName) {
  net::ShardPool pool(1);
  ProtocolSet set(pool);
  auto& alpha = add_fake(set, pool, "alpha", kOff);
  auto& beta = add_fake(set, pool, "beta", kOff);
  EXPECT_EQ(set.find("alpha"), &alpha);
  EXPECT_EQ(set.find("beta"), &beta);
  EXPECT_EQ(set.find("gamma"), nullptr);
  // What another listener's transport gets from a protocol that runs only on its own.
  EXPECT_EQ(alpha.max_frame_bytes(), 0u);
}

TEST(ProtocolSet, StartRunsEveryProtocolOnTheShardItIsCalledOn) {
  net::ShardPool pool(2);
  ProtocolSet set(pool);
  auto& alpha = add_fake(set, pool, "alpha", kOff);
  auto& beta = add_fake(set, pool, "beta", kOff);
  pool.start();
  for (std::uint32_t i = 0; i < 2; ++i) {
    pool.post(model::ShardId(i), [&set, &pool] { set.start(*pool.current()); });
  }
  for (auto* fake : {&alpha, &beta}) {
    const auto shards = fake->wait_starts(2);
    EXPECT_EQ(std::set<std::uint32_t>(shards.begin(), shards.end()), (std::set<std::uint32_t>{0, 1}));
  }
  pool.force_stop();
}

TEST(ProtocolSet, IdleOnlyOnceEveryProtocolIs) {
  net::ShardPool pool(1);
  ProtocolSet set(pool);
  auto& alpha = add_fake(set, pool, "alpha", kOff);
  auto& beta = add_fake(set, pool, "beta", kOff);
  EXPECT_TRUE(set.idle());
  beta.idle_now = false;  // e.g. MQTT still handing a departing session's records to the store
  EXPECT_FALSE(set.idle());
  alpha.idle_now = false;
  beta.idle_now = true;
  EXPECT_FALSE(set.idle());
  alpha.idle_now = true;
  EXPECT_TRUE(set.idle());
}

}  // namespace
}  // namespace carrier::protocol
