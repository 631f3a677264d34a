#pragma once

// What the protocols' session tests share: a one-shard broker whose posts and store the test
// runs by hand (core's broker test fixture), an io_context for the sessions' timers and resumed
// reads, and settle(), which runs all of it (the store confirming every batch) with the fake
// transports' writers until nothing moves.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/broker_test_fixture.hpp"
#include "net/fake_transport.hpp"

namespace carrier::session::testing {

class SessionTest : public ::testing::Test {
 protected:
  SessionTest() : ex_(1), store_(ex_) {
    ex_.set_current(model::ShardId(0));  // the test runs as the shard
    broker_ = std::make_unique<core::Broker>(model::ShardId(0), ex_, store_, core::Options{}, [this] { return now_; },
                                             &memory_);
    broker_->set_peers({broker_.get()});
  }

  std::shared_ptr<net::FakeTransport> make_transport(const char* protocol) {
    auto t = std::make_shared<net::FakeTransport>(io_.get_executor(), model::ShardId(0), protocol);
    transports_.push_back(t);
    return t;
  }

  void settle() {
    for (int round = 0; round < 100; ++round) {
      const std::size_t stored = store_.records.size();
      store_.complete_all();  // the store confirms what it was given
      ex_.drain();
      const bool ran = io_.poll() != 0;
      io_.restart();
      bool wrote = false;
      for (auto& t : transports_) wrote = t->write() || wrote;
      if (!ran && !wrote && store_.records.size() == stored) return;
    }
    ADD_FAILURE() << "the sessions did not settle";
  }

  // Closes every transport and lets the sessions' last work run (call from the test's destructor,
  // while the sessions' dependencies still exist).
  void close_all() {
    for (auto& t : transports_) t->close();
    settle();
  }

  core::broker_testing::FakeExecutor ex_;
  core::broker_testing::FakeStore store_;
  core::MemoryGauge memory_;
  std::int64_t now_ = 1'000'000;
  std::unique_ptr<core::Broker> broker_;
  net::asio::io_context io_;
  std::vector<std::shared_ptr<net::FakeTransport>> transports_;
};

}  // namespace carrier::session::testing
