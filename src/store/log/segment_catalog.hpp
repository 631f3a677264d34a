#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "store/log/segment_index_codec.hpp"
#include "store/record.hpp"

namespace carrier::store::log {

class FrameReader;

// What a scan of a cold tail needs to know of one segment (docs/storage.md, "Cold tails: scan"):
// where each message record of a queue and priority (a lane) sits, in store order, and the
// latest delivered count of each message delivered in this segment. Bodies are not kept: a
// scan reads the frames of the messages it hands out. Built from the segment's checkpointed
// index (a closed segment whose index matches it) or from its frames (the open segment, a
// missing or damaged index), and extended as the open segment grows: the bytes it covers
// never change (segments are append-only and their ids never reused).
//
// About 24 bytes per message record plus each distinct lane once; acks are not kept (the
// reclaimer says what is live). Runs on: the log store's reader thread.
class SegmentCatalog {
 public:
  struct Entry {
    std::uint32_t offset = 0;  // the batch frame's offset in the segment
    std::uint32_t record = 0;  // the record's ordinal in the segment (Location::record)
    model::MessageId id;
  };

  explicit SegmentCatalog(std::uint64_t segment_id) : segment_id_(segment_id) {}
  // Movable only: last_lane_ points into lanes_ (whose nodes a move keeps, a copy would not).
  SegmentCatalog(SegmentCatalog&&) = default;
  SegmentCatalog& operator=(SegmentCatalog&&) = default;
  SegmentCatalog(const SegmentCatalog&) = delete;
  SegmentCatalog& operator=(const SegmentCatalog&) = delete;

  // The catalog of a closed segment, from its index (which load_index_file matched to it).
  static SegmentCatalog from_index(const SegmentIndex& index);

  // Reads the frames from covered() up to `end` (a frame boundary) with `frames`, adding their
  // records. Errors: those of FrameReader::read_batch (not_found: the segment is gone), and
  // corrupt_data for a frame that crosses `end`. Nothing is added from a frame that fails.
  Status extend(FrameReader& frames, std::uint64_t end);

  std::uint64_t segment_id() const { return segment_id_; }
  // Bytes of the segment whose records are in the catalog (header included).
  std::uint64_t covered() const { return covered_; }
  std::size_t entry_count() const { return entries_; }

  // The message records of `queue` with `priority`, in store order; empty if none.
  const std::vector<Entry>& lane(std::string_view queue, std::uint8_t priority) const;
  // The count of the last delivered record of (queue, id) in this segment, or 0 if none.
  std::uint32_t delivered_count(std::string_view queue, model::MessageId id) const;

 private:
  void add(std::string_view queue, RecordKind kind, model::MessageId id, std::uint64_t offset,
           std::uint32_t record, std::uint8_t priority, std::uint32_t delivery_count);
  // The lane's vector, made if absent. The last one is remembered: a segment's records come in
  // runs of one queue, and building a key per record made loading an index of a queue among
  // 1,000 cost ~1 µs per record.
  std::vector<Entry>& lane_for(std::string_view queue, std::uint8_t priority);

  std::uint64_t segment_id_ = 0;
  std::uint64_t covered_ = 0;
  std::size_t entries_ = 0;
  std::uint32_t records_ = 0;  // every record covered, of any kind: the next one's ordinal
  std::unordered_map<std::string, std::vector<Entry>> lanes_;        // queue + '\0' + priority byte
  std::unordered_map<std::string, std::uint32_t> delivered_;        // queue + '\0' + id bytes
  std::string last_queue_;
  std::uint8_t last_priority_ = 0;
  std::vector<Entry>* last_lane_ = nullptr;  // map nodes are stable: valid until destruction
};

}  // namespace carrier::store::log
