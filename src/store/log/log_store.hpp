#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "store/commit_queue.hpp"
#include "store/log/acks_in_flight.hpp"
#include "store/log/catalog_cache.hpp"
#include "store/log/frame_reader.hpp"
#include "store/log/journal_directory.hpp"
#include "store/log/reclaimer.hpp"
#include "store/log/recovery.hpp"
#include "store/log/segment_catalog.hpp"
#include "store/log/segment_index_codec.hpp"
#include "store/log/segment_writer.hpp"
#include "store/store.hpp"

namespace carrier::store::log {

// The embedded default backend: a segmented, checksummed, append-only journal under
// data_dir/journal with group commit (docs/storage.md).
//
// Threads. open/recover/start/close run on the broker's start-up/shutdown thread. append()
// runs on any shard: it encodes the batch into a self-contained frame right there (so the
// serialisation and checksum work is spread over the shards) and queues it. One writer thread
// takes everything queued at once, writes it with as few pwritev calls as possible, fdatasyncs
// once, and then runs the callbacks in append order; it alone touches the segment files and
// the reclaimer after start().
//
// Reads (read()) and scans (scan()) are queued to a second thread, the reader, which preads the
// frames named by their locations (FrameReader) and runs the read callbacks; it never touches
// the writer's files or waits for a group commit. A scan walks the catalogs of the segments
// (CatalogCache: from their checkpointed index, or their frames) from its `from` up to what the
// writer has applied (scan_end_), and reads the live messages it finds (docs/storage.md, "Cold
// tails: scan").
//
// Locks: queue_'s and reads_'s internal mutexes, held only to push or to swap a queue out;
// liveness_, which guards reclaimer_ and scan_end_ between the writer (which changes them while
// applying a group and forgetting deleted segments) and the reader (which asks whether a
// location still holds a live message); acks_in_flight_'s own mutex (appenders add, the writer
// removes after applying, scans ask it before liveness_). None is held while writing, reading a
// file or running callbacks, and no two are held at once.
class LogStore final : public Store {
 public:
  // Counters for benchmarks and tests; read from any thread.
  struct Stats {
    std::uint64_t batches = 0;        // reported through a callback, whatever the outcome
    std::uint64_t failed_batches = 0;
    std::uint64_t group_commits = 0;  // times the writer woke with work
    std::uint64_t syncs = 0;          // fdatasync calls on segments
    std::uint64_t bytes_written = 0;
    std::uint64_t segments_created = 0;
    std::uint64_t segments_deleted = 0;
    std::uint64_t indexes_written = 0;  // at segment close
    std::uint64_t checkpoints_written = 0;  // live-set checkpoints, after recovery and since
    std::uint64_t scans = 0;                       // scans answered
    std::uint64_t scan_catalog_hits = 0;           // a scan found a segment's catalog cached
    std::uint64_t scan_catalogs_from_index = 0;    // ... loaded it from the segment's index
    std::uint64_t scan_catalogs_from_frames = 0;   // ... read the segment's frames instead
  };

  explicit LogStore(Options options);
  ~LogStore() override;

  Status open() override;
  Status recover(const std::function<void(RecoveredMessage)>& visit) override;
  // Closed segments with a checkpointed index are applied from it without being read; live
  // messages of the queues options.summary_only names come back as summaries.
  Status recover(const RecoverOptions& options, const std::function<void(RecoveredMessage)>& visit) override;
  void start() override;
  void append(Batch batch, DurableCallback on_durable) override;
  void append_located(Batch batch, LocatedCallback on_durable) override;
  void read(std::string queue, std::vector<ReadItem> items, ReadCallback done) override;
  // Segments up to 2 GiB only: a Location names offsets below 4 GiB, and a frame may run past
  // segment_bytes by up to a batch.
  bool can_scan() const override { return options_.segment_bytes <= kMaxScannableSegmentBytes; }
  void scan(std::string queue, std::uint8_t priority, Location from, std::size_t max, ScanCallback done) override;
  void close() override;

  static constexpr std::uint64_t kMaxScannableSegmentBytes = std::uint64_t{2} << 30;
  // A scan that finds fewer than `max` messages stops after this many closed segments, so one
  // call costs a bounded amount whatever lies behind `from`; the caller goes on from `next`.
  static constexpr std::size_t kMaxSegmentsPerScan = 8;

  Stats stats() const;
  // What the last recover() found (torn bytes cut, batches skipped...).
  const RecoveryReport& recovery_report() const { return report_; }

 private:
  struct Pending {
    Batch batch;        // kept until its callback: the reclaimer needs its keys
    std::string frame;  // encoded on the appending thread
    Status encoded;     // an encoding error is reported in order, like any other outcome
    DurableCallback done;
    LocatedCallback located;  // instead of done, from append_located()
  };
  struct PendingRead {
    std::string queue;
    std::vector<ReadItem> items;
    ReadCallback done;
    // A scan instead, when `scanned` is set.
    std::uint8_t priority = 0;
    Location from;
    std::size_t max = 0;
    ScanCallback scanned;
  };
  // Where what the writer has applied to the reclaimer ends: every tracked segment below
  // `segment` whole, and `segment` up to `bytes`. A scan looks no further (what lies beyond is
  // not durable yet, or not known to the reclaimer), so its `next` is never past a record that
  // the writer has still to apply.
  struct ScanEnd {
    std::uint64_t segment = 0;  // 0: nothing written yet
    std::uint64_t bytes = 0;
  };

  enum class State { created, opened, recovered, failed, running, closed };

  // Writer thread.
  void run();
  void commit(std::vector<Pending>& group);
  Status ensure_segment();
  void close_segment();
  void reclaim();
  void write_checkpoint();
  // A record that may be about a message known by bit only could not be resolved.
  void distrust_checkpoint(std::uint64_t records);
  void gather(std::vector<Pending>& group, std::size_t from, std::size_t to);
  void enqueue(Pending& p);

  // Reader thread.
  void run_reader();
  void answer(PendingRead& r);
  void fail_read(PendingRead& r, const Error& why);
  Result<ScanResult> scan_now(const std::string& queue, std::uint8_t priority, Location from, std::size_t max);
  Status read_scanned(const std::string& queue, std::uint64_t segment, const std::vector<SegmentCatalog::Entry>& chunk,
                      std::size_t max, ScanResult& out, Location& pos, ScanEnd& check_end);

  const Options options_;
  const std::filesystem::path dir_;
  const std::shared_ptr<spdlog::logger> log_;
  JournalLock lock_;
  State state_ = State::created;
  RecoveryReport report_;
  std::optional<Error> failure_;  // why recover() failed

  CommitQueue<Pending> queue_;
  std::thread writer_;
  CommitQueue<PendingRead> reads_;
  std::thread reader_;
  FrameReader frames_;  // the reader thread's
  CatalogCache catalogs_;  // the reader thread's (its counters: any thread)
  AcksInFlight acks_in_flight_;
  std::atomic<std::uint64_t> scans_{0};

  // Owned by the writer thread once it runs (before that, by the start-up thread); the reader
  // only asks it live_at(), under liveness_, which the writer holds whenever it changes it.
  std::mutex liveness_;
  SegmentReclaimer reclaimer_;
  ScanEnd scan_end_;  // under liveness_ once the writer runs
  std::unique_ptr<SegmentWriter> segment_;
  std::uint64_t next_segment_id_ = 1;
  std::optional<std::uint64_t> resume_segment_;  // recovered last segment to append to
  std::uint64_t resume_size_ = 0;
  // The index of the segment being written, built as its batches are written; written beside
  // it when it closes (docs/storage.md, "Segment index").
  SegmentIndexBuilder index_;
  std::optional<Error> broken_;  // set when a failed write could not be undone
  std::set<std::uint64_t> undeletable_;  // segments whose unlink failed; not retried
  std::vector<std::uint64_t> written_to_;  // per batch of the group: its segment, 0 = not written
  std::vector<std::uint64_t> written_at_;  // per batch of the group: its frame's offset there
  std::vector<std::uint32_t> written_ord_;  // per batch of the group: its first record's ordinal
  std::vector<iovec> iov_;
  std::string coalesced_;  // small frames copied together so one iovec carries many

  // The live-set checkpoint (docs/storage.md, "Live-set checkpoint"); the writer's.
  bool checkpointing_ = false;
  bool checkpoint_disabled_ = false;  // an unresolved record: none is written until a restart
  bool checkpoint_due_ = false;       // something it would hold changed since the last one
  std::chrono::steady_clock::time_point last_checkpoint_{};
  std::chrono::steady_clock::duration checkpoint_interval_ = std::chrono::seconds(1);
  std::uint64_t unresolved_records_ = 0;
  std::chrono::steady_clock::time_point last_unresolved_log_{};

  std::atomic<std::uint64_t> checkpoints_written_{0};
  std::atomic<std::uint64_t> batches_{0}, failed_batches_{0}, group_commits_{0}, syncs_{0},
      bytes_written_{0}, segments_created_{0}, segments_deleted_{0}, indexes_written_{0};
};

}  // namespace carrier::store::log
