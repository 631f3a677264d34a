#pragma once

#include <cstdint>
#include <filesystem>
#include <map>

#include "base/result.hpp"
#include "store/log/record_codec.hpp"
#include "store/record.hpp"

namespace carrier::store::log {

// Reads single batch frames back out of segment files by offset, with pread: what a read by
// Location needs (docs/storage.md, "Reading back"). It verifies the frame's header and payload
// checksums and decodes it; it decides nothing about liveness (the log store asks its
// reclaimer first). Segment files stay open between calls until close_all(), so a batch of reads
// from one segment opens it once; a segment deleted meanwhile is still readable through its
// open descriptor, and one deleted before it was opened is Errc::not_found.
// Runs on: the log store's reader thread, its only owner.
class FrameReader {
 public:
  explicit FrameReader(std::filesystem::path journal_dir) : dir_(std::move(journal_dir)) {}
  FrameReader(const FrameReader&) = delete;
  FrameReader& operator=(const FrameReader&) = delete;
  ~FrameReader() { close_all(); }

  // The batch whose frame starts at `offset` in segment `segment`. Errors: not_found (no such
  // segment file), corrupt_data (no frame there, or a checksum or decode failure, naming the
  // file and offset), io_error.
  Result<Batch> read_batch(std::uint64_t segment, std::uint64_t offset);
  // The same, with the frame's size (header + payload): what walking a segment frame by frame
  // needs (a scan's catalog of the open segment, or of one whose index is unusable).
  Result<DecodedBatch> read_frame(std::uint64_t segment, std::uint64_t offset);
  // The segment file's size now. Errors: not_found (no such segment file), io_error.
  Result<std::uint64_t> file_size(std::uint64_t segment);

  void close_all();

 private:
  Result<int> descriptor(std::uint64_t segment);

  std::filesystem::path dir_;
  std::map<std::uint64_t, int> open_;  // segment id -> O_RDONLY descriptor
};

// The message record of `queue` and `id` in a decoded batch (the last one, if the batch stores
// the key twice), or null. A journal Location's `record` is the record's ordinal in its segment,
// not its place in the batch, so a read by location finds the record by what it must be.
inline const Record* message_record_in(const Batch& batch, std::string_view queue, model::MessageId id) {
  for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
    if (it->kind == RecordKind::message && it->message && it->message_id == id && it->queue == queue) return &*it;
  }
  return nullptr;
}

}  // namespace carrier::store::log
