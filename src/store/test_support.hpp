#pragma once

// Helpers shared by the store's tests (test binary only).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "model/message.hpp"

namespace carrier::store::testing {

// A fresh directory under $TMPDIR, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "carrier-store-XXXXXX").string();
    char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A message with every field set, deterministic from `n`.
inline model::MessagePtr make_message(std::uint64_t n, std::string body = "body",
                                     std::string destination = "orders") {
  auto m = std::make_shared<model::Message>();
  m->id = model::MessageId{0x0190a4e57b1c7000ULL + n, 0x8f00000000000000ULL | n};
  m->destination = model::Destination{model::DestinationKind::queue, std::move(destination)};
  m->priority = static_cast<std::uint8_t>(n % 10);
  m->timestamp_ms = 1700000000000 + static_cast<std::int64_t>(n);
  m->expires_ms = n % 3 == 0 ? 0 : 1800000000000 + static_cast<std::int64_t>(n);
  m->persistent = true;
  m->correlation_id = "corr-" + std::to_string(n);
  m->reply_to = n % 2 ? "queue:replies" : "";
  m->type = "order";
  m->content_type = "text/plain";
  m->properties = {{"region", "eu"}, {"n", std::to_string(n)}};
  m->body = std::make_shared<const std::string>(std::move(body));
  return m;
}

inline void expect_same_message(const model::Message& a, const model::Message& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.destination, b.destination);
  EXPECT_EQ(a.priority, b.priority);
  EXPECT_EQ(a.timestamp_ms, b.timestamp_ms);
  EXPECT_EQ(a.expires_ms, b.expires_ms);
  EXPECT_EQ(a.persistent, b.persistent);
  EXPECT_EQ(a.spilled, b.spilled);
  EXPECT_EQ(a.correlation_id, b.correlation_id);
  EXPECT_EQ(a.reply_to, b.reply_to);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.content_type, b.content_type);
  EXPECT_EQ(a.properties, b.properties);
  ASSERT_EQ(a.body == nullptr, b.body == nullptr);
  if (a.body) {
    EXPECT_TRUE(*a.body == *b.body)
        << "bodies differ (sizes " << a.body->size() << " and " << b.body->size() << ")";
  }
}

}  // namespace carrier::store::testing

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "store/store.hpp"

namespace carrier::store::testing {

// Collects callback outcomes from the writer thread; tests wait on a condition, never sleep.
class Outcomes {
 public:
  DurableCallback callback() {
    return [this](Status s) {
      std::lock_guard lock(mutex_);
      statuses_.push_back(std::move(s));
      changed_.notify_all();
    };
  }
  // Records `tag` in completion order.
  DurableCallback tagged(int tag) {
    return [this, tag](Status s) {
      std::lock_guard lock(mutex_);
      tags_.push_back(tag);
      statuses_.push_back(std::move(s));
      changed_.notify_all();
    };
  }
  bool wait_for(std::size_t n, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return statuses_.size() >= n; });
  }
  std::vector<Status> statuses() {
    std::lock_guard lock(mutex_);
    return statuses_;
  }
  std::vector<int> tags() {
    std::lock_guard lock(mutex_);
    return tags_;
  }
  std::size_t failures() {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& s : statuses_) n += s ? 0 : 1;
    return n;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Status> statuses_;
  std::vector<int> tags_;
};

}  // namespace carrier::store::testing
