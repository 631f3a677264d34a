#include "store/log/queue_message_table.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <random>
#include <tuple>

namespace carrier::store::log {
namespace {

struct Value {
  std::uint32_t a = 0;
  std::uint32_t b = 0;
};

using Key = std::tuple<std::uint32_t, std::uint64_t, std::uint64_t>;

// Random inserts, updates and erases against std::map: every lookup agrees, through growth,
// shrinking and the backward shifts of erased probe runs.
TEST(QueueMessageTable, AgreesWithAMapUnderRandomOperations) {
  std::mt19937_64 random(17);
  QueueMessageTable<Value> table;
  std::map<Key, std::uint32_t> model;
  for (int step = 0; step < 200'000; ++step) {
    const std::uint32_t q = static_cast<std::uint32_t>(random() % 4);
    const model::MessageId id{random() % 3000, 7};
    const Key key{q, id.hi, id.lo};
    const int op = static_cast<int>(random() % 10);
    if (op < 5) {
      auto [v, inserted] = table.try_emplace(q, id);
      EXPECT_EQ(inserted, model.count(key) == 0);
      v->a = static_cast<std::uint32_t>(step);
      model[key] = static_cast<std::uint32_t>(step);
    } else if (op < 8) {
      EXPECT_EQ(table.erase(q, id), model.erase(key) == 1);
    } else {
      const Value* v = table.find(q, id);
      auto it = model.find(key);
      ASSERT_EQ(v != nullptr, it != model.end()) << step;
      if (v) {
        EXPECT_EQ(v->a, it->second);
      }
    }
    ASSERT_EQ(table.size(), model.size());
  }
  std::size_t seen = 0;
  table.for_each([&](std::uint32_t q, model::MessageId id, Value& v) {
    auto it = model.find(Key{q, id.hi, id.lo});
    ASSERT_NE(it, model.end());
    EXPECT_EQ(v.a, it->second);
    ++seen;
  });
  EXPECT_EQ(seen, model.size());
  // Drained, it shrinks back.
  for (const auto& [key, value] : model) EXPECT_TRUE(table.erase(std::get<0>(key), {std::get<1>(key), std::get<2>(key)}));
  EXPECT_TRUE(table.empty());
  EXPECT_LE(table.memory_bytes(), QueueMessageTable<Value>::kChunkEntries * sizeof(QueueMessageTable<Value>::Entry) + 1024);
}

// Ids that are simple functions of a counter (hi = n, lo = n * the golden-ratio constant that
// std::hash<MessageId> also uses) once all hashed to one slot: a million of them took minutes.
// They must spread like any others: this finishes in well under a second when they do.
TEST(QueueMessageTable, PatternedIdsDoNotCollide) {
  QueueMessageTable<Value> table;
  constexpr std::uint64_t kCount = 300'000;
  const auto began = std::chrono::steady_clock::now();
  for (std::uint64_t n = 1; n <= kCount; ++n) table.try_emplace(0, model::MessageId{n, n * 0x9e3779b97f4a7c15ULL});
  for (std::uint64_t n = 1; n <= kCount; ++n) ASSERT_NE(table.find(0, model::MessageId{n, n * 0x9e3779b97f4a7c15ULL}), nullptr);
  const auto took = std::chrono::steady_clock::now() - began;
  EXPECT_EQ(table.size(), kCount);
  // Quadratic probing of one run would take minutes; 20 s leaves room for a loaded machine.
  EXPECT_LT(took, std::chrono::seconds(20));
}

}  // namespace
}  // namespace carrier::store::log
