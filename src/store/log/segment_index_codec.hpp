#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "store/record.hpp"

// The byte layout of a segment's checkpointed index (NNNN.idx beside NNNN.log): for every record
// of a closed segment, what recovery needs without the message bodies. Pure functions (no I/O)
// so the fuzz target fuzz/log_index.cpp links only carrier_store_codec. The layout is described
// field by field in docs/storage.md ("Segment index"); the constants here are the source of truth.
namespace carrier::store::log {

// Format version of index files written by this build. Any other is not used (the segment is
// read instead, and the index rewritten): an index is a cache, the segment the truth.
inline constexpr std::uint32_t kIndexFormatVersion = 1;

// Header: magic(8) version(u32) flags(u32) segment_id(u64) segment_bytes(u64) queue_count(u32)
// record_count(u32) content_crc(u32) header_crc(u32), then the content: queue_count strings,
// then record_count entries.
inline constexpr std::size_t kIndexHeaderBytes = 48;
inline constexpr std::string_view kIndexMagic{"CARRJIDX", 8};

// One record of the segment, in append order.
struct IndexRecord {
  RecordKind kind = RecordKind::message;
  std::uint32_t queue = 0;  // into SegmentIndex::queues
  model::MessageId id;
  std::uint64_t offset = 0;  // where the record's batch frame starts in the segment
  std::uint32_t record = 0;  // the record's position in that batch
  std::uint32_t delivery_count = 0;  // kind == delivered
  StoredRef stored;                  // kind == ack or delivered: the copy it names, if it does
  MessageSummary summary;            // kind == message (summary.id == id)
};

struct SegmentIndex {
  std::uint64_t segment_id = 0;
  std::uint64_t segment_bytes = 0;  // the segment's size when the index was written
  std::vector<std::string> queues;
  std::vector<IndexRecord> records;
};

// What the core keeps of a message it pages out: store::MessageSummary.
MessageSummary summarize(const model::Message& m);

// Builds one segment's index as its batches are written (by the log store's writer) or read (by
// recovery), so closing the segment costs one file write and no re-read. Holds ~30 bytes per
// record plus each distinct queue name once. Runs on: its owner's thread.
class SegmentIndexBuilder {
 public:
  void reset(std::uint64_t segment_id);
  std::uint64_t segment_id() const { return segment_id_; }
  std::uint32_t record_count() const { return record_count_; }

  // The records of the batch whose frame starts at `offset`; message records need their message.
  void add_batch(std::uint64_t offset, const Batch& batch);

  // The whole file: header (covering `segment_bytes` of the segment) and content.
  std::string encode(std::uint64_t segment_bytes) const;

 private:
  std::uint32_t queue_index(const std::string& queue);

  std::uint64_t segment_id_ = 0;
  std::unordered_map<std::string, std::uint32_t> queue_ids_;
  std::string queues_;   // encoded names, in index order
  std::string entries_;  // encoded records
  std::uint32_t record_count_ = 0;
};

// Decodes a whole index file. Errc::corrupt_data for anything but a well-formed file of
// version kIndexFormatVersion: bad magic or checksum, unknown version (named), queue indexes out
// of range, bytes after the last record. Every length is checked before anything is allocated.
Result<SegmentIndex> decode_segment_index(std::string_view bytes);

}  // namespace carrier::store::log
