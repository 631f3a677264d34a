#include "auth/permissions.hpp"

#include <gtest/gtest.h>

#include <deque>

namespace carrier::auth {
namespace {

// Runs posted functions when told to, on the calling thread.
class ManualExecutor : public core::Executor {
 public:
  std::size_t shard_count() const override { return 2; }
  void post(model::ShardId, std::function<void()> fn) override { posted.push_back(std::move(fn)); }
  void post_after(model::ShardId, std::uint64_t, std::function<void()> fn) override { posted.push_back(std::move(fn)); }
  std::optional<model::ShardId> current() const override { return model::ShardId(0); }
  void run() {
    while (!posted.empty()) {
      auto fn = std::move(posted.front());
      posted.pop_front();
      fn();
    }
  }
  std::deque<std::function<void()>> posted;
};

std::shared_ptr<const Acl> acl(std::string_view text) {
  auto parsed = Acl::parse(text, "acl");
  EXPECT_TRUE(parsed.has_value());
  return std::make_shared<const Acl>(std::move(*parsed));
}

TEST(Permissions, WithoutAnAclEverythingIsAllowed) {
  ManualExecutor executor;
  AccessControl access(executor, nullptr);
  Permissions p(access, model::ShardId(1));
  p.set_identity("alice", "c");
  EXPECT_FALSE(access.enabled());
  EXPECT_TRUE(p.allows(Right::admin, AclKind::queue, "anything"));
}

TEST(Permissions, AReloadChangesTheNextAnswer) {
  ManualExecutor executor;
  AccessControl access(executor, acl("user alice\nqueue read a\n"));
  Permissions p(access, model::ShardId(1));
  p.set_identity("alice", "c");
  EXPECT_TRUE(p.allows(Right::read, AclKind::queue, "a"));
  EXPECT_TRUE(p.allows(Right::read, AclKind::queue, "a"));  // from the cache
  EXPECT_FALSE(p.allows(Right::write, AclKind::queue, "a"));
  access.replace(acl("user alice\nqueue write a\n"));
  EXPECT_TRUE(p.allows(Right::read, AclKind::queue, "a"));  // not posted yet
  executor.run();
  EXPECT_FALSE(p.allows(Right::read, AclKind::queue, "a"));
  EXPECT_TRUE(p.allows(Right::write, AclKind::queue, "a"));
}

TEST(Permissions, TheCacheStaysBounded) {
  ManualExecutor executor;
  AccessControl access(executor, acl("user alice\nqueue read q.*\n"));
  Permissions p(access, model::ShardId(0));
  p.set_identity("alice", "");
  for (std::size_t i = 0; i < 3 * Permissions::kMaxCachedNames; ++i) {
    EXPECT_TRUE(p.allows(Right::read, AclKind::queue, "q." + std::to_string(i)));
  }
  EXPECT_FALSE(p.allows(Right::read, AclKind::queue, "r"));
}

}  // namespace
}  // namespace carrier::auth
