#include "http/resume_window.hpp"

#include <gtest/gtest.h>

#include "model/message.hpp"

namespace carrier::http {
namespace {

using Tags = std::vector<std::uint64_t>;

TEST(ResumeWindow, KeepsTheNewestAndConfirmsTheRestOldestFirst) {
  ResumeWindow w(3);
  EXPECT_EQ(w.written({1, 2}), Tags{});
  EXPECT_EQ(w.written({3}), Tags{});
  EXPECT_EQ(w.unconfirmed(), 3u);
  EXPECT_EQ(w.written({4, 5}), (Tags{1, 2}));
  EXPECT_EQ(w.written({6, 7, 8, 9, 10}), (Tags{3, 4, 5, 6, 7}));
  EXPECT_EQ(w.unconfirmed(), 3u);
}

TEST(ResumeWindow, ZeroIsAWindowOfOne) {
  ResumeWindow w(0);
  EXPECT_EQ(w.written({1}), Tags{});
  EXPECT_EQ(w.written({2}), Tags{1});
}

core::Delivery delivery(std::uint64_t tag, model::MessageId id) {
  auto m = std::make_shared<model::Message>();
  m->id = id;
  return core::Delivery{std::move(m), tag};
}

TEST(FindLastEvent, FindsTheIdInItsTextForm) {
  const model::MessageId a{0x0190a4e57b1c7d3eULL, 0x8f000123456789abULL};
  const model::MessageId b{0x0190a4e57b1c7d3fULL, 0x8f000123456789acULL};
  const std::vector<core::Delivery> batch{delivery(1, a), delivery(2, b)};
  EXPECT_EQ(find_last_event(batch, a.to_string()), 0u);
  EXPECT_EQ(find_last_event(batch, b.to_string()), 1u);
}

TEST(FindLastEvent, UnknownOrMalformedIdsAreNotFound) {
  const model::MessageId a{0x0190a4e57b1c7d3eULL, 0x8f000123456789abULL};
  const std::vector<core::Delivery> batch{delivery(1, a)};
  EXPECT_FALSE(find_last_event(batch, model::MessageId{1, 2}.to_string()));
  EXPECT_FALSE(find_last_event(batch, ""));
  EXPECT_FALSE(find_last_event(batch, "not-an-id"));
  EXPECT_FALSE(find_last_event(batch, a.to_string() + "x"));
  EXPECT_FALSE(find_last_event(batch, std::string(4096, 'f')));
  EXPECT_FALSE(find_last_event({}, a.to_string()));
}

}  // namespace
}  // namespace carrier::http
