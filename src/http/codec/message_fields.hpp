#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"

namespace carrier::http::codec {

using Headers = std::vector<std::pair<std::string, std::string>>;

// The prefix of HTTP request headers that become message headers: `Carrier-Header-priority: 7`
// is the message header `priority`. Matched without regard to case; the rest keeps its case.
inline constexpr std::string_view kHeaderPrefix = "Carrier-Header-";
// The same prefix's lower-case spelling, for comparisons.
bool has_header_prefix(std::string_view http_field_name);

// A message's headers as a producer gave them (HTTP headers with the prefix taken off, or a
// JSON batch entry's "headers"), read the way STOMP reads a SEND's: the names below mean
// something to the broker, every other one is a user property passed through as it is.
struct MessageFields {
  bool persistent = false;
  std::uint8_t priority = 4;
  std::int64_t expires_ms = 0;     // absolute epoch ms; 0 = never
  std::int64_t deliver_at_ms = 0;  // absolute epoch ms; 0 = now
  std::int64_t timestamp_ms = 0;   // 0: the broker's arrival time
  std::string correlation_id;
  std::string reply_to;
  std::string type;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> properties;
};

struct FieldLimits {
  std::uint64_t max_delay_ms = 0;  // how far ahead `delay` and `deliver-at` may schedule
  std::size_t max_headers = 1000;
};

// Reads `headers` (the first of a repeated name wins). `now_ms` is the arrival time that `ttl`
// and `delay` count from. Names: persistent, priority (0-9), expires (epoch ms), ttl (ms),
// deliver-at (epoch ms), delay (ms), timestamp, correlation-id, reply-to, type, content-type.
// A bad value is an Errc::invalid_argument naming the header.
Result<MessageFields> read_fields(const Headers& headers, std::int64_t now_ms, const FieldLimits& limits);

}  // namespace carrier::http::codec
