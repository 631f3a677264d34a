#include "auth/authenticator.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "auth/password_hash.hpp"

namespace carrier::auth {
namespace {

using ::testing::HasSubstr;

// Posted functions wait in a list until the test runs them on its own thread, as a shard would.
class FakeExecutor : public core::Executor {
 public:
  struct Posted {
    model::ShardId shard;
    std::uint64_t delay_ms;
    std::function<void()> fn;
  };
  std::size_t shard_count() const override { return 4; }
  void post(model::ShardId shard, std::function<void()> fn) override { post_after(shard, 0, std::move(fn)); }
  void post_after(model::ShardId shard, std::uint64_t delay_ms, std::function<void()> fn) override {
    {
      std::lock_guard lock(mutex_);
      posted_.push_back(Posted{shard, delay_ms, std::move(fn)});
    }
    cond_.notify_all();
  }
  std::optional<model::ShardId> current() const override { return std::nullopt; }

  // Runs posted functions (waiting for them) until `done()` holds; returns what ran.
  std::vector<Posted> run_until(const std::function<bool()>& done) {
    std::vector<Posted> ran;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done()) {
      Posted next;
      {
        std::unique_lock lock(mutex_);
        if (!cond_.wait_until(lock, deadline, [this] { return !posted_.empty(); })) {
          ADD_FAILURE() << "nothing was posted back";
          return ran;
        }
        next = std::move(posted_.front());
        posted_.erase(posted_.begin());
      }
      next.fn();
      ran.push_back(Posted{next.shard, next.delay_ms, nullptr});
    }
    return ran;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cond_;
  std::vector<Posted> posted_;
};

const std::string& alice_hash() {
  static const std::string hash = [] {
    EXPECT_TRUE(init_sodium());
    return *hash_password("wonderland");
  }();
  return hash;
}

Options with_alice() {
  Options o;
  o.users.push_back(User{"alice", alice_hash(), "test:1"});
  o.failure_delay_ms = 250;
  return o;
}

Credentials creds(std::optional<std::string> user, std::optional<std::string> password) {
  return Credentials{std::move(user), std::move(password)};
}

struct Waiter {
  std::optional<Outcome> outcome;
  Authenticator::Done done() {
    return [this](Outcome o) { outcome = std::move(o); };
  }
};

TEST(AuthenticatorTest, NoUsersLetsEveryoneInAtOnce) {
  FakeExecutor ex;
  auto a = Authenticator::create(Options{}, ex);
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_FALSE((*a)->has_users());
  EXPECT_TRUE((*a)->allows_anonymous());
  for (auto c : {creds(std::nullopt, std::nullopt), creds("guest", "guest"), creds("", ""), creds(std::nullopt, "x")}) {
    auto o = (*a)->authenticate(std::move(c), model::ShardId(0), [](Outcome) { ADD_FAILURE() << "called"; });
    ASSERT_TRUE(o);
    EXPECT_EQ(o->verdict, Verdict::accepted);
    EXPECT_EQ(o->user, "");
  }
}

TEST(AuthenticatorTest, RightPasswordIsCheckedOffTheShardAndPostedBack) {
  FakeExecutor ex;
  auto a = Authenticator::create(with_alice(), ex);
  ASSERT_TRUE(a) << a.error().to_string();
  Waiter w;
  EXPECT_FALSE((*a)->authenticate(creds("alice", "wonderland"), model::ShardId(2), w.done()));
  auto ran = ex.run_until([&] { return w.outcome.has_value(); });
  EXPECT_EQ(w.outcome->verdict, Verdict::accepted);
  EXPECT_EQ(w.outcome->user, "alice");
  ASSERT_EQ(ran.size(), 1u);
  EXPECT_EQ(ran[0].shard, model::ShardId(2));
  EXPECT_EQ(ran[0].delay_ms, 0u);
}

TEST(AuthenticatorTest, WrongPasswordAndUnknownUserLookTheSameAndAreDelayed) {
  FakeExecutor ex;
  auto a = Authenticator::create(with_alice(), ex);
  ASSERT_TRUE(a);
  std::uint32_t expected_delay = 250;  // failure_delay_ms, doubled per failure of this source
  for (auto c : {creds("alice", "wonderlan"), creds("bob", "wonderland"), creds(std::nullopt, "wonderland"),
                 creds("alice", std::nullopt), creds("alice", "")}) {
    Waiter w;
    EXPECT_FALSE((*a)->authenticate(std::move(c), model::ShardId(1), w.done()));
    auto ran = ex.run_until([&] { return w.outcome.has_value(); });
    EXPECT_EQ(w.outcome->verdict, Verdict::rejected);
    EXPECT_EQ(w.outcome->user, "");
    ASSERT_EQ(ran.size(), 2u);  // back to the shard, then its delay there
    EXPECT_EQ(ran[1].shard, model::ShardId(1));
    EXPECT_EQ(ran[1].delay_ms, expected_delay);
    expected_delay *= 2;
  }
}

TEST(AuthenticatorTest, NoCredentialsWithUsersIsRefusedUnlessAnonymousIsAllowed) {
  FakeExecutor ex;
  auto strict = Authenticator::create(with_alice(), ex);
  ASSERT_TRUE(strict);
  EXPECT_FALSE((*strict)->allows_anonymous());
  auto o = (*strict)->authenticate(creds(std::nullopt, std::nullopt), model::ShardId(0), nullptr);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->verdict, Verdict::rejected);

  auto options = with_alice();
  options.anonymous = true;
  auto open = Authenticator::create(options, ex);
  ASSERT_TRUE(open);
  o = (*open)->authenticate(creds("", ""), model::ShardId(0), nullptr);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->verdict, Verdict::accepted);
  EXPECT_EQ(o->user, "");
  // Credentials that are given are still checked.
  Waiter w;
  EXPECT_FALSE((*open)->authenticate(creds("alice", "nope"), model::ShardId(0), w.done()));
  ex.run_until([&] { return w.outcome.has_value(); });
  EXPECT_EQ(w.outcome->verdict, Verdict::rejected);
}

TEST(AuthenticatorTest, AVerifiedCertificateIdentityIsThatUserWithoutAPasswordCheck) {
  FakeExecutor ex;
  auto a = Authenticator::create(with_alice(), ex);
  ASSERT_TRUE(a);
  // A name the users file does not know, with or without a login and password: the TLS layer
  // verified the certificate, so the answer is at once and nothing is checked.
  for (auto c : {creds(std::nullopt, std::nullopt), creds("alice", "wrong"), creds("bob", std::nullopt)}) {
    c.identity = "carol";
    auto o = (*a)->authenticate(std::move(c), model::ShardId(0), [](Outcome) { ADD_FAILURE() << "called"; });
    ASSERT_TRUE(o);
    EXPECT_EQ(o->verdict, Verdict::accepted);
    EXPECT_EQ(o->user, "carol");
  }
  // An empty identity (no certificate) is no identity: the usual rules.
  auto c = creds(std::nullopt, std::nullopt);
  c.identity = "";
  auto o = (*a)->authenticate(std::move(c), model::ShardId(0), nullptr);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->verdict, Verdict::rejected);
}

TEST(AuthenticatorTest, TooManyWaitingIsBusy) {
  FakeExecutor ex;
  auto options = with_alice();
  options.max_pending = 1;
  options.failure_delay_ms = 0;
  auto a = Authenticator::create(options, ex);
  ASSERT_TRUE(a);
  // The verifier takes at most one at a time and each check takes tens of milliseconds: of
  // ten asked at once, at most two are in its hands or its queue.
  // Each from its own address: all of them belong in the first lane (max_pending).
  std::vector<Waiter> waiters(10);
  std::size_t busy = 0;
  for (std::size_t i = 0; i < waiters.size(); ++i) {
    auto& w = waiters[i];
    auto o = (*a)->authenticate(Credentials{"alice", "wonderland", "10.0.0." + std::to_string(i)}, model::ShardId(0),
                                w.done());
    if (o && o->verdict == Verdict::busy) ++busy;
  }
  EXPECT_GE(busy, 8u);
  ex.run_until([&] {
    std::size_t answered = 0;
    for (auto& w : waiters) answered += w.outcome.has_value();
    return answered == waiters.size() - busy;
  });
}

TEST(AuthenticatorTest, StoppedRefusesAsBusy) {
  FakeExecutor ex;
  auto a = Authenticator::create(with_alice(), ex);
  ASSERT_TRUE(a);
  (*a)->stop();
  auto o = (*a)->authenticate(creds("alice", "wonderland"), model::ShardId(0), nullptr);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->verdict, Verdict::busy);
}

TEST(AuthenticatorTest, CreateChecksTheUsers) {
  FakeExecutor ex;
  Options bad_hash;
  bad_hash.users.push_back(User{"alice", "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA", "users.txt:4"});
  auto a = Authenticator::create(bad_hash, ex);
  ASSERT_FALSE(a);
  EXPECT_THAT(a.error().detail, HasSubstr("user \"alice\""));
  EXPECT_THAT(a.error().detail, HasSubstr("users.txt:4"));

  auto twice = with_alice();
  twice.users.push_back(User{"alice", alice_hash(), "users.txt:9"});
  a = Authenticator::create(twice, ex);
  ASSERT_FALSE(a);
  EXPECT_THAT(a.error().detail, HasSubstr("defined twice in users.txt:9 and in test:1"));

  Options nobody;
  nobody.anonymous = false;
  a = Authenticator::create(nobody, ex);
  ASSERT_FALSE(a);
  EXPECT_THAT(a.error().detail, HasSubstr("no client could connect"));
}

// A clock the test moves by hand.
struct TestClock {
  std::atomic<std::int64_t> ms{1'000'000};
  Authenticator::Clock clock() {
    return [this] { return std::chrono::steady_clock::time_point(std::chrono::milliseconds(ms.load())); };
  }
};

Credentials from(std::string source, std::optional<std::string> user, std::optional<std::string> password) {
  return Credentials{std::move(user), std::move(password), std::move(source)};
}

Outcome check_now(Authenticator& a, FakeExecutor& ex, Credentials c) {
  Waiter w;
  auto o = a.authenticate(std::move(c), model::ShardId(0), w.done());
  if (o) return *o;
  ex.run_until([&] { return w.outcome.has_value(); });
  return *w.outcome;
}

TEST(AuthenticatorTest, ASourceOverItsFailureBudgetIsRefusedWithoutACheck) {
  FakeExecutor ex;
  TestClock clock;
  auto options = with_alice();
  options.failure_delay_ms = 0;
  options.source_failure_limit = 2;
  options.failure_window_ms = 60'000;
  auto a = Authenticator::create(options, ex, clock.clock());
  ASSERT_TRUE(a);
  EXPECT_EQ(check_now(**a, ex, from("10.0.0.1", "alice", "guess1")).verdict, Verdict::rejected);
  EXPECT_EQ(check_now(**a, ex, from("10.0.0.1", "alice", "guess2")).verdict, Verdict::rejected);
  // Refused at once, even with the right password, and nothing is posted.
  auto o = (*a)->authenticate(from("10.0.0.1", "alice", "wonderland"), model::ShardId(0),
                              [](Outcome) { ADD_FAILURE() << "called"; });
  ASSERT_TRUE(o);
  EXPECT_EQ(o->verdict, Verdict::throttled);
  // Another address is checked as usual.
  EXPECT_EQ(check_now(**a, ex, from("10.0.0.2", "alice", "wonderland")).verdict, Verdict::accepted);
  // One failure drains every 30 s: then the address may try again.
  clock.ms += 30'001;
  EXPECT_EQ(check_now(**a, ex, from("10.0.0.1", "alice", "wonderland")).verdict, Verdict::accepted);
}

TEST(AuthenticatorTest, AFailingSourceQueuesBehindACleanOne) {
  FakeExecutor ex;
  TestClock clock;
  auto options = with_alice();
  options.failure_delay_ms = 0;
  options.source_failure_limit = 100;
  options.max_pending_suspect = 3;
  auto a = Authenticator::create(options, ex, clock.clock());
  ASSERT_TRUE(a);
  EXPECT_EQ(check_now(**a, ex, from("10.0.0.1", "alice", "guess")).verdict, Verdict::rejected);

  // The verifier is busy with the first (a check takes tens of ms; queueing takes microseconds):
  // the failing source's logins go to the second lane, three at most.
  std::vector<std::pair<std::string, Waiter>> waiters(6);
  std::vector<std::string> answered;
  auto ask = [&](std::size_t i, const std::string& source, const std::string& password) {
    waiters[i].first = source;
    return (*a)->authenticate(from(source, "alice", password), model::ShardId(0), waiters[i].second.done());
  };
  EXPECT_FALSE(ask(0, "10.0.0.3", "wonderland"));  // clean: the first lane
  for (std::size_t i = 1; i <= 3; ++i) EXPECT_FALSE(ask(i, "10.0.0.1", "guess"));
  auto full = ask(4, "10.0.0.1", "guess");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->verdict, Verdict::busy);
  // A second login of a clean source while its first waits is also a second-lane one: busy.
  auto second = ask(5, "10.0.0.3", "wonderland");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->verdict, Verdict::busy);
  // A new clean source overtakes the failing one's waiting logins.
  std::vector<std::pair<std::string, Waiter>> late(1);
  late[0].first = "10.0.0.2";
  EXPECT_FALSE((*a)->authenticate(from("10.0.0.2", "alice", "wonderland"), model::ShardId(0), late[0].second.done()));

  std::vector<std::string> order;
  auto record = [&](std::vector<std::pair<std::string, Waiter>>& list, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      auto& [source, w] = list[i];
      if (w.outcome && source != "done") {
        order.push_back(source);
        source = "done";
      }
    }
  };
  ex.run_until([&] {
    record(waiters, 4);
    record(late, 1);
    return order.size() == 5;
  });
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order[0], "10.0.0.3");
  EXPECT_EQ(order[1], "10.0.0.2");
  EXPECT_EQ(order[2], "10.0.0.1");
  EXPECT_EQ(waiters[0].second.outcome->verdict, Verdict::accepted);
  EXPECT_EQ(late[0].second.outcome->verdict, Verdict::accepted);
}

TEST(AuthenticatorTest, TheBrokerWideFailureBudgetStillChecksCleanSources) {
  FakeExecutor ex;
  TestClock clock;
  auto options = with_alice();
  options.failure_delay_ms = 0;
  options.source_failure_limit = 10;
  options.total_failure_limit = 2;
  auto a = Authenticator::create(options, ex, clock.clock());
  ASSERT_TRUE(a);
  EXPECT_EQ(check_now(**a, ex, from("10.0.0.1", "alice", "x")).verdict, Verdict::rejected);
  EXPECT_EQ(check_now(**a, ex, from("10.0.0.2", "alice", "x")).verdict, Verdict::rejected);
  auto o = (*a)->authenticate(from("10.0.0.1", "alice", "wonderland"), model::ShardId(0), nullptr);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->verdict, Verdict::throttled);
  EXPECT_EQ(check_now(**a, ex, from("10.0.0.3", "alice", "wonderland")).verdict, Verdict::accepted);
}

}  // namespace
}  // namespace carrier::auth
