#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace carrier::model {

// A 128-bit message id in the UUIDv7 layout: 48 bits of Unix milliseconds, then a counter and
// random bits, so ids sort by creation time and never collide across restarts.
struct MessageId {
  std::uint64_t hi = 0;
  std::uint64_t lo = 0;

  auto operator<=>(const MessageId&) const = default;
  bool is_nil() const { return hi == 0 && lo == 0; }

  // 36-character canonical UUID text, e.g. "0190a4e5-7b1c-7d3e-8f00-0123456789ab".
  std::string to_string() const;
  // The same 36 characters into `out`, without allocating.
  void to_chars(char* out) const;
  static std::optional<MessageId> parse(std::string_view text);
};

// Generates UUIDv7 ids. Runs on: one shard (each shard owns a generator); not thread-safe.
class MessageIdGenerator {
 public:
  explicit MessageIdGenerator(std::uint64_t seed);
  MessageId next();

 private:
  std::uint64_t last_ms_ = 0;
  std::uint64_t counter_ = 0;
  std::uint64_t state_;
};

}  // namespace carrier::model

template <>
struct std::hash<carrier::model::MessageId> {
  std::size_t operator()(const carrier::model::MessageId& id) const noexcept {
    return std::hash<std::uint64_t>{}(id.hi ^ (id.lo * 0x9e3779b97f4a7c15ULL));
  }
};
