#include "store/log/stored_ref_codec.hpp"

namespace carrier::store::log {

namespace {

constexpr std::uint8_t kMaxPriority = 9;

}  // namespace

std::uint8_t written_kind(RecordKind kind, const StoredRef& stored) {
  if (stored.known()) {
    if (kind == RecordKind::ack) return kAckNamingCopy;
    if (kind == RecordKind::delivered) return kDeliveredNamingCopy;
  }
  return static_cast<std::uint8_t>(kind);
}

bool read_kind(std::uint8_t written, RecordKind& kind, bool& names_copy) {
  names_copy = written == kAckNamingCopy || written == kDeliveredNamingCopy;
  switch (written) {
    case static_cast<std::uint8_t>(RecordKind::message): kind = RecordKind::message; return true;
    case static_cast<std::uint8_t>(RecordKind::ack):
    case kAckNamingCopy: kind = RecordKind::ack; return true;
    case static_cast<std::uint8_t>(RecordKind::delivered):
    case kDeliveredNamingCopy: kind = RecordKind::delivered; return true;
    default: return false;
  }
}

std::size_t stored_ref_size(const StoredRef& ref) {
  return binary::varint_size(ref.location.file) + binary::varint_size(ref.location.offset) +
         binary::varint_size(ref.location.record) + 1 + binary::varint_size(ref.footprint);
}

void put_stored_ref(std::string& out, const StoredRef& ref) {
  binary::put_varint(out, ref.location.file);
  binary::put_varint(out, ref.location.offset);
  binary::put_varint(out, ref.location.record);
  binary::put_u8(out, ref.priority);
  binary::put_varint(out, ref.footprint);
}

Result<StoredRef> read_stored_ref(binary::ByteReader& in) {
  const std::size_t at = in.offset();
  StoredRef ref;
  CARRIER_STORE_TRY(file, in.varint("stored copy segment"));
  if (file == 0) return in.fail("stored copy segment", "0 names no segment", at);
  CARRIER_STORE_TRY(offset, in.varint("stored copy offset"));
  if (offset > UINT32_MAX) return in.fail("stored copy offset", "exceeds 32 bits", at);
  CARRIER_STORE_TRY(record, in.varint("stored copy record"));
  if (record > UINT32_MAX) return in.fail("stored copy record", "exceeds 32 bits", at);
  CARRIER_STORE_TRY(priority, in.u8("stored copy priority"));
  if (priority > kMaxPriority) return in.fail("stored copy priority", "above " + std::to_string(kMaxPriority), at);
  CARRIER_STORE_TRY(footprint, in.varint("stored copy footprint"));
  if (footprint > UINT32_MAX) return in.fail("stored copy footprint", "exceeds 32 bits", at);
  ref.location = Location{file, static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(record)};
  ref.priority = priority;
  ref.footprint = static_cast<std::uint32_t>(footprint);
  return ref;
}

}  // namespace carrier::store::log
