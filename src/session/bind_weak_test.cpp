#include "session/bind_weak.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

namespace carrier::session {
namespace {

struct Target : std::enable_shared_from_this<Target> {
  std::string got;
  void on_done(int n, const std::string& what) { got += std::to_string(n) + what; }
};

TEST(BindWeak, CallsAMemberWhileTheTargetLives) {
  auto t = std::make_shared<Target>();
  std::function<void(int, std::string)> done = bind_weak(t.get(), &Target::on_done);
  done(1, "a");
  EXPECT_EQ(t->got, "1a");
}

TEST(BindWeak, CallsALambdaWithTheTargetHeld) {
  auto t = std::make_shared<Target>();
  std::weak_ptr<Target> seen;
  std::function<void(int)> done = bind_weak(t.get(), [&seen](const std::shared_ptr<Target>& self, int n) {
    seen = self;
    self->got = std::to_string(n);
  });
  done(7);
  EXPECT_EQ(t->got, "7");
  EXPECT_EQ(seen.lock(), t);
}

TEST(BindWeak, DoesNothingOnceTheTargetIsGone) {
  auto t = std::make_shared<Target>();
  int calls = 0;
  std::function<void()> done = bind_weak(t.get(), [&calls](const std::shared_ptr<Target>&) { ++calls; });
  t.reset();
  done();
  EXPECT_EQ(calls, 0);
}

TEST(BindWeak, DoesNotKeepTheTargetAlive) {
  auto t = std::make_shared<Target>();
  std::weak_ptr<Target> watch = t;
  std::function<void(int, std::string)> done = bind_weak(t.get(), &Target::on_done);
  t.reset();
  EXPECT_TRUE(watch.expired());
  done(1, "late");  // harmless
}

}  // namespace
}  // namespace carrier::session
