#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

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
//
// Read-ahead: a frame is read with the bytes after it, up to kReadAheadBytes, and the next frame
// asked for that lies whole in those bytes is decoded from them without a syscall (a scan reads
// a lane's frames in store order, mostly back to back: one pread per 64 KiB instead of two per
// frame). Bytes past what the writer had written when they were read may be missing or stale:
// a frame that does not decode from the window is read again from the file, so the window can
// cost a retry but never a wrong answer. close_all() drops it.
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

  static constexpr std::size_t kReadAheadBytes = 64 * 1024;

  // Frames decoded from the read-ahead window, and preads made (for tests and the store's stats).
  std::uint64_t window_hits() const { return window_hits_; }
  std::uint64_t preads() const { return preads_; }

 private:
  Result<int> descriptor(std::uint64_t segment);
  // The frame at `offset` from the file, leaving up to kReadAheadBytes of it and what follows in
  // the window.
  Result<DecodedBatch> read_frame_from_file(int fd, std::uint64_t segment, std::uint64_t offset);
  // The frame at `offset` if the window holds it whole and it decodes there.
  std::optional<DecodedBatch> frame_in_window(std::uint64_t segment, std::uint64_t offset);

  std::filesystem::path dir_;
  std::map<std::uint64_t, int> open_;  // segment id -> O_RDONLY descriptor
  std::uint64_t window_segment_ = 0;   // 0: empty
  std::uint64_t window_offset_ = 0;
  std::string window_;
  std::uint64_t window_hits_ = 0, preads_ = 0;
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
