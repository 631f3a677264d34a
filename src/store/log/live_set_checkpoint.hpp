#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "store/record.hpp"

// The journal's live-set checkpoint, DATA_DIR/journal/live.ckpt (docs/storage.md,
// "Live-set checkpoint"): what SegmentReclaimer knows, as of a point in the journal (`covered_segment`,
// `covered_bytes`), so that recovery replays only what follows it. Written by the log store's
// writer thread (temp file + fdatasync + rename + directory fsync), checksummed and versioned;
// a checkpoint that does not decode or does not match the directory is not used (the journal
// is replayed in full, and stays the source of truth).
namespace carrier::store::log {

inline constexpr std::uint32_t kCheckpointFormatVersion = 1;
inline constexpr std::string_view kCheckpointMagic{"CARRJCKP", 8};
// magic(8) version(u32) flags(u32) covered_segment(u64) covered_bytes(u64) content_bytes(u64)
// content_crc(u32) header_crc(u32)
inline constexpr std::size_t kCheckpointHeaderBytes = 48;
// Refused before it is read into memory: far above what 2^32 segments of bitmaps need in
// practice (a 20 GB backlog of 1 KiB messages is about 2.5 MB).
inline constexpr std::uint64_t kMaxCheckpointBytes = std::uint64_t{1} << 32;

struct LiveSetCheckpoint {
  struct Segment {
    std::uint64_t id = 0;
    std::uint64_t bytes = 0;    // the segment's size (covered_bytes for covered_segment)
    std::uint32_t records = 0;  // records applied from it: the next record's ordinal
    std::uint64_t live = 0;     // live messages + latest delivered records pinned here
    std::vector<std::uint64_t> depends_on;
    std::vector<std::uint64_t> bits;  // bit n set: record n is a live message record
  };
  // A (queue, priority) run of summary_only, unscheduled live messages: what RecoveredTail says.
  struct Lane {
    std::uint32_t queue = 0;  // into queues
    std::uint8_t priority = 0;
    std::uint64_t count = 0;
    std::uint64_t bytes = 0;
    Location from;
  };
  // The segment of the latest delivered record of a live message, by the message's position.
  struct Delivered {
    std::uint64_t segment = 0;
    std::uint32_t ordinal = 0;
    std::uint64_t delivered_in = 0;
  };
  // A live message that must come back one by one: of a queue that is not summary_only
  // (protocol state), or scheduled. Acks for these come by queue and id.
  struct Listed {
    std::uint32_t queue = 0;
    Location location;  // record = ordinal in its segment
    std::uint32_t delivery_count = 0;
    MessageSummary summary;
  };

  std::uint64_t covered_segment = 0;
  std::uint64_t covered_bytes = 0;
  std::vector<std::string> queues;
  std::vector<Segment> segments;  // ascending ids
  std::vector<Lane> lanes;
  std::vector<Delivered> delivered;
  std::vector<Listed> listed;
};

std::string encode_checkpoint(const LiveSetCheckpoint& c);
// Errc::corrupt_data for anything but a well-formed checkpoint of kCheckpointFormatVersion;
// every count is checked against the bytes left before anything is allocated.
Result<LiveSetCheckpoint> decode_checkpoint(std::string_view bytes);

std::filesystem::path checkpoint_path(const std::filesystem::path& journal_dir);
// Writes live.ckpt.tmp, syncs it (when `sync`), renames it over live.ckpt, syncs the directory.
Status write_checkpoint_file(const std::filesystem::path& journal_dir, const LiveSetCheckpoint& c, bool sync);
// Errc::not_found when there is none.
Result<LiveSetCheckpoint> load_checkpoint_file(const std::filesystem::path& journal_dir);
// Removes live.ckpt (and a leftover temp file); the next start replays the journal in full.
Status remove_checkpoint_file(const std::filesystem::path& journal_dir, bool sync);

}  // namespace carrier::store::log
