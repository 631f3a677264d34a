#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "store/log/record_codec.hpp"
#include "store/record.hpp"

namespace carrier::store::log {

// Reads one segment file front to back, frame by frame, and says precisely where and how it
// stops: the end, or damage at an offset. It decides nothing (torn tail or corruption is the
// recovery's call, which knows whether this is the last segment). The whole file is read into
// memory at open: segments are bounded by Options::segment_bytes plus one batch, and one read
// beats thousands of small ones. Runs on: the thread running recovery.
class SegmentReader {
 public:
  // Errc::io_error if the file cannot be read.
  static Result<SegmentReader> open(const std::filesystem::path& path);
  // For tests and the fuzz target: reads from memory.
  static SegmentReader from_bytes(std::string bytes, std::filesystem::path name = "<memory>");

  const std::filesystem::path& path() const { return path_; }
  std::uint64_t size() const { return bytes_.size(); }
  // The whole file as read at open.
  std::string_view bytes() const { return bytes_; }

  // Decodes the header (see decode_segment_header) and positions the reader after it.
  Result<SegmentHeader> read_header();

  struct Item {
    enum class Kind { batch, end, damaged };
    Kind kind = Kind::end;
    std::uint64_t offset = 0;  // where the frame or the damage starts
    std::uint64_t next = 0;    // batch: offset just past the frame
    Batch batch;               // batch: its records
    std::string detail;        // damaged: what is wrong (names the offset)
    bool truncated = false;    // damaged: the file ends inside the frame (a short write)
  };

  // The next frame at the current position. After `damaged` the position does not move:
  // the caller stops, or seeks past the damage (see find_next_frame).
  Item next();

  std::uint64_t position() const { return pos_; }
  void seek(std::uint64_t offset) { pos_ = offset; }

  // The first offset > `after` where a whole frame with a good header and payload checksum
  // starts, or nullopt. Used to resynchronise after damage, and to tell a torn tail (nothing
  // good after the damage) from corruption in the middle.
  std::optional<std::uint64_t> find_next_frame(std::uint64_t after) const;

 private:
  SegmentReader(std::string bytes, std::filesystem::path path)
      : bytes_(std::move(bytes)), path_(std::move(path)) {}

  std::string bytes_;
  std::filesystem::path path_;
  std::uint64_t pos_ = 0;
};

}  // namespace carrier::store::log
