#include "auth/authenticator.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
    core::ShardId shard;
    std::uint64_t delay_ms;
    std::function<void()> fn;
  };
  std::size_t shard_count() const override { return 4; }
  void post(core::ShardId shard, std::function<void()> fn) override { post_after(shard, 0, std::move(fn)); }
  void post_after(core::ShardId shard, std::uint64_t delay_ms, std::function<void()> fn) override {
    {
      std::lock_guard lock(mutex_);
      posted_.push_back(Posted{shard, delay_ms, std::move(fn)});
    }
    cond_.notify_all();
  }
  std::optional<core::ShardId> current() const override { return std::nullopt; }

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
    auto o = (*a)->authenticate(std::move(c), core::ShardId(0), [](Outcome) { ADD_FAILURE() << "called"; });
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
  EXPECT_FALSE((*a)->authenticate(creds("alice", "wonderland"), core::ShardId(2), w.done()));
  auto ran = ex.run_until([&] { return w.outcome.has_value(); });
  EXPECT_EQ(w.outcome->verdict, Verdict::accepted);
  EXPECT_EQ(w.outcome->user, "alice");
  ASSERT_EQ(ran.size(), 1u);
  EXPECT_EQ(ran[0].shard, core::ShardId(2));
  EXPECT_EQ(ran[0].delay_ms, 0u);
}

TEST(AuthenticatorTest, WrongPasswordAndUnknownUserLookTheSameAndAreDelayed) {
  FakeExecutor ex;
  auto a = Authenticator::create(with_alice(), ex);
  ASSERT_TRUE(a);
  for (auto c : {creds("alice", "wonderlan"), creds("bob", "wonderland"), creds(std::nullopt, "wonderland"),
                 creds("alice", std::nullopt), creds("alice", "")}) {
    Waiter w;
    EXPECT_FALSE((*a)->authenticate(std::move(c), core::ShardId(1), w.done()));
    auto ran = ex.run_until([&] { return w.outcome.has_value(); });
    EXPECT_EQ(w.outcome->verdict, Verdict::rejected);
    EXPECT_EQ(w.outcome->user, "");
    ASSERT_EQ(ran.size(), 2u);  // back to the shard, then its delay there
    EXPECT_EQ(ran[1].shard, core::ShardId(1));
    EXPECT_EQ(ran[1].delay_ms, 250u);
  }
}

TEST(AuthenticatorTest, NoCredentialsWithUsersIsRefusedUnlessAnonymousIsAllowed) {
  FakeExecutor ex;
  auto strict = Authenticator::create(with_alice(), ex);
  ASSERT_TRUE(strict);
  EXPECT_FALSE((*strict)->allows_anonymous());
  auto o = (*strict)->authenticate(creds(std::nullopt, std::nullopt), core::ShardId(0), nullptr);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->verdict, Verdict::rejected);

  auto options = with_alice();
  options.anonymous = true;
  auto open = Authenticator::create(options, ex);
  ASSERT_TRUE(open);
  o = (*open)->authenticate(creds("", ""), core::ShardId(0), nullptr);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->verdict, Verdict::accepted);
  EXPECT_EQ(o->user, "");
  // Credentials that are given are still checked.
  Waiter w;
  EXPECT_FALSE((*open)->authenticate(creds("alice", "nope"), core::ShardId(0), w.done()));
  ex.run_until([&] { return w.outcome.has_value(); });
  EXPECT_EQ(w.outcome->verdict, Verdict::rejected);
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
  std::vector<Waiter> waiters(10);
  std::size_t busy = 0;
  for (auto& w : waiters) {
    auto o = (*a)->authenticate(creds("alice", "wonderland"), core::ShardId(0), w.done());
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
  auto o = (*a)->authenticate(creds("alice", "wonderland"), core::ShardId(0), nullptr);
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

}  // namespace
}  // namespace carrier::auth
