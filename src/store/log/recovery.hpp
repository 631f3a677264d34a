#pragma once

#include <spdlog/logger.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>

#include "base/result.hpp"
#include "store/log/reclaimer.hpp"
#include "store/record.hpp"
#include "store/store.hpp"

namespace carrier::store::log {

// What recovery found, beyond the messages it visited.
struct RecoveryReport {
  std::uint64_t segments_read = 0;
  std::uint64_t batches = 0;
  std::uint64_t live_messages = 0;
  std::uint64_t truncated_bytes = 0;   // torn tail cut from the last segment
  std::uint64_t skipped_batches = 0;   // RecoveryMode::skip_corrupt only
  std::uint64_t skipped_bytes = 0;     // RecoveryMode::skip_corrupt only
  std::uint64_t skipped_segments = 0;  // skip_corrupt: segments whose header was unreadable
};

struct RecoveredJournal {
  SegmentReclaimer reclaimer;  // every readable segment, with its live messages and dependencies
  // The newest readable segment and its good length after any torn tail was cut: the writer
  // appends there if it has room.
  std::optional<std::uint64_t> last_segment;
  std::uint64_t last_segment_size = 0;
  std::uint64_t next_segment_id = 1;  // above every segment file present, readable or not
  RecoveryReport report;
};

// Reads every segment in `journal_dir` in id order, applies its batches, and visits each
// message still live (stored and not acked) in append order with its latest delivery count.
// The rules (docs/storage.md, "Recovery"):
//   - damage in the LAST segment with no good frame after it is a torn tail: the file is
//     truncated to the last good frame (a torn header: the file is removed) and a warning logged;
//   - any other damage is Errc::corrupt_data naming the file and offset, unless `mode` is
//     skip_corrupt: then the damaged bytes are skipped up to the next good frame (or the rest
//     of the segment), with a warning;
//   - a segment of an unknown format version is always an error, in every mode.
// Runs on: the thread calling Store::recover(); writes only to cut a torn tail.
Result<RecoveredJournal> recover_journal(const std::filesystem::path& journal_dir,
                                         RecoveryMode mode, bool sync,
                                         const std::function<void(RecoveredMessage)>& visit,
                                         spdlog::logger& log);

}  // namespace carrier::store::log
