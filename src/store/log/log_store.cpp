#include "store/log/log_store.hpp"

#include <pthread.h>

#include <chrono>
#include <cstdint>
#include <system_error>
#include <utility>

#include "base/logging.hpp"
#include "store/log/record_codec.hpp"
#include "store/log/live_set_checkpoint.hpp"
#include "store/log/segment_index_file.hpp"

namespace carrier::store::log {

namespace {

// Frames up to this size are copied into one buffer so a group of many small batches is a
// handful of iovecs; bigger frames are written from where the shard encoded them.
constexpr std::size_t kCoalesceBelowBytes = 16 << 10;

}  // namespace

LogStore::LogStore(Options options)
    : options_(std::move(options)),
      dir_(journal_dir(options_.data_dir)),
      log_(logging::get("store")),
      frames_(dir_),
      catalogs_(dir_, log_) {}

LogStore::~LogStore() { close(); }

Status LogStore::open() {
  if (state_ != State::created) {
    return unexpected(Errc::invalid_argument, "log store: open() called twice");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return unexpected(Errc::io_error, "cannot create " + dir_.string() + ": " + ec.message());
  auto locked = lock_.acquire(dir_);
  if (!locked) return locked;
  state_ = State::opened;
  return ok();
}

Status LogStore::recover(const std::function<void(RecoveredMessage)>& visit) { return recover(RecoverOptions{}, visit); }

Status LogStore::recover(const RecoverOptions& options, const std::function<void(RecoveredMessage)>& visit) {
  if (state_ != State::opened) {
    return unexpected(Errc::invalid_argument, "log store: recover() needs open() first, once");
  }
  const auto began = std::chrono::steady_clock::now();
  // The checkpoint is kept (and used) only where recovery may hand back tails: it is what lets
  // start-up skip the backlog, and without tails nothing would come of it.
  checkpointing_ = options.tail && options.summary_only && can_scan() && options_.recovery == RecoveryMode::strict;
  auto recovered = recover_journal(dir_, options_.recovery, options_.fsync, options, visit, *log_, checkpointing_);
  if (!recovered) {
    state_ = State::failed;
    failure_ = recovered.error();
    return unexpected(std::move(recovered).error());
  }
  reclaimer_ = std::move(recovered->reclaimer);
  next_segment_id_ = recovered->next_segment_id;
  resume_segment_ = recovered->last_segment;
  resume_size_ = recovered->last_segment_size;
  index_ = std::move(recovered->tail_index);
  scan_end_ = ScanEnd{recovered->last_segment.value_or(0), recovered->last_segment ? recovered->last_segment_size : 0};
  report_ = recovered->report;
  state_ = State::recovered;
  if (checkpointing_) {
    // So that the next start replays only what comes after this one.
    write_checkpoint();
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - began).count();
  log_->info("journal {}: recovered {} live messages ({} as summaries, {} read back) and {} in {} tails{} from {} "
             "segments ({} from their index, {} read: {} batches; {} indexes written{}) in {} ms",
             dir_.string(), report_.live_messages, report_.summaries, report_.messages_read_back,
             report_.tail_messages, report_.tails, report_.checkpoint_used ? " (from the live-set checkpoint)" : "",
             report_.segments_indexed + report_.segments_read, report_.segments_indexed, report_.segments_read,
             report_.batches, report_.indexes_written,
             report_.spilled_dropped != 0
                 ? fmt::format("; {} spilled non-persistent messages dropped", report_.spilled_dropped)
                 : std::string(),
             ms);
  return ok();
}

void LogStore::start() {
  if (state_ == State::opened) {
    // Writing without knowing the journal would let the reclaimer delete a segment whose acks
    // still cover older messages, so replay it even if nobody wants the messages.
    log_->warn("journal {}: start() without recover(); replaying the journal anyway", dir_.string());
    (void)recover([](RecoveredMessage) {});
  }
  if (state_ == State::failed) {
    // Start anyway, so appends are answered in order (with this error) by the writer as usual.
    broken_ = failure_;
    log_->error("journal {}: not usable, every append will fail: {}", dir_.string(),
                failure_->to_string());
  } else if (state_ != State::recovered) {
    return;  // not opened, already running, or closed
  }
  // Appending to the recovered last segment needs its index so far (recovery built it while
  // replaying it); a segment that was applied from its index keeps that index and is not
  // appended to.
  if (resume_segment_ && resume_size_ < options_.segment_bytes && !broken_ && index_.segment_id() == *resume_segment_) {
    auto reopened = SegmentWriter::reopen(dir_, *resume_segment_, resume_size_);
    if (reopened) {
      segment_ = std::move(*reopened);
    } else {
      log_->warn("journal: {}; starting a new segment", reopened.error().detail);
    }
  }
  if (!segment_ && resume_segment_ && index_.segment_id() == *resume_segment_ && !broken_) {
    // The recovered tail is closed now: the next append starts a new segment.
    if (auto written = write_index_file(dir_, index_, resume_size_, options_.fsync); !written) {
      log_->warn("journal: cannot write the index of segment {}: {}", *resume_segment_, written.error().detail);
    } else {
      indexes_written_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  state_ = State::running;
  writer_ = std::thread([this] { run(); });
  reader_ = std::thread([this] { run_reader(); });
}

void LogStore::append(Batch batch, DurableCallback on_durable) {
  Pending p;
  p.encoded = encode_batch(batch, p.frame);
  p.batch = std::move(batch);
  p.done = std::move(on_durable);
  enqueue(p);
}

void LogStore::append_located(Batch batch, LocatedCallback on_durable) {
  Pending p;
  p.encoded = encode_batch(batch, p.frame);
  p.batch = std::move(batch);
  p.located = std::move(on_durable);
  enqueue(p);
}

void LogStore::enqueue(Pending& p) {
  // Before the push: from here on a scan hides the messages this batch acks.
  acks_in_flight_.add(p.batch);
  if (queue_.push(p)) return;
  acks_in_flight_.remove(p.batch);
  // No writer left to run it: the caller's thread reports it.
  Error closed(Errc::shutting_down, "journal " + dir_.string() + " is closed");
  if (p.done) p.done(unexpected(closed));
  if (p.located) p.located(unexpected(closed), {});
}

void LogStore::read(std::string queue, std::vector<ReadItem> items, ReadCallback done) {
  PendingRead r;
  r.queue = std::move(queue);
  r.items = std::move(items);
  r.done = std::move(done);
  if (reads_.push(r)) return;
  fail_read(r, Error(Errc::shutting_down, "journal " + dir_.string() + " is closed"));
}

void LogStore::fail_read(PendingRead& r, const Error& why) {
  if (r.scanned) {
    r.scanned(unexpected(why));
    return;
  }
  std::vector<Result<model::MessagePtr>> answers;
  for (std::size_t i = 0; i < r.items.size(); ++i) answers.emplace_back(unexpected(why));
  if (r.done) r.done(std::move(answers));
}

void LogStore::close() {
  if (state_ == State::closed) return;
  queue_.close();
  // Never started but usable, with appends waiting: start now, so they are written by the
  // writer thread like any other group (the queue is closed, so it drains and exits).
  if ((state_ == State::opened || state_ == State::recovered) && !queue_.empty()) start();
  if (writer_.joinable()) writer_.join();
  // Then the reads (start() above may have started a reader for ones queued before it).
  reads_.close();
  if (reader_.joinable()) reader_.join();
  {
    std::vector<PendingRead> rest;  // queued before start(), or the store never started
    while (reads_.try_take_all(rest)) {
      for (PendingRead& r : rest) fail_read(r, Error(Errc::shutting_down, "journal " + dir_.string() + " is closed"));
      rest.clear();
    }
  }
  frames_.close_all();
  catalogs_.clear();
  // Never opened, or opened but the journal could not be read and start() was not called.
  std::vector<Pending> rest;
  while (queue_.try_take_all(rest)) {
    for (Pending& p : rest) {
      acks_in_flight_.remove(p.batch);
      Status why = failure_ ? Status(unexpected(*failure_))
                            : Status(unexpected(Errc::shutting_down, "journal was never opened"));
      if (p.done) p.done(std::move(why));
      else if (p.located) p.located(std::move(why), {});
    }
    rest.clear();
  }
  segment_.reset();
  lock_.release();
  state_ = State::closed;
}

LogStore::Stats LogStore::stats() const {
  Stats s;
  s.batches = batches_.load(std::memory_order_relaxed);
  s.failed_batches = failed_batches_.load(std::memory_order_relaxed);
  s.group_commits = group_commits_.load(std::memory_order_relaxed);
  s.syncs = syncs_.load(std::memory_order_relaxed);
  s.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  s.segments_created = segments_created_.load(std::memory_order_relaxed);
  s.segments_deleted = segments_deleted_.load(std::memory_order_relaxed);
  s.indexes_written = indexes_written_.load(std::memory_order_relaxed);
  s.checkpoints_written = checkpoints_written_.load(std::memory_order_relaxed);
  s.scans = scans_.load(std::memory_order_relaxed);
  s.scan_catalog_hits = catalogs_.hits();
  s.scan_catalogs_from_index = catalogs_.loaded_from_index();
  s.scan_catalogs_from_frames = catalogs_.loaded_from_frames();
  return s;
}

void LogStore::run() {
  pthread_setname_np(pthread_self(), "carrier-journal");
  reclaim();  // segments fully acked before the last shutdown
  std::vector<Pending> group;
  while (queue_.take_all(group)) {
    commit(group);
    group.clear();  // keeps the capacity for the next group
  }
  if (checkpointing_ && !broken_) {
    // A clean stop: the open segment is closed (its index written) and the checkpoint covers
    // everything, so the next start replays nothing.
    close_segment();
    write_checkpoint();
  }
}

void LogStore::write_checkpoint() {
  if (!checkpointing_ || checkpoint_disabled_) return;
  const auto began = std::chrono::steady_clock::now();
  // The writer owns the reclaimer: reading it here needs no lock. scan_end_ is what it has applied.
  auto written = write_checkpoint_file(dir_, reclaimer_.checkpoint(scan_end_.segment, scan_end_.bytes), options_.fsync);
  const auto took = std::chrono::steady_clock::now() - began;
  last_checkpoint_ = std::chrono::steady_clock::now();
  // At most a twentieth of the writer's time goes to checkpoints, and at most one a second.
  checkpoint_interval_ = std::max<std::chrono::steady_clock::duration>(std::chrono::seconds(1), took * 20);
  checkpoint_due_ = false;
  if (!written) {
    log_->warn("journal: cannot write the live-set checkpoint: {}; the next start replays more", written.error().detail);
    return;
  }
  checkpoints_written_.fetch_add(1, std::memory_order_relaxed);
}

void LogStore::distrust_checkpoint(std::uint64_t records) {
  unresolved_records_ += records;
  if (!checkpoint_disabled_) {
    checkpoint_disabled_ = true;
    // Its bits would bring that message back: gone, and none is written until a restart, which
    // replays the journal in full and resolves the record by queue and id.
    if (auto removed = remove_checkpoint_file(dir_, options_.fsync); !removed) {
      log_->error("journal: {}", removed.error().detail);
    }
  }
  const auto now = std::chrono::steady_clock::now();
  if (now - last_unresolved_log_ < std::chrono::seconds(10)) return;
  last_unresolved_log_ = now;
  log_->warn("journal: {} acks or delivered records named neither a location nor a message this process stored, in "
             "queues holding messages recovered from the live-set checkpoint; checkpoints are off until a restart, "
             "which replays the whole journal",
             unresolved_records_);
}

Status LogStore::ensure_segment() {
  if (broken_) return unexpected(*broken_);
  if (segment_) return ok();
  if (!reclaimer_.can_track(next_segment_id_)) {
    return unexpected(Errc::limit_exceeded, "journal " + dir_.string() + ": segment id " +
                                                std::to_string(next_segment_id_) +
                                                " is 2^32 or more above the oldest segment still present; restart the "
                                                "broker once that segment is reclaimed");
  }
  auto created = SegmentWriter::create(dir_, next_segment_id_, options_.fsync);
  if (!created) return unexpected(std::move(created).error());
  segment_ = std::move(*created);
  index_.reset(segment_->id());
  {
    std::lock_guard lock(liveness_);
    reclaimer_.add_segment(segment_->id());
    reclaimer_.set_segment_bytes(segment_->id(), segment_->size());
  }
  ++next_segment_id_;
  segments_created_.fetch_add(1, std::memory_order_relaxed);
  log_->debug("journal: started segment {}", segment_->path().string());
  return ok();
}

// The segment is full: its index goes beside it (a failure costs only a read of the segment at
// the next start), and the next chunk starts a new segment.
void LogStore::close_segment() {
  if (segment_ && index_.segment_id() == segment_->id()) {
    if (auto written = write_index_file(dir_, index_, segment_->size(), options_.fsync); !written) {
      log_->warn("journal: cannot write the index of {}: {}; it is read at the next start instead",
                 segment_->path().string(), written.error().detail);
    } else {
      indexes_written_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (segment_) checkpoint_due_ = true;
  segment_.reset();
}

// Builds iov_ for group[from, to): consecutive small frames share one copy in coalesced_.
void LogStore::gather(std::vector<Pending>& group, std::size_t from, std::size_t to) {
  iov_.clear();
  std::size_t small = 0;
  for (std::size_t k = from; k < to; ++k) {
    if (group[k].encoded && group[k].frame.size() < kCoalesceBelowBytes) small += group[k].frame.size();
  }
  coalesced_.clear();
  coalesced_.reserve(small);  // no reallocation below: iovecs point into it
  bool last_was_small = false;
  for (std::size_t k = from; k < to; ++k) {
    const std::string& frame = group[k].frame;
    if (!group[k].encoded || frame.empty()) continue;
    if (frame.size() < kCoalesceBelowBytes) {
      char* at = coalesced_.data() + coalesced_.size();
      coalesced_.append(frame);
      if (last_was_small) {
        iov_.back().iov_len += frame.size();
      } else {
        iov_.push_back(iovec{at, frame.size()});
      }
      last_was_small = true;
    } else {
      iov_.push_back(iovec{const_cast<char*>(frame.data()), frame.size()});
      last_was_small = false;
    }
  }
}

void LogStore::commit(std::vector<Pending>& group) {
  const std::size_t n = group.size();
  group_commits_.fetch_add(1, std::memory_order_relaxed);
  written_to_.assign(n, 0);
  written_at_.assign(n, 0);
  written_ord_.assign(n, 0);
  std::uint64_t unresolved = 0;

  // Write in chunks, one per segment the group touches (usually one). A chunk is written and
  // synced before the segment rolls, so each batch reported durable is synced, and a failure
  // stops the group: later batches are not written, because reporting a batch durable after
  // an earlier one failed would reorder what the producer sees.
  std::optional<Error> failure;
  std::size_t i = 0;
  while (i < n) {
    if (auto ready = ensure_segment(); !ready) {
      failure = ready.error();
      break;
    }
    const std::uint64_t chunk_start = segment_->size();
    std::uint64_t bytes = 0;
    std::size_t j = i;
    for (; j < n; ++j) {
      if (!group[j].encoded) continue;
      const std::uint64_t at = chunk_start + bytes;
      const std::uint64_t len = group[j].frame.size();
      // A frame bigger than a whole segment still goes in, alone in a fresh one.
      if (at > kSegmentHeaderBytes && at + len > options_.segment_bytes) break;
      bytes += len;
      written_to_[j] = segment_->id();
      written_at_[j] = at;
    }
    Status written = ok();
    if (bytes > 0) {
      gather(group, i, j);
      written = segment_->append(iov_);
      if (written && options_.fsync) {
        syncs_.fetch_add(1, std::memory_order_relaxed);
        written = segment_->sync(chunk_start);
      }
    }
    if (!written) {
      for (std::size_t k = i; k < j; ++k) written_to_[k] = 0;
      failure = written.error();
      if (segment_->broken()) {
        broken_ = Error(Errc::io_error, "journal needs a restart: " + written.error().detail);
        log_->error("journal: {}", broken_->detail);
        segment_.reset();
      }
      break;
    }
    bytes_written_.fetch_add(bytes, std::memory_order_relaxed);
    for (std::size_t k = i; k < j; ++k) {
      if (written_to_[k] != 0) index_.add_batch(written_at_[k], group[k].batch);
    }
    i = j;
    if (j < n) close_segment();  // full: the next chunk starts the next segment
  }
  if (failure) log_->warn("journal: group commit failed: {}", failure->detail);

  {
    std::lock_guard lock(liveness_);
    for (std::size_t k = 0; k < n; ++k) {
      if (written_to_[k] == 0) continue;
      written_ord_[k] = reclaimer_.records_in(written_to_[k]);
      if (reclaimer_.apply(written_to_[k], written_at_[k], written_at_[k] + group[k].frame.size(), group[k].batch)) {
        ++unresolved;
      }
      // An ack or delivered record may be about a message the checkpoint holds: a newer one
      // spares the next start from replaying it (and, without its location, from a full replay).
      for (const Record& r : group[k].batch) {
        if (r.kind != RecordKind::message) checkpoint_due_ = true;
      }
      // Batches are written in order, so the last one written ends what scans may look at.
      scan_end_ = ScanEnd{written_to_[k], written_at_[k] + group[k].frame.size()};
    }
  }
  // Only now, with the reclaimer knowing them (or the write failed), do the acks stop hiding.
  for (std::size_t k = 0; k < n; ++k) acks_in_flight_.remove(group[k].batch);
  // Counted before any callback runs: whoever a callback wakes must see them in stats().
  batches_.fetch_add(n, std::memory_order_relaxed);
  for (std::size_t k = 0; k < n; ++k) {
    Pending& p = group[k];
    Status outcome = ok();
    if (!p.encoded) {
      outcome = p.encoded;
    } else if (written_to_[k] == 0) {
      CARRIER_ASSERT(failure.has_value(), "batch {} of {} neither written nor failed", k, n);
      outcome = unexpected(*failure);
    }
    if (!outcome) failed_batches_.fetch_add(1, std::memory_order_relaxed);
    if (p.done) {
      p.done(std::move(outcome));
    } else if (p.located) {
      std::vector<Location> where;
      if (outcome) {
        where.resize(p.batch.size());
        // Offsets past 4 GiB (a segment_bytes that large) cannot be named: no location, so the
        // caller keeps that message in memory.
        for (std::size_t r = 0; r < p.batch.size() && written_at_[k] <= UINT32_MAX; ++r) {
          if (p.batch[r].kind != RecordKind::message) continue;
          // `record` is the record's ordinal in its segment: the bit that says it is live.
          where[r] = Location{written_to_[k], static_cast<std::uint32_t>(written_at_[k]),
                              written_ord_[k] + static_cast<std::uint32_t>(r)};
        }
      }
      p.located(std::move(outcome), std::move(where));
    }
  }
  if (unresolved != 0 && checkpointing_) distrust_checkpoint(unresolved);
  reclaim();
  if (checkpointing_ && checkpoint_due_ && std::chrono::steady_clock::now() - last_checkpoint_ >= checkpoint_interval_) {
    write_checkpoint();
  }
}

void LogStore::reclaim() {
  if (!reclaimer_.changed()) return;
  const std::uint64_t active = segment_ ? segment_->id() : 0;
  for (;;) {
    reclaimer_.clear_changed();
    std::vector<std::uint64_t> round;
    for (std::uint64_t id : reclaimer_.deletable(active)) {
      if (undeletable_.count(id) == 0) round.push_back(id);
    }
    if (round.empty()) return;
    // The last checkpoint may still count live messages in these segments (their acks came
    // after it): one that names a missing segment as live is refused, and a crash before the
    // next would cost a full replay. So a checkpoint that knows them free goes first.
    if (checkpointing_) write_checkpoint();
    bool removed_any = false;
    for (std::uint64_t id : round) {
      const auto path = segment_path(dir_, id);
      std::error_code ec;
      std::filesystem::remove(path, ec);
      if (ec) {
        log_->error("journal: cannot delete fully acked segment {}: {}; it stays", path.string(),
                    ec.message());
        undeletable_.insert(id);
        continue;
      }
      log_->debug("journal: deleted fully acked segment {}", path.string());
      // Its index after it: an index left behind by a crash here is removed at the next start.
      std::filesystem::remove(index_path(dir_, id), ec);
      if (ec) log_->warn("journal: cannot delete {}: {}", index_path(dir_, id).string(), ec.message());
      {
        std::lock_guard lock(liveness_);
        reclaimer_.forget(id);
      }
      removed_any = true;
      checkpoint_due_ = true;
      segments_deleted_.fetch_add(1, std::memory_order_relaxed);
    }
    // Segments freed by this round may depend on it: the removals must be durable before any
    // of theirs, or a crash could keep a message segment and lose the acks that cover it.
    if (removed_any && options_.fsync) {
      if (auto synced = sync_directory(dir_); !synced) {
        log_->error("journal: {}; deferring further deletions", synced.error().detail);
        return;  // changed() stays set: retried after the next group commit
      }
    }
    if (!removed_any) return;
  }
}

void LogStore::run_reader() {
  pthread_setname_np(pthread_self(), "carrier-jreader");
  std::vector<PendingRead> group;
  while (reads_.take_all(group)) {
    for (PendingRead& r : group) {
      if (r.scanned) {
        auto found = scan_now(r.queue, r.priority, r.from, r.max);
        scans_.fetch_add(1, std::memory_order_relaxed);
        r.scanned(std::move(found));
      } else {
        answer(r);
      }
    }
    group.clear();
    // Descriptors are kept for one group of reads only: a reclaimed segment's space is freed
    // as soon as the reads that were already under way are answered.
    frames_.close_all();
  }
}

// Checks every item against the reclaimer first (under liveness_), then reads the frames it
// names, each frame once however many items it holds.
void LogStore::answer(PendingRead& r) {
  std::vector<Result<model::MessagePtr>> answers(r.items.size(), unexpected(Errc::not_found));
  std::vector<bool> live(r.items.size(), false);
  {
    std::lock_guard lock(liveness_);
    for (std::size_t i = 0; i < r.items.size(); ++i) {
      const ReadItem& item = r.items[i];
      live[i] = item.location.valid() && reclaimer_.live_at(item.location);
    }
  }
  std::uint64_t cached_segment = 0, cached_offset = 0;
  Result<Batch> cached = unexpected(Errc::not_found);
  for (std::size_t i = 0; i < r.items.size(); ++i) {
    const ReadItem& item = r.items[i];
    auto not_live = [&] {
      return unexpected(Errc::not_found, "journal " + dir_.string() + ": no live message " + item.id.to_string() +
                                             " of " + r.queue + " in segment " +
                                             std::to_string(item.location.file) + " (acked, replaced or reclaimed)");
    };
    if (!live[i]) {
      answers[i] = not_live();
      continue;
    }
    if (cached_segment != item.location.file || cached_offset != item.location.offset) {
      cached_segment = item.location.file;
      cached_offset = item.location.offset;
      cached = frames_.read_batch(item.location.file, item.location.offset);
      if (!cached && cached.error().code != Errc::not_found) {
        // The live messages of this frame cannot be delivered: said once per frame read.
        log_->error("journal {}: cannot read back messages of {} at segment {} offset {}: {}", dir_.string(), r.queue,
                    cached_segment, cached_offset, cached.error().detail);
      }
    }
    if (!cached) {
      // A segment deleted between the check and the open was reclaimed: nothing live there.
      answers[i] = cached.error().code == Errc::not_found ? not_live() : unexpected(cached.error());
      continue;
    }
    const Record* rec = message_record_in(*cached, r.queue, item.id);
    if (rec == nullptr) {
      answers[i] = not_live();
      continue;
    }
    answers[i] = rec->message;
  }
  if (r.done) r.done(std::move(answers));
}

}  // namespace carrier::store::log
