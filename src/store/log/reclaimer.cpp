#include "store/log/reclaimer.hpp"

#include "base/assert.hpp"

namespace carrier::store::log {

void SegmentReclaimer::add_segment(std::uint64_t id) {
  segments_.try_emplace(id);
  changed_ = true;
}

void SegmentReclaimer::apply(std::uint64_t segment, const Batch& batch) {
  for (const Record& r : batch) {
    if (r.kind == RecordKind::message) {
      on_message(segment, r.queue, r.message_id);
    } else if (r.kind == RecordKind::ack) {
      on_ack(segment, r.queue, r.message_id);
    }
  }
}

void SegmentReclaimer::on_message(std::uint64_t segment, const std::string& queue,
                                  core::MessageId id) {
  auto seg = segments_.find(segment);
  CARRIER_ASSERT(seg != segments_.end(), "message record in untracked segment {}", segment);
  auto [it, inserted] = live_.try_emplace(QueueMessageKey{queue, id}, segment);
  if (!inserted) {
    // The same key stored again while live: the newer record wins at recovery, and the older
    // segment must go first or its copy would come back once this one is deleted.
    const std::uint64_t older = it->second;
    auto old_seg = segments_.find(older);
    if (old_seg != segments_.end()) {
      CARRIER_DASSERT(old_seg->second.live > 0, "live count underflow in segment {}", older);
      if (--old_seg->second.live == 0) changed_ = true;
      if (older != segment) seg->second.depends_on.insert(older);
    }
    it->second = segment;
  }
  ++seg->second.live;
}

std::uint64_t SegmentReclaimer::on_ack(std::uint64_t segment, const std::string& queue,
                                       core::MessageId id) {
  auto it = live_.find(QueueMessageKey{queue, id});
  if (it == live_.end()) return 0;
  const std::uint64_t holder = it->second;
  live_.erase(it);
  auto held = segments_.find(holder);
  if (held != segments_.end()) {
    CARRIER_DASSERT(held->second.live > 0, "live count underflow in segment {}", holder);
    if (--held->second.live == 0) changed_ = true;
  }
  if (holder != segment) {
    auto seg = segments_.find(segment);
    CARRIER_ASSERT(seg != segments_.end(), "ack record in untracked segment {}", segment);
    seg->second.depends_on.insert(holder);
  }
  return holder;
}

std::vector<std::uint64_t> SegmentReclaimer::deletable(std::uint64_t active) const {
  std::vector<std::uint64_t> out;
  for (const auto& [id, state] : segments_) {
    if (id == active || state.live != 0) continue;
    bool blocked = false;
    for (std::uint64_t dep : state.depends_on) {
      if (segments_.count(dep) != 0) {
        blocked = true;
        break;
      }
    }
    if (!blocked) out.push_back(id);
  }
  return out;
}

void SegmentReclaimer::forget(std::uint64_t segment) {
  auto it = segments_.find(segment);
  if (it == segments_.end()) return;
  CARRIER_ASSERT(it->second.live == 0, "forgetting segment {} with {} live messages", segment,
                 it->second.live);
  segments_.erase(it);
  changed_ = true;
}

std::size_t SegmentReclaimer::live_in(std::uint64_t segment) const {
  auto it = segments_.find(segment);
  return it == segments_.end() ? 0 : it->second.live;
}

}  // namespace carrier::store::log
