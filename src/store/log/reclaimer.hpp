#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "model/message_id.hpp"
#include "store/log/queue_message_table.hpp"
#include "store/log/queue_name_table.hpp"
#include "store/record.hpp"

namespace carrier::store::log {

// Decides which segments can be deleted. The rule (docs/storage.md, "Reclamation"):
//
//   A segment may go when (1) none of its message records is live, (2) it is not the segment
//   being written, and (3) every older segment it depends on is already gone.
//
// A segment depends on an older one when one of its ack records removed a message stored
// there (delete the ack first and the message comes back at recovery), or when one of its
// message records re-added a key that was still live there. Deleting one segment can free
// another, so deletable() is asked again after each round until it returns nothing: the
// fixpoint.
//
// Delivered records are hints that may dangle: they never hold back the deletion of their
// message's segment. But the LATEST delivered record of a live message pins its own segment
// (counted like a live message), or deleting it would silently reset the delivery count at the
// next recovery and let a poison message dodge its max-deliveries limit.
//
// Memory: one 28-byte entry per live message in a QueueMessageTable (queue names interned,
// segments as 32-bit numbers counted from the first segment tracked) plus its share of the hash
// index: at most 40 bytes per live message (journal_cost_test), whatever the queue's name.
//
// Runs on: the recovering thread while the journal is read, then the log store's writer thread.
// Not thread-safe.
class SegmentReclaimer {
 public:
  // False for a segment id this reclaimer cannot track: below the first one it was given, or
  // 2^32 - 1 or more above it (the segments of one journal span far less; a directory holding
  // both 1.log and 99999999999.log is refused by recovery rather than misread).
  bool can_track(std::uint64_t id) const;
  // Needs can_track(id).
  void add_segment(std::uint64_t id);

  // Applies one batch written to `segment`, record by record.
  void apply(std::uint64_t segment, const Batch& batch);
  void on_message(std::uint64_t segment, std::string_view queue, model::MessageId id);
  // Returns the segment that held the message, or 0 if it was not live (already acked, or its
  // segment deleted: a dangling ack is harmless).
  std::uint64_t on_ack(std::uint64_t segment, std::string_view queue, model::MessageId id);
  void on_delivered(std::uint64_t segment, std::string_view queue, model::MessageId id);

  // Segments that may be deleted now (never `active`), oldest first. They stay tracked until
  // forget(): the caller deletes the files, syncs the directory, forgets the ones it deleted,
  // and asks again.
  std::vector<std::uint64_t> deletable(std::uint64_t active) const;
  void forget(std::uint64_t segment);

  // True when deletable() could return something it did not last time; lets the writer skip
  // the scan after most group commits.
  bool changed() const { return changed_; }
  void clear_changed() { changed_ = false; }

  bool tracks(std::uint64_t segment) const { return segments_.count(segment) != 0; }
  // True when the message of `queue` and `id` is live and its (latest) message record is in
  // `segment`: what a read by location checks before it believes the bytes it finds there.
  bool live_at(std::string_view queue, model::MessageId id, std::uint64_t segment) const;
  // live_at() for many ids of one queue in `segment` at once (the queue looked up once, each id
  // once): live[i] for each ids[i], and delivered_in[i], the segment of its latest delivered
  // record (0 if none), where a scan finds its delivery count. Entries for ids not live are
  // left unset.
  void check_live(std::string_view queue, std::uint64_t segment, const std::vector<model::MessageId>& ids,
                  const std::vector<bool>& skip, std::vector<bool>& live,
                  std::vector<std::uint64_t>& delivered_in) const;
  // The first tracked segment whose id is `id` or more, 0 if none: lets a scan step over
  // reclaimed segments without walking them.
  std::uint64_t first_segment_from(std::uint64_t id) const;
  std::size_t live_messages() const { return live_.size(); }
  // Live messages plus pinned delivered records in `segment`.
  std::size_t live_in(std::uint64_t segment) const;
  std::size_t segment_count() const { return segments_.size(); }
  // Bytes of the per-message tables (not the per-segment ones), for reports.
  std::size_t live_table_bytes() const { return live_.memory_bytes(); }

 private:
  struct SegmentState {
    std::size_t live = 0;  // live messages stored here + latest delivered records held here
    std::set<std::uint64_t> depends_on;  // older segments that must go first
  };
  // Segments as numbers relative to base_: 1 = base_, 0 = none.
  struct LiveMessage {
    std::uint32_t segment = 0;       // holds its message record
    std::uint32_t delivered_in = 0;  // holds its latest delivered record; 0 = none
  };

  std::uint32_t number(std::uint64_t segment) const { return static_cast<std::uint32_t>(segment - base_ + 1); }
  std::uint64_t segment_of(std::uint32_t number) const { return base_ + number - 1; }
  void release(std::uint64_t segment);

  std::map<std::uint64_t, SegmentState> segments_;
  std::uint64_t base_ = 0;  // the first segment ever added; 0 = none yet
  QueueNameTable queues_;
  QueueMessageTable<LiveMessage> live_;
  bool changed_ = true;
};

}  // namespace carrier::store::log
