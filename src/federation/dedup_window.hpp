#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "federation/codec/id128.hpp"
#include "model/message_id.hpp"

namespace carrier::federation {

// Where a message that came over a link has been: what the next push of it carries.
struct HopInfo {
  std::int32_t ttl = 0;            // hops it may still take from here
  std::int32_t hops = 0;           // hops taken to get here
  codec::Id128 origin;             // the node that sent it first
  codec::Id128 previous;           // the node it came from
  std::vector<std::int32_t> stack;  // session ids of the links it came in on, oldest first
  model::MessageId record;         // its `$federation-seen` record in the store, nil if none
};

// The message ids a node has taken in over links, newest `capacity` kept (oldest forgotten
// first), with each one's HopInfo: a second arrival of one is a duplicate (a ring, a mesh, a
// push repeated after a cut) and is dropped; a forwarding consumer looks up how far a message
// has come.
// Runs on: shard 0 (federation::Node).
class DedupWindow {
 public:
  explicit DedupWindow(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // The new entry's HopInfo, or null (and nothing changes, nothing is counted) if `id` is
  // already in the window: a duplicate. One hash lookup for the id, one per entry forgotten to
  // make room; their store records are appended to `forgotten` (if given). The pointer stays
  // valid until that id is erased or forgotten.
  HopInfo* insert(const model::MessageId& id, HopInfo info, std::vector<model::MessageId>* forgotten = nullptr);
  // Null for a message that did not come over a link (or was forgotten).
  const HopInfo* find(const model::MessageId& id) const;
  HopInfo* find(const model::MessageId& id) { return const_cast<HopInfo*>(std::as_const(*this).find(id)); }
  // Forgets `id` (its push failed here, so a retry must be taken in).
  void erase(const model::MessageId& id) { seen_.erase(id); }
  // Counts a duplicate (insert() said null).
  void count_duplicate() { ++duplicates_; }

  std::size_t size() const { return seen_.size(); }
  std::uint64_t duplicates() const { return duplicates_; }

 private:
  std::size_t capacity_;
  struct Entry {
    HopInfo info;
    std::uint64_t sequence;  // its place in order_
  };
  std::unordered_map<model::MessageId, Entry> seen_;
  // Arrival order; may name ids erased (or erased and inserted again) since: an entry counts
  // only while its sequence matches.
  std::deque<std::pair<model::MessageId, std::uint64_t>> order_;
  std::uint64_t next_sequence_ = 0;
  std::uint64_t duplicates_ = 0;
};

}  // namespace carrier::federation
