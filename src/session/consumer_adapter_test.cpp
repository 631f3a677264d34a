#include "session/consumer_adapter.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace carrier::session {
namespace {

struct Plain {
  std::vector<std::uint64_t> tags;
  void deliver(core::ConsumerId, std::vector<core::Delivery> batch) {
    for (const auto& d : batch) tags.push_back(d.tag);
  }
};

struct WithChildren : Plain {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> attached, detached;
  void attach_child(core::ConsumerId parent, core::ConsumerId child) { attached.emplace_back(parent.value(), child.value()); }
  void detach_child(core::ConsumerId parent, core::ConsumerId child) { detached.emplace_back(parent.value(), child.value()); }
};

std::vector<core::Delivery> batch(std::uint64_t tag) {
  std::vector<core::Delivery> b(1);
  b[0].tag = tag;
  return b;
}

TEST(ConsumerAdapter, DeliversToALiveSessionAndDropsForAGoneOne) {
  auto s = std::make_shared<Plain>();
  ConsumerAdapter<Plain> adapter(s);
  adapter.deliver(core::ConsumerId(1), batch(5));
  EXPECT_EQ(s->tags, (std::vector<std::uint64_t>{5}));
  adapter.attached(core::ConsumerId(1), core::ConsumerId(2));  // a session without children ignores it
  s.reset();
  adapter.deliver(core::ConsumerId(1), batch(6));  // no session: nothing happens
}

TEST(ConsumerAdapter, ForwardsChildrenWhenTheSessionHasThem) {
  auto s = std::make_shared<WithChildren>();
  ConsumerAdapter<WithChildren> adapter(s);
  adapter.attached(core::ConsumerId(1), core::ConsumerId(2));
  adapter.detached(core::ConsumerId(1), core::ConsumerId(2));
  EXPECT_EQ(s->attached, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 2}}));
  EXPECT_EQ(s->detached, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 2}}));
}

}  // namespace
}  // namespace carrier::session
