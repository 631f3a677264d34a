#include "http/codec/message_fields.hpp"

#include <algorithm>
#include <charconv>
#include <unordered_set>

#include <fmt/format.h>

namespace carrier::http::codec {

namespace {

template <class T>
bool parse_number(std::string_view text, T& out) {
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && r.ec == std::errc() && r.ptr == text.data() + text.size();
}

std::string_view shown(std::string_view text) { return text.substr(0, 64); }

Unexpected bad(std::string_view name, std::string_view what, std::string_view value) {
  return unexpected(Errc::invalid_argument, fmt::format("header '{}' must be {}, got '{}'", name, what, shown(value)));
}

// now + ms, saturated: a huge ttl or delay means "far away", not a time in the past.
std::int64_t after(std::int64_t now_ms, std::uint64_t ms) {
  const auto room = static_cast<std::uint64_t>(INT64_MAX - now_ms);
  return ms >= room ? INT64_MAX : now_ms + static_cast<std::int64_t>(ms);
}

// Names the broker sets on delivery: a producer cannot forge them as properties.
bool is_reserved(std::string_view name) {
  static const std::unordered_set<std::string_view> kReserved{"destination", "message-id", "subscription", "ack",
                                                              "redelivered", "delivery-count", "content-length",
                                                              "receipt", "transaction"};
  return kReserved.contains(name);
}

}  // namespace

bool has_header_prefix(std::string_view name) {
  if (name.size() <= kHeaderPrefix.size()) return false;
  return std::equal(kHeaderPrefix.begin(), kHeaderPrefix.end(), name.begin(), [](char a, char b) {
    return (a | 0x20) == (b | 0x20);  // the prefix is letters and '-', which | 0x20 leaves alone
  });
}

Result<MessageFields> read_fields(const Headers& headers, std::int64_t now_ms, const FieldLimits& limits) {
  if (headers.size() > limits.max_headers) {
    return unexpected(Errc::limit_exceeded,
                      fmt::format("{} message headers, at most {} are allowed", headers.size(), limits.max_headers));
  }
  MessageFields f;
  std::unordered_set<std::string_view> seen;
  for (const auto& [name, value] : headers) {
    if (name.empty()) return unexpected(Errc::invalid_argument, "a message header has an empty name");
    if (!seen.insert(name).second) continue;
    if (name == "persistent") {
      if (value != "true" && value != "false") return bad(name, "true or false", value);
      f.persistent = value == "true";
    } else if (name == "priority") {
      int p = 0;
      if (!parse_number(value, p) || p < 0 || p > 9) return bad(name, "0 to 9", value);
      f.priority = static_cast<std::uint8_t>(p);
    } else if (name == "expires") {
      if (!parse_number(value, f.expires_ms) || f.expires_ms < 0) return bad(name, "epoch milliseconds", value);
    } else if (name == "ttl") {
      std::uint64_t ttl = 0;
      if (!parse_number(value, ttl)) return bad(name, "milliseconds", value);
      if (ttl > 0) f.expires_ms = after(now_ms, ttl);
    } else if (name == "deliver-at") {
      if (!parse_number(value, f.deliver_at_ms) || f.deliver_at_ms < 0) return bad(name, "epoch milliseconds", value);
      if (f.deliver_at_ms > after(now_ms, limits.max_delay_ms)) {
        return bad(name, fmt::format("at most {} ms ahead (max_schedule_delay_ms)", limits.max_delay_ms), value);
      }
    } else if (name == "delay") {
      std::uint64_t delay = 0;
      if (!parse_number(value, delay) || delay > limits.max_delay_ms) {
        return bad(name, fmt::format("milliseconds, at most {} (max_schedule_delay_ms)", limits.max_delay_ms), value);
      }
      if (delay > 0) f.deliver_at_ms = after(now_ms, delay);
    } else if (name == "timestamp") {
      if (!parse_number(value, f.timestamp_ms) || f.timestamp_ms < 0) return bad(name, "epoch milliseconds", value);
    } else if (name == "correlation-id") {
      f.correlation_id = value;
    } else if (name == "reply-to") {
      f.reply_to = value;
    } else if (name == "type") {
      f.type = value;
    } else if (name == "content-type") {
      f.content_type = value;
    } else if (!is_reserved(name)) {
      f.properties.emplace_back(name, value);
    }
  }
  return f;
}

}  // namespace carrier::http::codec
