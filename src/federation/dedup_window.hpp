#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
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
};

// The message ids a node has taken in over links, newest `capacity` kept (oldest forgotten
// first), with each one's HopInfo: a second arrival of one is a duplicate (a ring, a mesh, a
// push repeated after a cut) and is dropped; a forwarding consumer looks up how far a message
// has come.
// Runs on: shard 0 (federation::Node).
class DedupWindow {
 public:
  explicit DedupWindow(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // False (and nothing changes) if `id` is already in the window: a duplicate.
  bool insert(const model::MessageId& id, HopInfo info);
  // Null for a message that did not come over a link (or was forgotten).
  const HopInfo* find(const model::MessageId& id) const;
  // Forgets `id` (its push failed here, so a retry must be taken in).
  void erase(const model::MessageId& id) { seen_.erase(id); }

  std::size_t size() const { return seen_.size(); }
  std::uint64_t duplicates() const { return duplicates_; }

 private:
  std::size_t capacity_;
  std::unordered_map<model::MessageId, HopInfo> seen_;
  std::deque<model::MessageId> order_;  // arrival order; may name ids erased since
  std::uint64_t duplicates_ = 0;
};

}  // namespace carrier::federation
