#include "stomp/send_headers.hpp"

#include <charconv>
#include <unordered_set>

#include <fmt/format.h>

#include "core/deadline.hpp"

namespace carrier::stomp {

namespace {

template <class T>
bool parse_number(const std::string& text, T& out) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

Refused invalid(std::string detail) { return Refused{Refusal::invalid_header, std::move(detail)}; }

}  // namespace

bool is_reserved_header(std::string_view name) {
  static const std::unordered_set<std::string_view> kReserved{
      "destination", "receipt",  "transaction", "content-length", "persistent", "priority", "expires",
      "correlation-id", "reply-to", "type", "timestamp", "content-type", "message-id", "subscription", "ack",
      "redelivered", "delivery-count", "deliver-at", "delay", "AMQ_SCHEDULED_DELAY"};
  return kReserved.contains(name);
}

std::optional<Refused> read_send_headers(const codec::Headers& headers, const SendLimits& limits,
                                         model::Message& m) {
  const std::int64_t arrival = limits.arrival_ms;
  const std::uint64_t max_delay = limits.max_schedule_delay_ms;
  std::unordered_set<std::string_view> seen;
  for (const auto& [name, value] : headers) {
    if (!seen.insert(name).second) continue;  // repeated header: the first one wins
    if (name == "persistent") {
      m.persistent = value == "true";
    } else if (name == "priority") {
      int p = 0;
      if (!parse_number(value, p) || p < 0 || p > 9) return invalid(fmt::format("priority must be 0 to 9, got '{}'", value));
      m.priority = static_cast<std::uint8_t>(p);
    } else if (name == "expires") {
      if (!parse_number(value, m.expires_ms) || m.expires_ms < 0) {
        return invalid(fmt::format("expires must be epoch milliseconds, got '{}'", value));
      }
    } else if (name == "deliver-at") {
      if (!parse_number(value, m.deliver_at_ms) || m.deliver_at_ms < 0) {
        return invalid(fmt::format("deliver-at must be epoch milliseconds, got '{}'", value));
      }
      if (m.deliver_at_ms > core::deadline_after(arrival, max_delay)) {
        return invalid(fmt::format("deliver-at must be at most {} ms ahead (max_schedule_delay_ms), got '{}'",
                                   max_delay, value));
      }
    } else if (name == "delay" || name == "AMQ_SCHEDULED_DELAY") {
      std::uint64_t delay = 0;
      if (!parse_number(value, delay)) return invalid(fmt::format("{} must be milliseconds, got '{}'", name, value));
      if (delay > max_delay) {
        return invalid(fmt::format("{} must be at most {} ms (max_schedule_delay_ms), got '{}'", name, max_delay, value));
      }
      if (delay > 0) m.deliver_at_ms = core::deadline_after(arrival, delay);
    } else if (name == "timestamp") {
      std::int64_t ts = 0;
      if (parse_number(value, ts)) m.timestamp_ms = ts;
    } else if (name == "correlation-id") {
      m.correlation_id = value;
    } else if (name == "reply-to") {
      m.reply_to = value;
    } else if (name == "type") {
      m.type = value;
    } else if (name == "content-type") {
      m.content_type = value;
    } else if (!is_reserved_header(name)) {
      m.properties.emplace_back(name, value);
    }
  }
  return std::nullopt;
}

}  // namespace carrier::stomp
