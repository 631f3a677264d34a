#pragma once

#include <spdlog/logger.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>

#include "base/result.hpp"
#include "store/log/reclaimer.hpp"
#include "store/log/segment_index_codec.hpp"
#include "store/record.hpp"
#include "store/store.hpp"

namespace carrier::store::log {

// What recovery found, beyond the messages it visited.
struct RecoveryReport {
  std::uint64_t segments_read = 0;     // replayed from the segment file itself
  std::uint64_t segments_indexed = 0;  // applied from their checkpointed index, the file not read
  std::uint64_t indexes_written = 0;   // for closed segments that had none (or an unusable one)
  std::uint64_t indexes_unusable = 0;  // present but damaged, truncated, another version or stale
  std::uint64_t batches = 0;           // replayed from segment files
  std::uint64_t index_records = 0;     // applied from index files
  std::uint64_t live_messages = 0;
  std::uint64_t summaries = 0;         // of live_messages, handed back as summaries only
  std::uint64_t messages_read_back = 0;  // of live_messages, read by location before the visit
  std::uint64_t truncated_bytes = 0;   // torn tail cut from the last segment
  std::uint64_t skipped_batches = 0;   // RecoveryMode::skip_corrupt only
  std::uint64_t skipped_bytes = 0;     // RecoveryMode::skip_corrupt only
  std::uint64_t skipped_segments = 0;  // skip_corrupt: segments whose header was unreadable
  std::uint64_t skipped_messages = 0;  // skip_corrupt: live messages whose read-back failed
  bool checkpoint_used = false;        // started from the live-set checkpoint
  bool checkpoint_unusable = false;    // one was there (or started from) but a full replay was needed
  std::uint64_t tails = 0;             // RecoveredTails handed back
  std::uint64_t tail_messages = 0;     // live messages in them
  std::uint64_t spilled_dropped = 0;   // spilled (non-persistent) message records: dead at a restart
};

struct RecoveredJournal {
  SegmentReclaimer reclaimer;  // every readable segment, with its live messages and dependencies
  // The newest readable segment and its good length after any torn tail was cut: the writer
  // appends there if it has room.
  std::optional<std::uint64_t> last_segment;
  std::uint64_t last_segment_size = 0;
  std::uint64_t next_segment_id = 1;  // above every segment file present, readable or not
  // The index of last_segment so far (it is never read from an index file: the tail is always
  // replayed), so the writer can go on adding to it and write it when the segment closes.
  SegmentIndexBuilder tail_index;
  RecoveryReport report;
};

// Reads the journal in `journal_dir` in segment id order, applies its records, and visits each
// message still live (stored and not acked) in append order with its latest delivery count.
// The rules (docs/storage.md, "Recovery"):
//   - a closed segment (every one but the last) with a usable checkpointed index is applied from
//     the index, without reading the segment; one without is read, and its index written;
//   - damage in the LAST segment with no good frame after it is a torn tail: the file is
//     truncated to the last good frame (a torn header: the file is removed) and a warning logged;
//   - any other damage is Errc::corrupt_data naming the file and offset, unless `mode` is
//     skip_corrupt: then the damaged bytes are skipped up to the next good frame (or the rest
//     of the segment), with a warning;
//   - a segment of an unknown format version is always an error, in every mode.
// Live messages of queues options.summary_only names come back as summaries (message null);
// the others in full, read back by location when their segment was applied from its index.
// Logs progress once a second. Runs on: the thread calling Store::recover(); writes only to cut
// a torn tail, to write index files and to remove index files left without their segment.
//
// With `checkpointing` (the caller hands back tails: options.tail and summary_only set, the
// store can scan, strict mode), the reclaimer classifies queues into lanes and listed messages,
// and the live-set checkpoint (live.ckpt) is used when it matches the directory: only what
// follows it is replayed, its lanes come back as RecoveredTails (through options.tail, before
// any message), its listed messages and the replayed ones one by one. Without it, a checkpoint
// present is removed (nothing would keep it true).
Result<RecoveredJournal> recover_journal(const std::filesystem::path& journal_dir, RecoveryMode mode, bool sync,
                                         const RecoverOptions& options,
                                         const std::function<void(RecoveredMessage)>& visit, spdlog::logger& log,
                                         bool checkpointing = false);

}  // namespace carrier::store::log
