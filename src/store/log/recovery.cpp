#include "store/log/recovery.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <optional>
#include <vector>

#include "base/assert.hpp"
#include "store/log/frame_reader.hpp"
#include "store/log/journal_directory.hpp"
#include "store/log/live_set_checkpoint.hpp"
#include "store/log/queue_message_table.hpp"
#include "store/log/queue_name_table.hpp"
#include "store/log/segment_index_file.hpp"
#include "store/log/segment_reader.hpp"

namespace carrier::store::log {

namespace {

// A vector in fixed chunks: appending never copies what is there nor doubles the memory, so a
// replay of millions of records grows by 4096 entries at a time.
template <class T>
class ChunkedVector {
 public:
  static constexpr std::size_t kChunk = 4096;
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return chunks_[i / kChunk][i % kChunk]; }
  void push_back(T v) {
    if (size_ / kChunk >= chunks_.size()) chunks_.push_back(std::make_unique<T[]>(kChunk));
    (*this)[size_++] = std::move(v);
  }
  // Keeps the first n (n <= size()), releasing the chunks past them.
  void truncate(std::size_t n) {
    for (std::size_t i = n; i < size_; ++i) (*this)[i] = T{};
    size_ = n;
    chunks_.resize((n + kChunk - 1) / kChunk);
  }
  void clear() {
    chunks_.clear();
    size_ = 0;
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

// Reads frames back for the visit, a segment at a time: the whole file in one read when many of
// its frames are wanted (one sequential read beats thousands of small ones), else one pread per
// frame (FrameReader). Both verify the frame's checksums.
class FrameReadBack {
 public:
  explicit FrameReadBack(const std::filesystem::path& dir) : dir_(dir), frames_(dir) {}

  // `wanted`: how many frames of `segment` the visit will ask for, counted when it first asks.
  void enter(std::uint64_t segment, std::size_t wanted) {
    frames_.close_all();
    whole_.reset();
    segment_ = segment;
    std::error_code ec;
    const auto size = std::filesystem::file_size(segment_path(dir_, segment), ec);
    // About 16 KiB of sequential read costs what one pread round trip does.
    whole_file_ = !ec && wanted * 16384 >= size;
  }

  Result<Batch> read(std::uint64_t offset) {
    if (!whole_file_) return frames_.read_batch(segment_, offset);
    const auto path = segment_path(dir_, segment_);
    if (!whole_) {
      auto opened = SegmentReader::open(path);
      if (!opened) return unexpected(std::move(opened).error());
      whole_.emplace(std::move(*opened));
    }
    const std::string_view bytes = whole_->bytes();
    if (offset < kSegmentHeaderBytes || offset >= bytes.size()) {
      return unexpected(Errc::corrupt_data, path.string() + ": no frame at offset " + std::to_string(offset));
    }
    auto decoded = decode_batch(bytes.substr(offset));
    if (!decoded) {
      return unexpected(Errc::corrupt_data,
                        path.string() + " at offset " + std::to_string(offset) + ": " + decoded.error().detail);
    }
    return std::move(decoded->batch);
  }

 private:
  std::filesystem::path dir_;
  FrameReader frames_;
  std::uint64_t segment_ = 0;
  bool whole_file_ = false;
  std::optional<SegmentReader> whole_;
};

// The journal's state while it is replayed: one entry per message record in append order
// (acked or superseded ones marked dead in place, so the order never needs re-sorting) and, per
// live key, where its entry is. An entry holds a summary and a location, plus the message itself
// only when it was read from a segment file for a queue that wants it whole; a message applied
// from an index is read back by location at the visit.
class ReplayState {
 public:
  // `trust_refs` false (skip_corrupt): an ack's or delivered record's StoredRef is not used, the
  // copy is found by queue and id. A skipped damaged stretch of a segment shifts the ordinals of
  // the records after it, so a ref to one of them would miss its copy (and an acked message come
  // back); nothing is known by position alone there, as no checkpoint is used in that mode.
  ReplayState(SegmentReclaimer& reclaimer, const RecoverOptions& options, bool trust_refs)
      : reclaimer_(reclaimer), options_(options), trust_refs_(trust_refs) {}

  void on_message(std::uint64_t segment, std::uint64_t offset, std::string_view queue, model::MessageId id,
                  model::MessagePtr message, const MessageSummary& summary) {
    if (summary.spilled) {
      // Stored only to leave the memory of the process that wrote it: dead now. Its ack, if
      // one follows, finds nothing, which is harmless.
      reclaimer_.skip_record(segment);
      ++spilled_;
      // Its ack may name no copy (a transaction's on another shard): known here, it is not
      // taken for an ack of a message the checkpoint knows by position only.
      if (reclaimer_.bit_only_messages() != 0) spilled_ids_.insert(id);
      return;
    }
    const std::uint32_t q = names_.intern(queue);
    auto [at, inserted] = index_.try_emplace(q, id);
    if (!inserted) kill(at->position);
    CARRIER_ASSERT(entries_.size() < UINT32_MAX, "more than 2^32 message records to replay");
    at->position = static_cast<std::uint32_t>(entries_.size());
    const std::uint32_t ordinal = reclaimer_.on_message(segment, offset, queue, summary);
    Entry e;
    if (!summary_only(q)) e.message = std::move(message);
    e.summary = summary;
    e.segment = segment;
    e.offset = offset;
    e.record = ordinal;
    e.queue = q;
    e.live = true;
    entries_.push_back(std::move(e));
    ++live_;
    // Dead entries (acked or replaced) are kept in place so the order needs no sort; once they
    // outnumber the live ones, squeeze them out, so a journal of mostly acked traffic costs
    // memory for its live messages, not for its history.
    if (entries_.size() - live_ > live_ + kCompactAbove) compact();
  }

  // A live message a checkpoint lists (it comes back one by one): its entry, without applying
  // anything to the reclaimer (which loaded it from the checkpoint).
  void add_listed(const std::string& queue, const Location& at, std::uint32_t delivery_count,
                  const MessageSummary& summary) {
    const std::uint32_t q = names_.intern(queue);
    auto [pos, inserted] = index_.try_emplace(q, summary.id);
    if (!inserted) kill(pos->position);
    pos->position = static_cast<std::uint32_t>(entries_.size());
    Entry e;
    e.summary = summary;
    e.segment = at.file;
    e.offset = at.offset;
    e.record = at.record;
    e.queue = q;
    e.delivery_count = delivery_count;
    e.live = true;
    entries_.push_back(std::move(e));
    ++live_;
  }

  // Every record goes to the reclaimer, live or not: it numbers the segment's records.
  void on_ack(std::uint64_t segment, std::string_view queue, model::MessageId id, const StoredRef& named) {
    const StoredRef at = trust_refs_ ? named : StoredRef{};
    if (reclaimer_.on_ack(segment, queue, id, at).unresolved && !spilled_ids_.contains(id)) ++unresolved_;
    const auto q = names_.find(queue);
    if (!q) return;  // its segment is gone, or acked twice: harmless
    const Position* pos = index_.find(*q, id);
    if (pos == nullptr) return;
    const Entry& e = entries_[pos->position];
    // An ack naming another copy (one known to the checkpoint by its bit) leaves this one.
    if (at.known() && (at.location.file != e.segment || at.location.record != e.record)) return;
    kill(pos->position);
    index_.erase(*q, id);
  }

  void on_delivered(std::uint64_t segment, std::string_view queue, model::MessageId id, std::uint32_t count,
                    const StoredRef& named) {
    const StoredRef at = trust_refs_ ? named : StoredRef{};
    if (reclaimer_.on_delivered(segment, queue, id, count, at).unresolved) ++unresolved_;
    const auto q = names_.find(queue);
    if (!q) return;
    const Position* pos = index_.find(*q, id);
    // A hint: it may outlive its message, and the latest one written wins.
    if (pos == nullptr) return;
    entries_[pos->position].delivery_count = count;
  }

  void apply_batch(std::uint64_t segment, std::uint64_t offset, std::uint64_t end, const Batch& batch) {
    for (const Record& r : batch) {
      switch (r.kind) {
        case RecordKind::message: on_message(segment, offset, r.queue, r.message_id, r.message, summarize(*r.message)); break;
        case RecordKind::ack: on_ack(segment, r.queue, r.message_id, r.stored); break;
        case RecordKind::delivered: on_delivered(segment, r.queue, r.message_id, r.delivery_count, r.stored); break;
      }
    }
    reclaimer_.set_segment_bytes(segment, end);
  }

  // The index's records from position `first` on (a checkpoint covered the ones before).
  void apply_index(const SegmentIndex& index, std::size_t first = 0) {
    for (std::size_t i = first; i < index.records.size(); ++i) {
      const IndexRecord& r = index.records[i];
      const std::string& queue = index.queues[r.queue];
      switch (r.kind) {
        case RecordKind::message: on_message(index.segment_id, r.offset, queue, r.id, nullptr, r.summary); break;
        case RecordKind::ack: on_ack(index.segment_id, queue, r.id, r.stored); break;
        case RecordKind::delivered: on_delivered(index.segment_id, queue, r.id, r.delivery_count, r.stored); break;
      }
    }
    reclaimer_.set_segment_bytes(index.segment_id, index.segment_bytes);
  }

  // Acks and delivered records that may be about messages known by bit only, and name none.
  std::uint64_t unresolved() const { return unresolved_; }
  std::uint64_t spilled() const { return spilled_; }

  // Per lane (queue, priority) of a summary_only queue, the unscheduled live entries this replay
  // will visit one by one, and their footprints: what the tails must leave out.
  std::map<std::pair<std::string, std::uint8_t>, std::pair<std::uint64_t, std::uint64_t>> visited_lanes() {
    std::map<std::pair<std::string, std::uint8_t>, std::pair<std::uint64_t, std::uint64_t>> out;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      const Entry& e = entries_[i];
      if (!e.live || e.summary.deliver_at_ms != 0 || !summary_only(e.queue)) continue;
      auto& v = out[{names_.name(e.queue), e.summary.priority}];
      ++v.first;
      v.second += e.summary.footprint;
    }
    return out;
  }

  std::uint64_t live() const { return live_; }

  // Visits the live entries in append order. A message that must come back whole and was
  // applied from an index is read by location first; consecutive records of one frame share one
  // read. A read that fails is an error, or (skip_corrupt) a warning and a skipped message.
  Status visit_live(const std::filesystem::path& dir, RecoveryMode mode, RecoveryReport& report,
                    const std::function<void(RecoveredMessage)>& visit, spdlog::logger& log) {
    FrameReadBack frames(dir);
    std::uint64_t entered = 0, cached_segment = 0, cached_offset = 0;
    Result<Batch> cached = unexpected(Errc::not_found);
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      Entry& e = entries_[i];
      if (!e.live) continue;
      RecoveredMessage out;
      out.queue = names_.name(e.queue);
      out.summary = e.summary;
      out.delivery_count = e.delivery_count;
      // Offsets past 4 GiB (segment_bytes that large) cannot be named: no location.
      if (e.offset <= UINT32_MAX) out.location = Location{e.segment, static_cast<std::uint32_t>(e.offset), e.record};
      if (summary_only(e.queue)) {
        ++report.summaries;
      } else if (e.message) {
        out.message = std::move(e.message);
      } else {
        if (entered != e.segment) {
          // Entries of one segment are contiguous (append order): count the frames wanted.
          std::size_t wanted = 0;
          std::uint64_t last_offset = UINT64_MAX;
          for (std::size_t j = i; j < entries_.size() && entries_[j].segment == e.segment; ++j) {
            const Entry& f = entries_[j];
            if (f.live && !f.message && !summary_only(f.queue) && f.offset != last_offset) {
              ++wanted;
              last_offset = f.offset;
            }
          }
          frames.enter(e.segment, wanted);
          entered = e.segment;
        }
        if (cached_segment != e.segment || cached_offset != e.offset) {
          cached_segment = e.segment;
          cached_offset = e.offset;
          cached = frames.read(e.offset);
        }
        Status found = ok();
        if (!cached) {
          found = unexpected(cached.error());
        } else if (message_record_in(*cached, out.queue, e.summary.id) == nullptr) {
          found = unexpected(Errc::corrupt_data, segment_path(dir, e.segment).string() + " at offset " +
                                                     std::to_string(e.offset) + ": record " + std::to_string(e.record) +
                                                     " is not the message its index names");
        }
        if (!found) {
          if (mode == RecoveryMode::strict) return found;
          log.warn("journal: skipping live message {} of {}: {} (recovery = skip_corrupt)", e.summary.id.to_string(),
                   out.queue, found.error().detail);
          ++report.skipped_messages;
          continue;
        }
        out.message = message_record_in(*cached, out.queue, e.summary.id)->message;
        ++report.messages_read_back;
      }
      ++report.live_messages;
      visit(std::move(out));
    }
    entries_.clear();
    index_.clear();
    return ok();
  }

 private:
  struct Entry {
    model::MessagePtr message;
    MessageSummary summary;  // id is the message's
    std::uint64_t segment = 0;
    std::uint64_t offset = 0;  // of the record's batch frame
    std::uint32_t record = 0;  // its ordinal in the segment
    std::uint32_t queue = 0;   // in names_
    std::uint32_t delivery_count = 0;
    bool live = false;
  };
  struct Position {
    std::uint32_t position = 0;  // in entries_
  };

  void compact() {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (!entries_[i].live) continue;
      if (kept != i) {
        entries_[kept] = std::move(entries_[i]);
        index_.find(entries_[kept].queue, entries_[kept].summary.id)->position = static_cast<std::uint32_t>(kept);
      }
      ++kept;
    }
    entries_.truncate(kept);
  }

  void kill(std::uint32_t position) {
    Entry& e = entries_[position];
    e.live = false;
    e.message.reset();
    --live_;
  }

  // options_.summary_only, asked once per queue.
  bool summary_only(std::uint32_t q) {
    if (q >= decided_.size()) decided_.resize(q + 1, kUndecided);
    if (decided_[q] == kUndecided) {
      decided_[q] = options_.summary_only && options_.summary_only(names_.name(q)) ? 1 : 0;
    }
    return decided_[q] == 1;
  }

  static constexpr std::int8_t kUndecided = -1;
  static constexpr std::size_t kCompactAbove = 1 << 16;  // dead entries tolerated beyond the live count

  SegmentReclaimer& reclaimer_;
  const RecoverOptions& options_;
  bool trust_refs_ = true;
  QueueNameTable names_;  // never released while replaying: decided_ is by index
  QueueMessageTable<Position> index_;
  ChunkedVector<Entry> entries_;
  std::vector<std::int8_t> decided_;
  std::uint64_t live_ = 0;
  std::uint64_t unresolved_ = 0;
  std::uint64_t spilled_ = 0;
  std::unordered_set<model::MessageId> spilled_ids_;
};

Status truncate_file(const std::filesystem::path& path, std::uint64_t size, bool sync) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return unexpected(Errc::io_error, "cannot open " + path.string() + " to cut its torn tail: " +
                                          std::strerror(errno));
  }
  Status status = ok();
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0 || (sync && ::fdatasync(fd) != 0)) {
    status = unexpected(Errc::io_error, "cannot truncate " + path.string() + " to " +
                                            std::to_string(size) + " bytes: " + std::strerror(errno));
  }
  ::close(fd);
  return status;
}


// True when the segment's 32-byte header is this build's version, intact, and names the file's id.
bool segment_header_is_good(const SegmentFile& file) {
  const int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char bytes[kSegmentHeaderBytes];
  const ssize_t n = ::pread(fd, bytes, sizeof bytes, 0);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof bytes)) return false;
  auto header = decode_segment_header(std::string_view(bytes, sizeof bytes));
  return header && header->version == kFormatVersion && header->segment_id == file.id;
}

// Removes index files whose segment is gone (a crash between the two unlinks of a reclaimed
// segment) and temporary ones (a crash before the rename): neither is ever read.
void remove_stray_index_files(const std::filesystem::path& dir, const std::vector<SegmentFile>& segments,
                              spdlog::logger& log) {
  auto listed = list_index_files(dir);
  if (!listed) {
    log.warn("journal: {}", listed.error().detail);
    return;
  }
  std::size_t s = 0;
  for (const IndexFile& f : *listed) {
    while (s < segments.size() && segments[s].id < f.id) ++s;
    const bool has_segment = s < segments.size() && segments[s].id == f.id;
    if (has_segment && !f.temporary) continue;
    std::error_code ec;
    std::filesystem::remove(f.path, ec);
    if (ec) log.warn("journal: cannot remove stray index file {}: {}", f.path.string(), ec.message());
    else log.info("journal: removed {} ({})", f.path.string(), f.temporary ? "never renamed: written when the broker stopped" : "its segment is gone");
  }
}

// Why a checkpoint cannot be used with the segments present, or "" if it can: every segment it
// names is there with the size it recorded (one it knew fully acked may be gone: reclaimed
// since), the segment it ends in is there and at least as long, and no segment it does not name
// lies at or below that one.
std::string checkpoint_mismatch(const LiveSetCheckpoint& c, const std::vector<SegmentFile>& files) {
  std::map<std::uint64_t, std::uint64_t> present;
  for (const SegmentFile& f : files) present[f.id] = f.size;
  bool names_covered = false;
  for (const auto& s : c.segments) {
    if (s.id > c.covered_segment) return "it names segment " + std::to_string(s.id) + " past the one it ends in";
    auto it = present.find(s.id);
    if (s.id == c.covered_segment) {
      names_covered = true;
      if (it == present.end()) return "segment " + std::to_string(s.id) + ", where it ends, is missing";
      if (it->second < c.covered_bytes) {
        return "segment " + std::to_string(s.id) + " is shorter (" + std::to_string(it->second) + " bytes) than the " +
               std::to_string(c.covered_bytes) + " it covers";
      }
      continue;
    }
    if (it == present.end()) {
      if (s.live != 0) return "segment " + std::to_string(s.id) + " is missing";
      continue;
    }
    if (it->second != s.bytes) {
      return "segment " + std::to_string(s.id) + " has " + std::to_string(it->second) + " bytes, it recorded " +
             std::to_string(s.bytes);
    }
  }
  if (!names_covered && c.covered_segment != 0) return "it does not name the segment it ends in";
  std::size_t named = 0;
  for (const SegmentFile& f : files) {
    if (f.id > c.covered_segment) break;
    while (named < c.segments.size() && c.segments[named].id < f.id) ++named;
    if (named == c.segments.size() || c.segments[named].id != f.id) {
      return "segment " + std::to_string(f.id) + " is not in it";
    }
  }
  return "";
}

// One attempt at recovery: from `checkpoint` when set, else a full replay. Returns nullopt when
// the checkpoint turned out not to be enough (a record since it names a message it knows only by
// bit, without the location): the caller then replays in full. Nothing is visited before that is
// known.
Result<std::optional<RecoveredJournal>> recover_once(const std::filesystem::path& dir, const std::vector<SegmentFile>& files,
                                                     RecoveryMode mode, bool sync, const RecoverOptions& options,
                                                     bool classify, const LiveSetCheckpoint* checkpoint,
                                                     const std::function<void(RecoveredMessage)>& visit,
                                                     spdlog::logger& log) {
  std::optional<RecoveredJournal> result;
  result.emplace();
  RecoveredJournal& out = *result;
  if (classify) out.reclaimer.classify(options.summary_only);
  ReplayState state(out.reclaimer, options, mode == RecoveryMode::strict);
  RecoveryReport& report = out.report;
  if (!files.empty()) out.next_segment_id = files.back().id + 1;

  std::uint64_t covered_segment = 0, covered_bytes = 0;
  if (checkpoint != nullptr) {
    LiveSetCheckpoint present = *checkpoint;
    // Segments reclaimed since the checkpoint (it knew them fully acked) are not tracked again.
    std::map<std::uint64_t, bool> on_disk;
    for (const SegmentFile& f : files) on_disk[f.id] = true;
    std::erase_if(present.segments, [&](const auto& seg) { return on_disk.count(seg.id) == 0; });
    out.reclaimer.load(present);
    for (const auto& m : checkpoint->listed) {
      if (on_disk.count(m.location.file) != 0) state.add_listed(checkpoint->queues[m.queue], m.location, m.delivery_count, m.summary);
    }
    covered_segment = checkpoint->covered_segment;
    covered_bytes = checkpoint->covered_bytes;
    report.checkpoint_used = true;
    if (covered_segment != 0) {
      out.last_segment = covered_segment;
      out.last_segment_size = covered_bytes;
    }
  }

  // A long replay says how far it is, once a second (the clock is read every 256 batches and
  // after every segment).
  const auto began = std::chrono::steady_clock::now();
  auto last_progress = began;
  std::uint64_t until_clock = 256;
  auto progress = [&](std::size_t segment, bool segment_done) {
    if (!segment_done && --until_clock != 0) return;
    until_clock = 256;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress < std::chrono::seconds(1)) return;
    last_progress = now;
    log.info("journal recovery: segment {} of {}: {} from their index, {} read ({} batches); {} live messages so "
             "far, {:.1f} s",
             segment + 1, files.size(), report.segments_indexed, report.segments_read, report.batches,
             state.live(), std::chrono::duration<double>(now - began).count());
  };
  auto track = [&](const SegmentFile& file) -> Status {
    if (out.reclaimer.can_track(file.id)) return ok();
    return unexpected(Errc::corrupt_data, file.path.string() + ": segment ids in " + dir.string() +
                                              " span 2^32 or more (from " + files.front().path.filename().string() +
                                              "): not a journal this build can track");
  };

  for (std::size_t i = 0; i < files.size(); ++i) {
    const SegmentFile& file = files[i];
    const bool last = i + 1 == files.size();
    if (file.id < covered_segment) continue;  // the checkpoint holds all of it
    // The segment the checkpoint ends in: only what follows covered_bytes is replayed.
    const bool partial = file.id == covered_segment;
    if (partial && file.size == covered_bytes) {
      progress(i, true);
      continue;
    }
    const std::uint64_t start = partial ? covered_bytes : 0;

    // A closed segment whose index matches it exactly: apply the index, leave the file unread.
    // Its header is still checked (one small read): an unknown version or a damaged header is
    // handled by reading the segment, exactly as without an index.
    if (!last && (partial || segment_header_is_good(file))) {
      auto index = load_index_file(dir, file.id, file.size);
      const std::size_t first = partial ? out.reclaimer.records_in(file.id) : 0;
      if (index && first <= index->records.size()) {
        if (auto tracked = track(file); !tracked) return unexpected(tracked.error());
        if (!partial) out.reclaimer.add_segment(file.id);
        state.apply_index(*index, first);
        ++report.segments_indexed;
        report.index_records += index->records.size() - first;
        out.last_segment = file.id;
        out.last_segment_size = file.size;
        progress(i, true);
        continue;
      }
      if (!index && index.error().code != Errc::not_found) {
        log.warn("journal: not using index: {}; reading the segment instead", index.error().detail);
        ++report.indexes_unusable;
      }
    }

    auto opened = SegmentReader::open(file.path);
    if (!opened) return unexpected(std::move(opened).error());
    SegmentReader& reader = *opened;
    ++report.segments_read;

    auto header = reader.read_header();
    if (header && header->version != kFormatVersion) {
      return unexpected(Errc::corrupt_data,
                        file.path.string() + ": unsupported journal format version " +
                            std::to_string(header->version) + " (this build reads version " +
                            std::to_string(kFormatVersion) + ")");
    }
    if (header && header->segment_id != file.id) {
      header = unexpected(Errc::corrupt_data, "segment header names segment " +
                                                  std::to_string(header->segment_id));
    }
    if (!header) {
      const std::string detail = file.path.string() + ": " + header.error().detail;
      if (partial) return unexpected(Errc::corrupt_data, detail);  // the checkpoint read it once
      if (last && !reader.find_next_frame(0)) {
        // Created but never written past a partial header: a crash during a roll.
        log.warn("journal: removing {} (torn segment header, no data after it)", detail);
        report.truncated_bytes += reader.size();
        std::error_code ec;
        std::filesystem::remove(file.path, ec);
        if (ec) {
          return unexpected(Errc::io_error, "cannot remove torn segment " + file.path.string() +
                                                ": " + ec.message());
        }
        if (sync) {
          auto synced = sync_directory(dir);
          if (!synced) return unexpected(synced.error());
        }
        continue;
      }
      if (mode == RecoveryMode::strict) return unexpected(Errc::corrupt_data, detail);
      log.warn("journal: skipping all of {} (recovery = skip_corrupt)", detail);
      ++report.skipped_segments;
      report.skipped_bytes += reader.size();
      continue;
    }

    if (auto tracked = track(file); !tracked) return unexpected(tracked.error());
    if (!partial) out.reclaimer.add_segment(file.id);
    if (start != 0) reader.seek(start);
    // Only a segment read from its start can have its index built (and be appended to).
    SegmentIndexBuilder index;
    index.reset(partial ? 0 : file.id);
    bool damaged = false;
    std::uint64_t good_end = reader.position();
    for (;;) {
      auto item = reader.next();
      if (item.kind == SegmentReader::Item::Kind::end) break;
      if (item.kind == SegmentReader::Item::Kind::batch) {
        ++report.batches;
        if (!partial) index.add_batch(item.offset, item.batch);
        state.apply_batch(file.id, item.offset, item.next, item.batch);
        progress(i, false);
        good_end = item.next;
        continue;
      }
      const auto resume = reader.find_next_frame(item.offset);
      if (last && !resume) {
        log.warn("journal: torn tail: {}; truncating {} to {} bytes (dropping {} bytes that "
                 "were never reported durable)",
                 item.detail, file.path.string(), item.offset, reader.size() - item.offset);
        report.truncated_bytes += reader.size() - item.offset;
        auto cut = truncate_file(file.path, item.offset, sync);
        if (!cut) return unexpected(std::move(cut).error());
        good_end = item.offset;
        break;
      }
      if (mode == RecoveryMode::strict) {
        return unexpected(Errc::corrupt_data,
                          item.detail + (resume ? " (a good batch follows at offset " +
                                                      std::to_string(*resume) + ")"
                                                : std::string(" (in a segment that is not the last)")));
      }
      const std::uint64_t skip_to = resume ? *resume : reader.size();
      log.warn("journal: skipping {} damaged bytes: {} (recovery = skip_corrupt)",
               skip_to - item.offset, item.detail);
      ++report.skipped_batches;
      report.skipped_bytes += skip_to - item.offset;
      reader.seek(skip_to);
      good_end = skip_to;
      damaged = true;
    }
    out.reclaimer.set_segment_bytes(file.id, good_end);
    out.last_segment = file.id;
    out.last_segment_size = good_end;
    if (last) {
      if (!partial) out.tail_index = std::move(index);
    } else if (!damaged && !partial) {
      // Next time this closed segment is applied from its index. A segment with skipped damage
      // gets none, so every start reads it again and warns again, as the operator was told.
      if (auto written = write_index_file(dir, index, good_end, sync); written) {
        ++report.indexes_written;
      } else {
        log.warn("journal: cannot write the index of {}: {}; it is read again at the next start",
                 file.path.string(), written.error().detail);
      }
    }
    progress(i, true);
  }

  report.spilled_dropped = state.spilled();
  if (checkpoint != nullptr && state.unresolved() != 0) {
    log.info("journal: {} acks or delivered records since the checkpoint name messages it knows only by their "
             "location, without it; replaying the whole journal instead",
             state.unresolved());
    return std::optional<RecoveredJournal>{};
  }

  // The checkpoint's lanes, less what this replay visits one by one, come back as tails: every
  // tail before the first message (RecoveredTail).
  if (checkpoint != nullptr && options.tail) {
    const auto visited = state.visited_lanes();
    out.reclaimer.for_each_lane([&](const std::string& queue, std::uint8_t priority, const SegmentReclaimer::Lane& lane) {
      std::uint64_t count = lane.count, bytes = lane.bytes;
      if (auto it = visited.find({queue, priority}); it != visited.end()) {
        count -= std::min(count, it->second.first);
        bytes -= std::min(bytes, it->second.second);
      }
      if (count == 0) return;
      ++report.tails;
      report.tail_messages += count;
      options.tail(RecoveredTail{queue, priority, lane.from, count, bytes});
    });
  }

  if (auto visited = state.visit_live(dir, mode, report, visit, log); !visited) return unexpected(visited.error());
  return result;
}

}  // namespace

Result<RecoveredJournal> recover_journal(const std::filesystem::path& dir, RecoveryMode mode, bool sync,
                                         const RecoverOptions& options,
                                         const std::function<void(RecoveredMessage)>& visit, spdlog::logger& log,
                                         bool checkpointing) {
  auto listed = list_segments(dir);
  if (!listed) return unexpected(std::move(listed).error());
  const std::vector<SegmentFile>& files = *listed;
  remove_stray_index_files(dir, files, log);

  std::optional<LiveSetCheckpoint> checkpoint;
  std::string unused_because;
  if (checkpointing) {
    auto loaded = load_checkpoint_file(dir);
    if (loaded) {
      unused_because = checkpoint_mismatch(*loaded, files);
      if (unused_because.empty()) checkpoint = std::move(*loaded);
    } else if (loaded.error().code != Errc::not_found) {
      unused_because = loaded.error().detail;
    }
  } else {
    // A checkpoint this recovery does not keep up to date must not be believed later.
    (void)remove_checkpoint_file(dir, false);
  }
  if (!unused_because.empty()) {
    log.warn("journal: not using the live-set checkpoint: {}; replaying the whole journal", unused_because);
  }
  if (checkpoint) {
    auto once = recover_once(dir, files, mode, sync, options, true, &*checkpoint, visit, log);
    if (!once) return unexpected(std::move(once).error());
    if (*once) return std::move(**once);
    // Files may have changed (a torn tail cut): list them again.
    listed = list_segments(dir);
    if (!listed) return unexpected(std::move(listed).error());
  }
  auto full = recover_once(dir, *listed, mode, sync, options, checkpointing, nullptr, visit, log);
  if (!full) return unexpected(std::move(full).error());
  RecoveredJournal out = std::move(**full);
  out.report.checkpoint_unusable = !unused_because.empty() || checkpoint.has_value();
  return out;
}

}  // namespace carrier::store::log
