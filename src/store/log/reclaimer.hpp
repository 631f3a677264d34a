#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/message_id.hpp"
#include "store/log/live_set_checkpoint.hpp"
#include "store/log/queue_message_table.hpp"
#include "store/log/queue_name_table.hpp"
#include "store/record.hpp"

namespace carrier::store::log {

// Knows which message records of the journal are live, and decides which segments can be
// deleted. The rule (docs/storage.md, "Reclamation"):
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
// Liveness is by position (docs/storage.md, "Liveness"): every record of a segment has an
// ordinal (its position among the segment's records, which the journal's Location carries as
// `record`), and each segment keeps a bitmap of its live message records. A message applied in
// this process also has an entry in a QueueMessageTable keyed by queue and id (so acks that
// name only queue and id find it), naming its bit. A message loaded from a live-set checkpoint
// has only its bit: its ack or delivered record must carry its StoredRef.
//
// Lanes and listed messages (only once classify() was called): per (queue, priority) of a
// summary_only queue, the count, bytes and a lower bound of the locations of its unscheduled
// live messages (what RecoveredTail hands back); every other live message (other queues,
// scheduled ones) is listed with its summary and location, so a checkpoint can bring it back
// one by one.
//
// Runs on: the recovering thread while the journal is read, then the log store's writer thread.
// Not thread-safe.
class SegmentReclaimer {
 public:
  // What an ack or delivered record did.
  struct Applied {
    std::uint64_t segment = 0;  // ack: the segment that held the message, 0 if it was not live
    // It names no location and no live message in the table, but its queue has messages known
    // only by position: it may be about one of them, and cannot be resolved.
    bool unresolved = false;
  };

  // A spilled message record (MessageSummary::spilled) applied by apply() or on_message() is
  // live while this process runs, but no checkpoint counts it: it is dead after a restart.
  // Recovery does not apply one (skip_record() numbers it).

  // Turns on lanes and listed messages, deciding per queue with `summary_only`. Before any
  // record is applied.
  void classify(std::function<bool(std::string_view queue)> summary_only);
  bool classifies() const { return static_cast<bool>(summary_only_); }

  // False for a segment id this reclaimer cannot track: below the first one it was given, or
  // 2^32 - 1 or more above it (the segments of one journal span far less; a directory holding
  // both 1.log and 99999999999.log is refused by recovery rather than misread).
  bool can_track(std::uint64_t id) const;
  // Needs can_track(id).
  void add_segment(std::uint64_t id);
  // The segment's size so far (a checkpoint records it).
  void set_segment_bytes(std::uint64_t segment, std::uint64_t bytes);

  // Applies one batch whose frame starts at `offset` in `segment` and ends at `end`, record by
  // record. Returns true if one of its records could not be resolved (Applied::unresolved).
  bool apply(std::uint64_t segment, std::uint64_t offset, std::uint64_t end, const Batch& batch);
  bool apply(std::uint64_t segment, const Batch& batch) { return apply(segment, 0, 0, batch); }

  // Each record takes the next ordinal of its segment. Returns the message's ordinal.
  std::uint32_t on_message(std::uint64_t segment, std::uint64_t offset, std::string_view queue,
                           const MessageSummary& summary);
  std::uint32_t on_message(std::uint64_t segment, std::string_view queue, model::MessageId id);
  // A record that is not live from the start (a spilled message read at recovery): it only takes
  // its ordinal.
  void skip_record(std::uint64_t segment) { (void)next_ordinal(state_of(segment, "skipped")); }
  Applied on_ack(std::uint64_t segment, std::string_view queue, model::MessageId id, const StoredRef& at);
  // Returns the segment that held the message, or 0 if it was not live (already acked, or its
  // segment deleted: a dangling ack is harmless).
  std::uint64_t on_ack(std::uint64_t segment, std::string_view queue, model::MessageId id) {
    return on_ack(segment, queue, id, StoredRef{}).segment;
  }
  Applied on_delivered(std::uint64_t segment, std::string_view queue, model::MessageId id, std::uint32_t count,
                       const StoredRef& at);
  void on_delivered(std::uint64_t segment, std::string_view queue, model::MessageId id) {
    (void)on_delivered(segment, queue, id, 0, StoredRef{});
  }

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
  // True when the message record at `location` (record = its ordinal) is live: what a read by
  // location checks before it believes the bytes it finds there (it then checks queue and id).
  bool live_at(const Location& location) const;
  bool live_at(std::uint64_t segment, std::uint32_t ordinal) const;
  // live_at() for many records of one lane of `segment` at once: live[i] for each ordinals[i]
  // (unless skip[i]), and delivered_in[i], the segment of its latest delivered record (0 if
  // none), where a scan finds its delivery count.
  void check_live(std::uint64_t segment, const std::vector<std::uint32_t>& ordinals, const std::vector<bool>& skip,
                  std::vector<bool>& live, std::vector<std::uint64_t>& delivered_in) const;
  // The first tracked segment whose id is `id` or more, 0 if none: lets a scan step over
  // reclaimed segments without walking them.
  std::uint64_t first_segment_from(std::uint64_t id) const;
  // Live messages: in the table, plus those known only by their bit.
  std::size_t live_messages() const { return live_.size() + bit_only_total_; }
  std::size_t bit_only_messages() const { return bit_only_total_; }
  // Live messages plus pinned delivered records in `segment`.
  std::size_t live_in(std::uint64_t segment) const;
  std::size_t segment_count() const { return segments_.size(); }
  // The next ordinal of `segment` (its records so far); 0 if untracked.
  std::uint32_t records_in(std::uint64_t segment) const;
  // Bytes of the per-message tables (not the per-segment ones), for reports.
  std::size_t live_table_bytes() const { return live_.memory_bytes(); }

  // The lanes (queue, priority, count, bytes, from) with live messages, for recover()'s tails.
  template <class F>
  void for_each_lane(F&& f) const {
    for (const auto& [key, lane] : lanes_) f(queues_.name(key.first), key.second, lane);
  }
  struct Lane {
    std::uint64_t count = 0;
    std::uint64_t bytes = 0;
    Location from;  // at or before every live message of the lane
  };

  // Everything above, as of (covered_segment, covered_bytes): what the writer applied so far.
  LiveSetCheckpoint checkpoint(std::uint64_t covered_segment, std::uint64_t covered_bytes) const;
  // The state a checkpoint describes, its messages known by bit only (listed ones also by queue
  // and id). Needs an empty reclaimer that classify() was called on.
  void load(const LiveSetCheckpoint& c);

 private:
  struct SegmentState {
    std::size_t live = 0;  // live messages stored here + latest delivered records held here
    std::uint32_t records = 0;  // records applied: the next one's ordinal
    std::uint64_t bytes = 0;
    std::set<std::uint64_t> depends_on;  // older segments that must go first
    std::vector<std::uint64_t> bits;     // live message records, by ordinal
    std::vector<std::uint64_t> spilled;  // which of those are spilled (empty while none was)
    std::size_t spilled_live = 0;
  };
  enum class Kind : std::uint8_t { plain, lane, listed, spilled };
  // Segments as numbers relative to base_: 1 = base_, 0 = none.
  struct LiveMessage {
    std::uint32_t segment = 0;  // holds its message record
    std::uint32_t ordinal = 0;  // its position there
    std::uint8_t priority = 0;
    Kind kind = Kind::plain;
  };
  struct Listed {
    std::uint32_t queue = 0;
    std::uint64_t offset = 0;
    std::uint32_t delivery_count = 0;
    MessageSummary summary;
  };
  using LaneKey = std::pair<std::uint32_t, std::uint8_t>;

  std::uint32_t number(std::uint64_t segment) const { return static_cast<std::uint32_t>(segment - base_ + 1); }
  std::uint64_t segment_of(std::uint32_t number) const { return base_ + number - 1; }
  static std::uint64_t position_key(std::uint32_t number, std::uint32_t ordinal) {
    return (std::uint64_t{number} << 32) | ordinal;
  }
  SegmentState& state_of(std::uint64_t segment, const char* what);
  std::uint32_t next_ordinal(SegmentState& s) { return s.records++; }
  void release(std::uint64_t segment);
  bool test_bit(const SegmentState& s, std::uint32_t ordinal) const;
  void set_bit(SegmentState& s, std::uint32_t ordinal);
  bool clear_bit(SegmentState& s, std::uint32_t ordinal);
  // Removes a live copy at (number, ordinal): its bit, its pins, its lane or listing.
  void remove_copy(std::uint32_t queue, std::uint32_t number, std::uint32_t ordinal, std::uint8_t priority, Kind kind,
                   std::uint32_t footprint, bool known_footprint);
  Kind kind_for(std::uint32_t queue, const MessageSummary& summary);
  void lane_add(std::uint32_t queue, std::uint8_t priority, std::uint64_t footprint, const Location& at);
  void lane_remove(std::uint32_t queue, std::uint8_t priority, std::uint64_t footprint, bool known_footprint);
  bool has_bit_only(std::uint32_t queue) const;

  std::map<std::uint64_t, SegmentState> segments_;
  std::uint64_t base_ = 0;  // the first segment ever added; 0 = none yet
  QueueNameTable queues_;
  QueueMessageTable<LiveMessage> live_;
  // By position: the segment number of the latest delivered record of a live message.
  std::unordered_map<std::uint64_t, std::uint32_t> delivered_in_;
  std::map<LaneKey, Lane> lanes_;
  std::unordered_map<std::uint64_t, Listed> listed_;  // by position
  std::unordered_map<std::uint32_t, std::uint64_t> bit_only_;  // per queue: live messages known by bit only
  std::size_t bit_only_total_ = 0;
  std::function<bool(std::string_view)> summary_only_;
  bool changed_ = true;
};

}  // namespace carrier::store::log
