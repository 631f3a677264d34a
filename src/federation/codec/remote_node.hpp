#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "federation/codec/id128.hpp"
#include "federation/codec/limits.hpp"
#include "federation/codec/primitives.hpp"

namespace carrier::federation::codec {

// One key of a NodeProperty and its values ("selectors" -> "orders.>", "prices.eu").
struct NodePropertyEntry {
  std::string key;
  std::vector<std::string> values;

  bool operator==(const NodePropertyEntry&) const = default;
};

// JPPP's NodeProperty: slotSize i32 (how many PStrings follow), slotLength i32 (their total
// bytes, NULs included), then the flat array
//   key, count, value..., key, count, value...
// where count is the number of values in decimal ("3"). Keys keep their order and must not
// repeat; a key may have no values ("0").
struct NodeProperty {
  std::vector<NodePropertyEntry> entries;

  // The values of `key`, or nullptr.
  const std::vector<std::string>* find(std::string_view key) const;
  bool operator==(const NodeProperty&) const = default;
};

// JPPP's RemoteNode: a 128-bit node id, then its NodeProperty.
struct RemoteNode {
  Id128 node_id;
  NodeProperty property;

  bool operator==(const RemoteNode&) const = default;
};

// Append the encodings. Errc::invalid_argument (and `out` unchanged) for a NUL in a string, a
// repeated key, or more than 2^31-1 slots or bytes.
Status encode_node_property(const NodeProperty& p, std::string& out);
Status encode_remote_node(const RemoteNode& n, std::string& out);

// Read one structure from `in`. Refused: slotSize over limits.max_property_slots or over the
// bytes left, slotLength over the bytes left, a count that is not a canonical decimal or names
// more values than slots remain, strings that do not fill exactly slotLength bytes, a repeated
// key.
Result<NodeProperty> read_node_property(WireReader& in, const Limits& limits);
Result<RemoteNode> read_remote_node(WireReader& in, const Limits& limits);

// Exactly one structure occupying all of `bytes`.
Result<NodeProperty> decode_node_property(std::string_view bytes, const Limits& limits);
Result<RemoteNode> decode_remote_node(std::string_view bytes, const Limits& limits);

}  // namespace carrier::federation::codec
