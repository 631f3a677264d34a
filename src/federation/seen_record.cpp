#include "federation/seen_record.hpp"

#include <charconv>

#include "federation/node_id.hpp"

namespace carrier::federation {

namespace {

constexpr std::string_view kFormat = "1";

template <class T>
std::optional<T> number(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::string stack_text(const std::vector<std::int32_t>& stack) {
  std::string out;
  for (auto session : stack) {
    if (!out.empty()) out += ',';
    out += std::to_string(session);
  }
  return out;
}

std::optional<std::vector<std::int32_t>> parse_stack(std::string_view text) {
  std::vector<std::int32_t> stack;
  while (!text.empty()) {
    const auto comma = text.find(',');
    auto n = number<std::int32_t>(text.substr(0, comma));
    if (!n) return std::nullopt;
    stack.push_back(*n);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) return std::nullopt;  // a trailing comma
  }
  return stack;
}

}  // namespace

model::MessagePtr encode_seen(const model::MessageId& message, const HopInfo& info, std::int64_t now_ms) {
  auto m = std::make_shared<model::Message>();
  m->id = info.record;
  m->destination = model::Destination{model::DestinationKind::queue, std::string(kSeenQueue)};
  m->persistent = true;
  m->timestamp_ms = now_ms;
  m->properties = {
      {"format", std::string(kFormat)},
      {"message-id", message.to_string()},
      {"ttl", std::to_string(info.ttl)},
      {"hops", std::to_string(info.hops)},
      {"origin", to_hex(info.origin)},
      {"previous", to_hex(info.previous)},
      {"stack", stack_text(info.stack)},
  };
  return m;
}

std::optional<SeenRecord> decode_seen(const model::Message& record) {
  SeenRecord r;
  r.info.record = record.id;
  bool format = false, id = false, ttl = false, hops = false, origin = false, previous = false, stack = false;
  for (const auto& [k, v] : record.properties) {
    if (k == "format") {
      if (v != kFormat) return std::nullopt;
      format = true;
    } else if (k == "message-id") {
      auto parsed = model::MessageId::parse(v);
      if (!parsed) return std::nullopt;
      r.message = *parsed;
      id = true;
    } else if (k == "ttl") {
      auto n = number<std::int32_t>(v);
      if (!n) return std::nullopt;
      r.info.ttl = *n;
      ttl = true;
    } else if (k == "hops") {
      auto n = number<std::int32_t>(v);
      if (!n) return std::nullopt;
      r.info.hops = *n;
      hops = true;
    } else if (k == "origin" || k == "previous") {
      auto node = from_hex(v);
      if (!node) return std::nullopt;
      (k == "origin" ? r.info.origin : r.info.previous) = *node;
      (k == "origin" ? origin : previous) = true;
    } else if (k == "stack") {
      auto s = parse_stack(v);
      if (!s) return std::nullopt;
      r.info.stack = std::move(*s);
      stack = true;
    }
  }
  if (!(format && id && ttl && hops && origin && previous && stack)) return std::nullopt;
  return r;
}

}  // namespace carrier::federation
