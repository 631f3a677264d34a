#include "store/message_codec.hpp"

#include <memory>
#include <utility>

#include "store/binary_format.hpp"

namespace carrier::store {

namespace {

// Flag bits of the v1 layout. Any other bit set is corrupt data, so a later version can give
// them a meaning without an old reader silently ignoring it.
constexpr std::uint8_t kFlagPersistent = 0x01;
constexpr std::uint8_t kFlagHasBody = 0x02;  // a null body and an empty body stay distinct
constexpr std::uint8_t kFlagRetain = 0x04;     // MQTT retained
constexpr std::uint8_t kFlagScheduled = 0x08;  // a u64 deliver-at (epoch ms) follows the flags
constexpr std::uint8_t kFlagSpilled = 0x10;    // non-persistent, stored to leave memory: dead after a restart
constexpr std::uint8_t kKnownFlags = kFlagPersistent | kFlagHasBody | kFlagRetain | kFlagScheduled | kFlagSpilled;
constexpr std::uint8_t kMaxDestinationKind = static_cast<std::uint8_t>(model::DestinationKind::temp_queue);

}  // namespace

std::size_t encoded_message_size(const model::Message& m) {
  using binary::string_size;
  using binary::varint_size;
  std::size_t n = 1 + 16 + 1 + string_size(m.destination.name) + 1 + 8 + 8 + 1 + (m.deliver_at_ms != 0 ? 8 : 0);
  n += string_size(m.correlation_id) + string_size(m.reply_to) + string_size(m.type) +
       string_size(m.content_type);
  n += varint_size(m.properties.size());
  for (const auto& [name, value] : m.properties) n += string_size(name) + string_size(value);
  if (m.body) n += string_size(*m.body);
  return n;
}

void encode_message(const model::Message& m, std::string& out) {
  using namespace binary;
  out.reserve(out.size() + encoded_message_size(m));
  put_u8(out, kMessageFormatVersion);
  put_u64(out, m.id.hi);
  put_u64(out, m.id.lo);
  put_u8(out, static_cast<std::uint8_t>(m.destination.kind));
  put_string(out, m.destination.name);
  put_u8(out, m.priority);
  put_u64(out, static_cast<std::uint64_t>(m.timestamp_ms));
  put_u64(out, static_cast<std::uint64_t>(m.expires_ms));
  std::uint8_t flags = 0;
  if (m.persistent) flags |= kFlagPersistent;
  if (m.body) flags |= kFlagHasBody;
  if (m.retain) flags |= kFlagRetain;
  if (m.deliver_at_ms != 0) flags |= kFlagScheduled;
  if (m.spilled && !m.persistent) flags |= kFlagSpilled;
  put_u8(out, flags);
  if (m.deliver_at_ms != 0) put_u64(out, static_cast<std::uint64_t>(m.deliver_at_ms));
  put_string(out, m.correlation_id);
  put_string(out, m.reply_to);
  put_string(out, m.type);
  put_string(out, m.content_type);
  put_varint(out, m.properties.size());
  for (const auto& [name, value] : m.properties) {
    put_string(out, name);
    put_string(out, value);
  }
  if (m.body) put_string(out, *m.body);
}

std::string encode_message(const model::Message& m) {
  std::string out;
  encode_message(m, out);
  return out;
}

Result<model::Message> decode_message(std::string_view bytes) {
  binary::ByteReader in(bytes);
  model::Message m;

  CARRIER_STORE_TRY(version, in.u8("message version"));
  if (version != kMessageFormatVersion) {
    return in.fail("message version", "unsupported message format version " +
                                          std::to_string(version) + " (this build reads " +
                                          std::to_string(kMessageFormatVersion) + ")", 0);
  }
  CARRIER_STORE_TRY(hi, in.u64("message id"));
  CARRIER_STORE_TRY(lo, in.u64("message id"));
  m.id = model::MessageId{hi, lo};

  const std::size_t kind_at = in.offset();
  CARRIER_STORE_TRY(kind, in.u8("destination kind"));
  if (kind > kMaxDestinationKind) {
    return in.fail("destination kind", "unknown value " + std::to_string(kind), kind_at);
  }
  m.destination.kind = static_cast<model::DestinationKind>(kind);
  CARRIER_STORE_TRY(name, in.bytes("destination name"));
  m.destination.name.assign(name);

  // Priority is passed through unvalidated: rejecting here what the encoder accepted would
  // turn a broker bug into lost messages at recovery.
  CARRIER_STORE_TRY(priority, in.u8("priority"));
  m.priority = priority;
  CARRIER_STORE_TRY(timestamp, in.u64("timestamp"));
  m.timestamp_ms = static_cast<std::int64_t>(timestamp);
  CARRIER_STORE_TRY(expires, in.u64("expiration"));
  m.expires_ms = static_cast<std::int64_t>(expires);

  const std::size_t flags_at = in.offset();
  CARRIER_STORE_TRY(flags, in.u8("flags"));
  if ((flags & ~kKnownFlags) != 0) {
    return in.fail("flags", "unknown flag bits " + std::to_string(flags), flags_at);
  }
  m.persistent = (flags & kFlagPersistent) != 0;
  m.retain = (flags & kFlagRetain) != 0;
  m.spilled = (flags & kFlagSpilled) != 0 && !m.persistent;
  if ((flags & kFlagScheduled) != 0) {
    CARRIER_STORE_TRY(deliver_at, in.u64("deliver-at"));
    m.deliver_at_ms = static_cast<std::int64_t>(deliver_at);
  }

  CARRIER_STORE_TRY(correlation_id, in.bytes("correlation-id"));
  m.correlation_id.assign(correlation_id);
  CARRIER_STORE_TRY(reply_to, in.bytes("reply-to"));
  m.reply_to.assign(reply_to);
  CARRIER_STORE_TRY(type, in.bytes("type"));
  m.type.assign(type);
  CARRIER_STORE_TRY(content_type, in.bytes("content-type"));
  m.content_type.assign(content_type);

  const std::size_t count_at = in.offset();
  CARRIER_STORE_TRY(count, in.varint("property count"));
  // Each property takes at least two bytes (two empty strings): bound the count by what is
  // left before reserving, so a forged count cannot allocate gigabytes.
  if (count > in.remaining() / 2) {
    return in.fail("property count", std::to_string(count) + " properties cannot fit in " +
                                         std::to_string(in.remaining()) + " bytes", count_at);
  }
  m.properties.reserve(static_cast<std::size_t>(count));
  for (std::uint64_t i = 0; i < count; ++i) {
    CARRIER_STORE_TRY(pname, in.bytes("property name"));
    CARRIER_STORE_TRY(pvalue, in.bytes("property value"));
    m.properties.emplace_back(std::string(pname), std::string(pvalue));
  }

  if ((flags & kFlagHasBody) != 0) {
    CARRIER_STORE_TRY(body, in.bytes("body"));
    m.body = std::make_shared<const std::string>(body);
  }
  if (!in.at_end()) {
    return in.fail("message", std::to_string(in.remaining()) + " trailing bytes", in.offset());
  }
  return m;
}

}  // namespace carrier::store
