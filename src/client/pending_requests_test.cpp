#include "client/pending_requests.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace carrier::client {
namespace {

namespace asio = net::asio;
using namespace std::chrono_literals;
using stomp::codec::Command;
using stomp::codec::Frame;

Frame receipt(std::string id) {
  Frame frame;
  frame.command = Command::receipt;
  frame.headers.emplace_back("receipt-id", std::move(id));
  return frame;
}

// Every test drives the io_context on the test thread, which is thereby the "I/O thread".
class PendingRequestsTest : public ::testing::Test {
 protected:
  asio::io_context io_{1};
  PendingRequests pending_{io_.get_executor()};
};

TEST_F(PendingRequestsTest, CompletesWithTheAnswer) {
  std::optional<Result<Frame>> got;
  ASSERT_TRUE(pending_.add("r-1", 10s, [&](Result<Frame> r) { got = std::move(r); }));
  EXPECT_EQ(pending_.size(), 1u);
  EXPECT_TRUE(pending_.complete("r-1", receipt("r-1")));
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(*(*got)->header("receipt-id"), "r-1");
  EXPECT_TRUE(pending_.empty());
  // Answered twice, or never asked: not a waiting request.
  EXPECT_FALSE(pending_.complete("r-1", receipt("r-1")));
  EXPECT_FALSE(pending_.complete("r-9", receipt("r-9")));
}

TEST_F(PendingRequestsTest, RejectsADuplicateId) {
  int calls = 0;
  ASSERT_TRUE(pending_.add("r-1", 10s, [&](Result<Frame>) { ++calls; }));
  auto again = pending_.add("r-1", 10s, [&](Result<Frame>) { ++calls; });
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::already_exists);
  EXPECT_TRUE(pending_.complete("r-1", receipt("r-1")));
  EXPECT_EQ(calls, 1);
}

TEST_F(PendingRequestsTest, TimesOutWithoutPolling) {
  std::optional<Result<Frame>> got;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(pending_.add("r-1", 50ms, [&](Result<Frame> r) { got = std::move(r); }));
  // run() returns when no work is left: the expiry is one timer wait, so only a handful of
  // handlers run (a polling loop would run thousands).
  std::size_t handlers = io_.run();
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(got.has_value());
  ASSERT_FALSE(got->has_value());
  EXPECT_EQ(got->error().code, Errc::timed_out);
  EXPECT_NE(got->error().detail.find("r-1"), std::string::npos);
  EXPECT_GE(elapsed, 50ms);
  EXPECT_LT(elapsed, 5s);
  EXPECT_LE(handlers, 3u);
  EXPECT_TRUE(pending_.empty());
}

TEST_F(PendingRequestsTest, AnEarlierDeadlineRearmsTheTimer) {
  std::vector<std::string> timed_out;
  ASSERT_TRUE(pending_.add("slow", 60s, [&](Result<Frame> r) {
    if (!r) timed_out.push_back("slow");
  }));
  ASSERT_TRUE(pending_.add("fast", 30ms, [&](Result<Frame> r) {
    if (!r) timed_out.push_back("fast");
  }));
  auto start = std::chrono::steady_clock::now();
  while (timed_out.empty() && std::chrono::steady_clock::now() - start < 5s) io_.run_one_for(5s);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(timed_out, std::vector<std::string>{"fast"});
  EXPECT_EQ(pending_.size(), 1u);
  EXPECT_TRUE(pending_.complete("slow", receipt("slow")));
}

TEST_F(PendingRequestsTest, ExpiresInDeadlineOrder) {
  std::vector<std::string> order;
  for (auto [id, timeout] : {std::pair{"c", 60ms}, std::pair{"a", 20ms}, std::pair{"b", 40ms}}) {
    ASSERT_TRUE(pending_.add(id, timeout, [&order, id = std::string(id)](Result<Frame> r) {
      EXPECT_FALSE(r);
      order.push_back(id);
    }));
  }
  io_.run();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c"}));
}

TEST_F(PendingRequestsTest, AnsweringTheLastRequestLeavesNoWork) {
  ASSERT_TRUE(pending_.add("r-1", 60s, [](Result<Frame>) {}));
  EXPECT_TRUE(pending_.complete("r-1", receipt("r-1")));
  // The 60 s timer was cancelled, so an idle io_context stops at once.
  auto start = std::chrono::steady_clock::now();
  io_.run();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST_F(PendingRequestsTest, FailAllFansTheErrorOut) {
  std::vector<Errc> codes;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(pending_.add("r-" + std::to_string(i), 60s, [&](Result<Frame> r) {
      ASSERT_FALSE(r);
      codes.push_back(r.error().code);
    }));
  }
  pending_.fail_all(Error(Errc::io_error, "connection reset"));
  EXPECT_EQ(codes, std::vector<Errc>(5, Errc::io_error));
  EXPECT_TRUE(pending_.empty());
  auto start = std::chrono::steady_clock::now();
  io_.run();  // no timer left armed
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST_F(PendingRequestsTest, ACompletionMayAddARequest) {
  // A completion re-entering add() (a retry, the next step of a handshake) must be kept, not
  // failed by the fail_all that ran it.
  int second_calls = 0;
  ASSERT_TRUE(pending_.add("first", 60s, [&](Result<Frame>) {
    ASSERT_TRUE(pending_.add("second", 60s, [&](Result<Frame>) { ++second_calls; }));
  }));
  pending_.fail_all(Error(Errc::shutting_down));
  EXPECT_EQ(second_calls, 0);
  EXPECT_EQ(pending_.size(), 1u);
  EXPECT_TRUE(pending_.complete("second", receipt("second")));
  EXPECT_EQ(second_calls, 1);
}

TEST_F(PendingRequestsTest, DestroyedWithATimerQueuedIsSafe) {
  auto pending = std::make_unique<PendingRequests>(io_.get_executor());
  ASSERT_TRUE(pending->add("r-1", 1ms, [](Result<Frame>) {}));
  std::this_thread::sleep_for(5ms);  // let the deadline pass before any handler runs
  io_.poll();                        // the expiry may now be queued, or already handled
  pending.reset();
  io_.run();  // a queued handler must notice the object is gone
  SUCCEED();
}

}  // namespace
}  // namespace carrier::client
