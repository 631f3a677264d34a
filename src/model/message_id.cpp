#include "model/message_id.hpp"

#include <time.h>

namespace carrier::model {

namespace {

constexpr char kHex[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

void MessageId::to_chars(char* out) const {
  auto put = [&out](std::uint64_t v, int from_nibble, int count) {
    for (int i = from_nibble; i < from_nibble + count; ++i) *out++ = kHex[(v >> (60 - 4 * i)) & 0xf];
  };
  put(hi, 0, 8);
  *out++ = '-';
  put(hi, 8, 4);
  *out++ = '-';
  put(hi, 12, 4);
  *out++ = '-';
  put(lo, 0, 4);
  *out++ = '-';
  put(lo, 4, 12);
}

std::string MessageId::to_string() const {
  std::string out;
  out.reserve(36);
  auto put = [&out](std::uint64_t v, int from_nibble, int count) {
    for (int i = from_nibble; i < from_nibble + count; ++i) out.push_back(kHex[(v >> (60 - 4 * i)) & 0xf]);
  };
  put(hi, 0, 8);
  out.push_back('-');
  put(hi, 8, 4);
  out.push_back('-');
  put(hi, 12, 4);
  out.push_back('-');
  put(lo, 0, 4);
  out.push_back('-');
  put(lo, 4, 12);
  return out;
}

std::optional<MessageId> MessageId::parse(std::string_view text) {
  if (text.size() != 36 || text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-') {
    return std::nullopt;
  }
  MessageId id;
  int nibble = 0;
  for (char c : text) {
    if (c == '-') continue;
    int v = hex_value(c);
    if (v < 0) return std::nullopt;
    if (nibble < 16) {
      id.hi = (id.hi << 4) | static_cast<std::uint64_t>(v);
    } else {
      id.lo = (id.lo << 4) | static_cast<std::uint64_t>(v);
    }
    ++nibble;
  }
  return id;
}

MessageIdGenerator::MessageIdGenerator(std::uint64_t seed) : state_(seed) {}

MessageId MessageIdGenerator::next() {
  // The coarse clock (a few ms of resolution, no TSC read): ids need order, which the counter
  // gives, more than a precise time; this runs once per message.
  timespec ts{};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  const auto now_ms = static_cast<std::uint64_t>(ts.tv_sec) * 1000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1'000'000;
  // Within one millisecond (or if the clock steps back) a counter keeps ids increasing.
  if (now_ms > last_ms_) {
    last_ms_ = now_ms;
    counter_ = 0;
  } else {
    ++counter_;
    if (counter_ >= (1u << 12)) {
      ++last_ms_;
      counter_ = 0;
    }
  }
  MessageId id;
  id.hi = (last_ms_ << 16) | (0x7ULL << 12) | (counter_ & 0xfff);
  id.lo = (0x2ULL << 62) | (splitmix64(state_) & 0x3fffffffffffffffULL);
  return id;
}

}  // namespace carrier::model
