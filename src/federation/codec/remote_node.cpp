#include "federation/codec/remote_node.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

namespace carrier::federation::codec {

namespace {

constexpr std::size_t kMaxI32 = std::numeric_limits<std::int32_t>::max();

// A value count as the seed writes it: decimal digits, no sign, no leading zero (so every
// count has one spelling and re-encoding gives back the same bytes).
std::optional<std::size_t> parse_count(std::string_view s) {
  if (s.empty() || s.size() > 10 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  std::size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  return v;
}

}  // namespace

const std::vector<std::string>* NodeProperty::find(std::string_view key) const {
  for (const auto& e : entries) {
    if (e.key == key) return &e.values;
  }
  return nullptr;
}

Status encode_node_property(const NodeProperty& p, std::string& out) {
  std::size_t slots = 0;
  std::size_t length = 0;
  std::set<std::string_view> keys;
  for (const auto& e : p.entries) {
    if (!keys.insert(e.key).second) {
      return unexpected(Errc::invalid_argument, "NodeProperty key '" + e.key + "' repeated");
    }
    slots += 2 + e.values.size();
    length += pstring_size(e.key) + pstring_size(std::to_string(e.values.size()));
    for (const auto& v : e.values) length += pstring_size(v);
  }
  if (slots > kMaxI32 || length > kMaxI32) {
    return unexpected(Errc::invalid_argument, "NodeProperty too large for 32-bit slot fields");
  }
  const std::size_t start = out.size();
  out.reserve(start + 8 + length);
  put_u32(out, static_cast<std::uint32_t>(slots));
  put_u32(out, static_cast<std::uint32_t>(length));
  for (const auto& e : p.entries) {
    Status s = put_pstring(out, e.key, "NodeProperty key");
    if (s) s = put_pstring(out, std::to_string(e.values.size()), "NodeProperty count");
    for (const auto& v : e.values) {
      if (s) s = put_pstring(out, v, "NodeProperty value");
    }
    if (!s) {
      out.resize(start);
      return s;
    }
  }
  return ok();
}

Status encode_remote_node(const RemoteNode& n, std::string& out) {
  const std::size_t start = out.size();
  put_id(out, n.node_id);
  Status s = encode_node_property(n.property, out);
  if (!s) out.resize(start);
  return s;
}

Result<NodeProperty> read_node_property(WireReader& in, const Limits& limits) {
  CARRIER_FED_TRY(slot_size, in.count("NodeProperty slotSize", limits.max_property_slots, "strings"));
  const std::size_t length_at = in.offset();
  CARRIER_FED_TRY(slot_length, in.u32("NodeProperty slotLength"));
  // Each string takes at least its NUL: both fields are bounded by the bytes present.
  if (slot_length > in.remaining() || slot_size > slot_length) {
    return in.fail(Errc::protocol_error, "NodeProperty slotLength",
                   std::to_string(slot_size) + " strings in " + std::to_string(slot_length) +
                       " bytes announced, " + std::to_string(in.remaining()) + " bytes present",
                   length_at);
  }
  const std::size_t strings_at = in.offset();
  CARRIER_FED_TRY(region, in.bytes(slot_length, "NodeProperty strings"));
  WireReader slots(region, in.base() + strings_at);

  NodeProperty p;
  std::set<std::string_view> keys;
  std::size_t left = slot_size;
  while (left > 0) {
    const std::size_t key_at = slots.offset();
    CARRIER_FED_TRY(key, slots.pstring(limits.max_string_bytes, "NodeProperty key"));
    if (!keys.insert(key).second) {
      return slots.fail(Errc::protocol_error, "NodeProperty key",
                     "'" + std::string(key) + "' repeated", key_at);
    }
    --left;
    const std::size_t count_at = slots.offset();
    if (left == 0) {
      return slots.fail(Errc::protocol_error, "NodeProperty count",
                     "key '" + std::string(key) + "' has no value count", count_at);
    }
    CARRIER_FED_TRY(count_text, slots.pstring(limits.max_string_bytes, "NodeProperty count"));
    --left;
    const auto count = parse_count(count_text);
    if (!count) {
      return slots.fail(Errc::protocol_error, "NodeProperty count",
                     "'" + std::string(count_text) + "' is not a decimal count", count_at);
    }
    if (*count > left) {
      return slots.fail(Errc::protocol_error, "NodeProperty count",
                     std::to_string(*count) + " values announced, " + std::to_string(left) +
                         " strings left",
                     count_at);
    }
    NodePropertyEntry entry;
    entry.key.assign(key);
    entry.values.reserve(*count);
    for (std::size_t i = 0; i < *count; ++i) {
      CARRIER_FED_TRY(value, slots.pstring(limits.max_string_bytes, "NodeProperty value"));
      entry.values.emplace_back(value);
    }
    left -= *count;
    p.entries.push_back(std::move(entry));
  }
  if (!slots.at_end()) {
    return slots.fail(Errc::protocol_error, "NodeProperty slotLength",
                   std::to_string(slots.remaining()) + " bytes after the last of " +
                       std::to_string(slot_size) + " strings",
                   slots.offset());
  }
  return p;
}

Result<RemoteNode> read_remote_node(WireReader& in, const Limits& limits) {
  CARRIER_FED_TRY(node_id, in.id("RemoteNode node id"));
  CARRIER_FED_TRY(property, read_node_property(in, limits));
  return RemoteNode{node_id, std::move(property)};
}

Result<NodeProperty> decode_node_property(std::string_view bytes, const Limits& limits) {
  return decode_exactly(bytes, limits, "NodeProperty", read_node_property);
}

Result<RemoteNode> decode_remote_node(std::string_view bytes, const Limits& limits) {
  return decode_exactly(bytes, limits, "RemoteNode", read_remote_node);
}

}  // namespace carrier::federation::codec
