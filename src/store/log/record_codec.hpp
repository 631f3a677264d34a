#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "store/record.hpp"

// The journal's byte layout: segment header, batch frame, record. Pure functions (no I/O, no
// logging) so the fuzz target fuzz/log_record.cpp links only carrier_store_codec. The layout
// is described field by field in docs/storage.md; the constants here are the source of truth.
namespace carrier::store::log {

// Format version of segment files written by this build. A reader refuses any other.
inline constexpr std::uint32_t kFormatVersion = 1;

// Segment header: magic(8) version(u32) flags(u32) segment_id(u64) reserved(u32) crc32c(u32).
inline constexpr std::size_t kSegmentHeaderBytes = 32;
inline constexpr std::string_view kSegmentMagic{"CARRJRNL", 8};

// Batch frame header: magic(u32) payload_bytes(u32) record_count(u32) payload_crc(u32)
// flags(u32) header_crc(u32), then payload_bytes of records. The header has its own checksum
// so a damaged length is caught before it is believed.
inline constexpr std::size_t kBatchHeaderBytes = 24;
inline constexpr std::uint32_t kBatchMagic = 0x31425243;  // "CRB1" as stored (little-endian)
// Larger than any batch the broker builds (messages are capped far below), small enough that a
// forged length cannot make recovery allocate without bound.
inline constexpr std::uint32_t kMaxBatchPayloadBytes = 1u << 30;

struct SegmentHeader {
  std::uint32_t version = kFormatVersion;
  std::uint64_t segment_id = 0;
};

std::string encode_segment_header(std::uint64_t segment_id);

// Needs kSegmentHeaderBytes. A bad magic or checksum is Errc::corrupt_data. A good magic with
// a version other than kFormatVersion returns that version WITHOUT checking the rest (its
// layout is unknown to this build): the caller must refuse it.
Result<SegmentHeader> decode_segment_header(std::string_view bytes);

struct BatchHeader {
  std::uint32_t payload_bytes = 0;
  std::uint32_t record_count = 0;
  std::uint32_t payload_crc = 0;
};

// Needs kBatchHeaderBytes. Checks magic, flags, header checksum and the payload limit.
Result<BatchHeader> decode_batch_header(std::string_view bytes);

// Appends one self-contained frame (header + payload) for `batch` to `out`. Frames do not
// depend on where they land, so shards encode them and the writer thread only copies bytes.
// Errors: Errc::invalid_argument for a message record without a message or whose id differs
// from the record's; Errc::limit_exceeded past kMaxBatchPayloadBytes. `out` is unchanged then.
Status encode_batch(const Batch& batch, std::string& out);

struct DecodedRecord {
  Record record;
  std::size_t bytes = 0;  // consumed from the input
};

// Decodes the record at the start of `bytes` (a batch payload holds them back to back).
// `base_offset` only shifts the offsets named in error details.
Result<DecodedRecord> decode_record(std::string_view bytes, std::size_t base_offset = 0);

// Decodes a payload holding exactly `record_count` records and nothing else.
Result<Batch> decode_batch_payload(std::string_view payload, std::uint32_t record_count,
                                   std::size_t base_offset = 0);

struct DecodedBatch {
  Batch batch;
  std::size_t bytes = 0;  // frame size: header + payload
};

// Decodes the frame at the start of `bytes`, verifying both checksums; bytes after the frame
// are ignored. The fuzz entry point: every failure is an Error, never a crash or a huge
// allocation.
Result<DecodedBatch> decode_batch(std::string_view bytes);

}  // namespace carrier::store::log
