#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/result.hpp"
#include "store/binary_format.hpp"
#include "store/record.hpp"

// The stored copy an ack or delivered record names (store::StoredRef), as the journal's records
// and its segment indexes carry it: what lets recovery from the live-set checkpoint resolve an
// acknowledgement written after the checkpoint without a per-message table (docs/storage.md,
// "Live-set checkpoint"). Pure functions, in carrier_store_codec with the two codecs that use them.
namespace carrier::store::log {

// Record kinds as written: an ack or delivered record that names its copy is written with its
// own kind byte (so a record without one stays as before), and decodes to RecordKind::ack or
// RecordKind::delivered with Record::stored set.
inline constexpr std::uint8_t kAckNamingCopy = 4;
inline constexpr std::uint8_t kDeliveredNamingCopy = 5;

// The kind byte `kind` is written with when its record names `stored`.
std::uint8_t written_kind(RecordKind kind, const StoredRef& stored);
// The record kind and whether a StoredRef follows, for a kind byte as written; false: unknown.
bool read_kind(std::uint8_t written, RecordKind& kind, bool& names_copy);

// Layout: segment (varint, not 0), frame offset (varint, 32 bits), record ordinal (varint,
// 32 bits), priority (u8, 0-9), footprint (varint, 32 bits).
std::size_t stored_ref_size(const StoredRef& ref);
void put_stored_ref(std::string& out, const StoredRef& ref);
Result<StoredRef> read_stored_ref(binary::ByteReader& in);

}  // namespace carrier::store::log
