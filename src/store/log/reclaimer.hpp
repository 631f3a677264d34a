#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/message_id.hpp"
#include "store/record.hpp"

namespace carrier::store::log {

// A message as the journal tracks it: one per queue it was stored for.
struct QueueMessageKey {
  std::string queue;
  model::MessageId id;
  bool operator==(const QueueMessageKey&) const = default;
};

struct QueueMessageKeyHash {
  std::size_t operator()(const QueueMessageKey& k) const noexcept {
    return std::hash<std::string>{}(k.queue) ^ (std::hash<model::MessageId>{}(k.id) * 31);
  }
};

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
// Runs on: the recovering thread while the journal is read, then the log store's writer thread.
// Not thread-safe.
class SegmentReclaimer {
 public:
  void add_segment(std::uint64_t id);

  // Applies one batch written to `segment`, record by record.
  void apply(std::uint64_t segment, const Batch& batch);
  void on_message(std::uint64_t segment, const std::string& queue, model::MessageId id);
  // Returns the segment that held the message, or 0 if it was not live (already acked, or its
  // segment deleted: a dangling ack is harmless).
  std::uint64_t on_ack(std::uint64_t segment, const std::string& queue, model::MessageId id);
  void on_delivered(std::uint64_t segment, const std::string& queue, model::MessageId id);

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
  bool live_at(const std::string& queue, model::MessageId id, std::uint64_t segment) const;
  std::size_t live_messages() const { return live_.size(); }
  // Live messages plus pinned delivered records in `segment`.
  std::size_t live_in(std::uint64_t segment) const;
  std::size_t segment_count() const { return segments_.size(); }

 private:
  struct SegmentState {
    std::size_t live = 0;  // live messages stored here + latest delivered records held here
    std::set<std::uint64_t> depends_on;  // older segments that must go first
  };
  struct LiveMessage {
    std::uint64_t segment = 0;       // holds its message record
    std::uint64_t delivered_in = 0;  // holds its latest delivered record; 0 = none
  };

  void release(std::uint64_t segment);

  std::map<std::uint64_t, SegmentState> segments_;
  std::unordered_map<QueueMessageKey, LiveMessage, QueueMessageKeyHash> live_;
  bool changed_ = true;
};

}  // namespace carrier::store::log
