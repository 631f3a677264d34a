#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "federation/dedup_window.hpp"
#include "model/message.hpp"

namespace carrier::federation {

// The dedup window kept across restarts: one record per persistent message taken in over a
// link, in the reserved queue `$federation-seen` (like MQTT's `$mqtt-*` state, so every store
// backend keeps it with no record kind of its own). It is written in the store batch of the
// message itself, so the message is durable exactly when its record is, and removed when the
// window forgets the id. In message properties, with a format version: `format` "1",
// `message-id`, `ttl`, `hops`, `origin` and `previous` (node ids in hex), `stack` (decimal
// session ids, comma-separated, oldest first). The record's own id is HopInfo::record.
inline constexpr std::string_view kSeenQueue = "$federation-seen";

struct SeenRecord {
  model::MessageId message;
  HopInfo info;  // info.record: the record's id
};

model::MessagePtr encode_seen(const model::MessageId& message, const HopInfo& info, std::int64_t now_ms);
// Null if the record is not one (another format, a missing or bad field).
std::optional<SeenRecord> decode_seen(const model::Message& record);

}  // namespace carrier::federation
