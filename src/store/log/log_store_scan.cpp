// LogStore::scan: reading a queue's cold tail back in store order (docs/storage.md, "Cold tails:
// scan"). Everything here but scan() itself runs on the reader thread.
#include <algorithm>
#include <utility>

#include "store/log/log_store.hpp"

namespace carrier::store::log {

namespace {

// Candidates are checked for liveness and read in chunks of about what is still wanted: a scan
// of 128 from a long lane checks 128 and a few, not the whole segment's lane.
constexpr std::size_t kScanChunkSlack = 16;

bool entry_before(const SegmentCatalog::Entry& e, const Location& at) {
  return e.offset != at.offset ? e.offset < at.offset : e.record < at.record;
}

}  // namespace

void LogStore::scan(std::string queue, std::uint8_t priority, Location from, std::size_t max, ScanCallback done) {
  if (!can_scan()) {
    if (done) {
      done(unexpected(Errc::unavailable, "journal " + dir_.string() + ": segment_bytes above " +
                                             std::to_string(kMaxScannableSegmentBytes) + " cannot be scanned"));
    }
    return;
  }
  PendingRead r;
  r.queue = std::move(queue);
  r.priority = priority;
  r.from = from;
  r.max = max;
  r.scanned = std::move(done);
  if (!r.scanned) return;  // nobody to answer
  if (reads_.push(r)) return;
  fail_read(r, Error(Errc::shutting_down, "journal " + dir_.string() + " is closed"));
}

// Walks the tracked segments from `from` up to scan_end_, each through its catalog (the lane of
// `queue` and `priority` only), checks the candidates for liveness in chunks and reads the live
// ones. `pos` is always just past the last record examined.
Result<ScanResult> LogStore::scan_now(const std::string& queue, std::uint8_t priority, Location from,
                                      std::size_t max) {
  ScanResult out;
  out.next = from;
  if (max == 0) return out;
  ScanEnd end;
  {
    std::lock_guard lock(liveness_);
    end = scan_end_;
  }
  Location pos = from;
  std::size_t closed_segments = 0;
  std::vector<SegmentCatalog::Entry> chunk;
  for (;;) {
    std::uint64_t segment = 0;
    {
      std::lock_guard lock(liveness_);
      segment = reclaimer_.first_segment_from(std::max<std::uint64_t>(pos.file, 1));
    }
    if (segment == 0 || segment > end.segment || end.segment == 0) {
      // Nothing stored at or after pos that the writer has applied.
      out.exhausted = true;
      out.next = std::max(pos, Location{end.segment, static_cast<std::uint32_t>(end.bytes), 0});
      return out;
    }
    if (segment != pos.file) pos = Location{segment, 0, 0};
    const bool open = segment == end.segment;
    // The open segment is looked at up to end.bytes only, even if its catalog (extended for a
    // delivery count) covers more.
    const std::uint64_t limit = open ? end.bytes : UINT64_MAX;
    auto catalog = catalogs_.get(frames_, segment, open ? std::optional<std::uint64_t>(end.bytes) : std::nullopt);
    if (!catalog && catalog.error().code == Errc::not_found) {
      pos = Location{segment + 1, 0, 0};  // reclaimed meanwhile: nothing live in it
      continue;
    }
    if (!catalog) {
      log_->error("journal {}: scan of {} cannot read segment {}: {}", dir_.string(), queue, segment,
                  catalog.error().detail);
      return unexpected(std::move(catalog).error());
    }
    const SegmentCatalog& c = **catalog;
    {
      const auto& lane = c.lane(queue, priority);
      std::size_t at = static_cast<std::size_t>(
          std::partition_point(lane.begin(), lane.end(), [&](const auto& e) { return entry_before(e, pos); }) -
          lane.begin());
      for (;;) {
        // lane() is looked up again for each chunk: reading a delivery count may extend this
        // catalog, and its vectors with it.
        const auto& entries = c.lane(queue, priority);
        chunk.clear();
        const std::size_t want = max - out.messages.size() + kScanChunkSlack;
        while (at < entries.size() && chunk.size() < want && entries[at].offset < limit) chunk.push_back(entries[at++]);
        if (chunk.empty()) break;
        ScanEnd check_end;
        if (auto st = read_scanned(queue, segment, chunk, max, out, pos, check_end); !st) {
          log_->error("journal {}: scan of {} failed in segment {}: {}", dir_.string(), queue, segment,
                      st.error().detail);
          return unexpected(st.error());
        }
        if (out.messages.size() == max) {
          out.next = pos;
          return out;
        }
      }
    }
    if (open) {
      out.exhausted = true;
      out.next = std::max(pos, Location{segment, static_cast<std::uint32_t>(end.bytes), 0});
      return out;
    }
    pos = Location{segment + 1, 0, 0};
    if (++closed_segments >= kMaxSegmentsPerScan) {
      out.next = pos;
      return out;
    }
  }
}

// Checks `chunk` (entries of one lane of `segment`, in order) for liveness, then reads the live
// ones until `out` holds `max`, moving `pos` past each entry examined.
Status LogStore::read_scanned(const std::string& queue, std::uint64_t segment,
                              const std::vector<SegmentCatalog::Entry>& chunk, std::size_t max, ScanResult& out,
                              Location& pos, ScanEnd& check_end) {
  std::vector<model::MessageId> ids;
  std::vector<std::uint32_t> ordinals;
  ids.reserve(chunk.size());
  ordinals.reserve(chunk.size());
  for (const auto& e : chunk) {
    ids.push_back(e.id);
    ordinals.push_back(e.record);
  }
  // Acks in flight first, the reclaimer second (AcksInFlight says why that order is exact).
  std::vector<bool> hidden;
  acks_in_flight_.hides(queue, ids, hidden);
  std::vector<std::uint64_t> delivered_in;
  std::vector<bool> live;
  {
    std::lock_guard lock(liveness_);
    reclaimer_.check_live(segment, ordinals, hidden, live, delivered_in);
    check_end = scan_end_;
  }
  std::uint64_t cached_offset = UINT64_MAX;
  Result<Batch> cached = unexpected(Errc::not_found);
  for (std::size_t i = 0; i < chunk.size() && out.messages.size() < max; ++i) {
    const SegmentCatalog::Entry& e = chunk[i];
    pos = Location{segment, e.offset, e.record + 1};
    if (!live[i]) continue;
    if (cached_offset != e.offset) {
      cached_offset = e.offset;
      cached = frames_.read_batch(segment, e.offset);
      if (!cached && cached.error().code == Errc::corrupt_data) {
        // Its live messages cannot be delivered: said once per frame read, as read() says it.
        log_->error("journal {}: cannot read back messages of {} at segment {} offset {}: {}", dir_.string(), queue,
                    segment, e.offset, cached.error().detail);
      }
    }
    if (!cached && cached.error().code == Errc::not_found) continue;  // reclaimed since the check
    if (!cached && cached.error().code == Errc::corrupt_data) {
      ++out.unreadable;  // left stored; the scan goes on past it
      continue;
    }
    if (!cached) return unexpected(cached.error());
    const Record* rec = message_record_in(*cached, queue, e.id);
    if (rec == nullptr) {
      log_->error("journal {}: segment {} offset {} record {} is not the message {} of {} its catalog names",
                  dir_.string(), segment, e.offset, e.record, e.id.to_string(), queue);
      ++out.unreadable;
      continue;
    }
    std::uint32_t count = 0;
    if (delivered_in[i] != 0) {
      const bool in_open = delivered_in[i] == check_end.segment;
      auto where = catalogs_.get(frames_, delivered_in[i],
                                 in_open ? std::optional<std::uint64_t>(check_end.bytes) : std::nullopt);
      if (where) {
        count = (*where)->delivered_count(queue, e.id);
      } else if (where.error().code != Errc::not_found) {
        return unexpected(where.error());
      }
    }
    out.messages.push_back(ScannedMessage{rec->message, Location{segment, e.offset, e.record}, count});
  }
  return ok();
}

}  // namespace carrier::store::log
