#include "store/log/recovery.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "store/log/journal_directory.hpp"
#include "store/log/segment_reader.hpp"

namespace carrier::store::log {

namespace {

// The journal's state while it is replayed: every message record in append order (acked or
// superseded ones emptied in place, so the order never needs re-sorting) and where each live
// key sits.
class ReplayState {
 public:
  explicit ReplayState(SegmentReclaimer& reclaimer) : reclaimer_(reclaimer) {}

  // `offset`: where the batch's frame starts in `segment`, which with the record's index is
  // the location recovery hands back.
  void apply(std::uint64_t segment, std::uint64_t offset, Batch& batch) {
    for (std::size_t index = 0; index < batch.size(); ++index) {
      Record& r = batch[index];
      QueueMessageKey key{r.queue, r.message_id};
      switch (r.kind) {
        case RecordKind::message: {
          auto [it, inserted] = index_.try_emplace(std::move(key), entries_.size());
          if (!inserted) {
            entries_[it->second].message.reset();
            it->second = entries_.size();
          }
          reclaimer_.on_message(segment, r.queue, r.message_id);
          // Offsets past 4 GiB (segment_bytes that large) cannot be named: no location.
          const Location where = offset <= UINT32_MAX ? Location{segment, static_cast<std::uint32_t>(offset),
                                                                 static_cast<std::uint32_t>(index)}
                                                      : Location{};
          entries_.push_back(RecoveredMessage{std::move(r.queue), std::move(r.message), 0, where});
          break;
        }
        case RecordKind::ack: {
          auto it = index_.find(key);
          if (it == index_.end()) break;  // its segment is gone, or acked twice: harmless
          entries_[it->second].message.reset();
          index_.erase(it);
          reclaimer_.on_ack(segment, r.queue, r.message_id);
          break;
        }
        case RecordKind::delivered: {
          auto it = index_.find(key);
          // A hint: it may outlive its message, and the latest one written wins.
          if (it == index_.end()) break;
          entries_[it->second].delivery_count = r.delivery_count;
          reclaimer_.on_delivered(segment, r.queue, r.message_id);
          break;
        }
      }
    }
  }

  std::uint64_t visit_live(const std::function<void(RecoveredMessage)>& visit) {
    std::uint64_t n = 0;
    for (RecoveredMessage& e : entries_) {
      if (!e.message) continue;
      ++n;
      visit(std::move(e));
    }
    entries_.clear();
    index_.clear();
    return n;
  }

 private:
  SegmentReclaimer& reclaimer_;
  std::vector<RecoveredMessage> entries_;
  std::unordered_map<QueueMessageKey, std::size_t, QueueMessageKeyHash> index_;
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

}  // namespace

Result<RecoveredJournal> recover_journal(const std::filesystem::path& dir, RecoveryMode mode,
                                         bool sync,
                                         const std::function<void(RecoveredMessage)>& visit,
                                         spdlog::logger& log) {
  auto listed = list_segments(dir);
  if (!listed) return unexpected(std::move(listed).error());
  const std::vector<SegmentFile>& files = *listed;

  RecoveredJournal out;
  ReplayState state(out.reclaimer);
  RecoveryReport& report = out.report;
  if (!files.empty()) out.next_segment_id = files.back().id + 1;

  // A long replay says how far it is, once a second (read the clock every 256 batches).
  const auto began = std::chrono::steady_clock::now();
  auto last_progress = began;
  std::uint64_t until_clock = 256;
  auto progress = [&](std::size_t segment) {
    if (--until_clock != 0) return;
    until_clock = 256;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress < std::chrono::seconds(1)) return;
    last_progress = now;
    log.info("journal recovery: segment {} of {}, {} segment(s) done, {} batch(es) replayed, {:.1f} s so far",
             segment + 1, files.size(), segment, report.batches,
             std::chrono::duration<double>(now - began).count());
  };

  for (std::size_t i = 0; i < files.size(); ++i) {
    const SegmentFile& file = files[i];
    const bool last = i + 1 == files.size();
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

    out.reclaimer.add_segment(file.id);
    std::uint64_t good_end = reader.position();
    for (;;) {
      auto item = reader.next();
      if (item.kind == SegmentReader::Item::Kind::end) break;
      if (item.kind == SegmentReader::Item::Kind::batch) {
        ++report.batches;
        state.apply(file.id, item.offset, item.batch);
        progress(i);
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
    }
    out.last_segment = file.id;
    out.last_segment_size = good_end;
  }

  report.live_messages = state.visit_live(visit);
  return out;
}

}  // namespace carrier::store::log
