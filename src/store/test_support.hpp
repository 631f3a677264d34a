#pragma once

// Helpers shared by the store's tests (test binary only).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "core/message.hpp"

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
inline core::MessagePtr make_message(std::uint64_t n, std::string body = "body",
                                     std::string destination = "orders") {
  auto m = std::make_shared<core::Message>();
  m->id = core::MessageId{0x0190a4e57b1c7000ULL + n, 0x8f00000000000000ULL | n};
  m->destination = core::Destination{core::DestinationKind::queue, std::move(destination)};
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

inline void expect_same_message(const core::Message& a, const core::Message& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.destination, b.destination);
  EXPECT_EQ(a.priority, b.priority);
  EXPECT_EQ(a.timestamp_ms, b.timestamp_ms);
  EXPECT_EQ(a.expires_ms, b.expires_ms);
  EXPECT_EQ(a.persistent, b.persistent);
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
