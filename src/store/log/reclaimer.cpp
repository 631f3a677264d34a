#include "store/log/reclaimer.hpp"

#include "base/assert.hpp"

namespace carrier::store::log {

void SegmentReclaimer::add_segment(std::uint64_t id) {
  segments_.try_emplace(id);
  changed_ = true;
}

void SegmentReclaimer::apply(std::uint64_t segment, const Batch& batch) {
  for (const Record& r : batch) {
    switch (r.kind) {
      case RecordKind::message: on_message(segment, r.queue, r.message_id); break;
      case RecordKind::ack: on_ack(segment, r.queue, r.message_id); break;
      case RecordKind::delivered: on_delivered(segment, r.queue, r.message_id); break;
    }
  }
}

void SegmentReclaimer::release(std::uint64_t segment) {
  auto it = segments_.find(segment);
  CARRIER_ASSERT(it != segments_.end(), "live entry in untracked segment {}", segment);
  CARRIER_ASSERT(it->second.live > 0, "live count underflow in segment {}", segment);
  if (--it->second.live == 0) changed_ = true;
}

void SegmentReclaimer::on_message(std::uint64_t segment, const std::string& queue,
                                  model::MessageId id) {
  auto seg = segments_.find(segment);
  CARRIER_ASSERT(seg != segments_.end(), "message record in untracked segment {}", segment);
  auto [it, inserted] = live_.try_emplace(QueueMessageKey{queue, id});
  if (!inserted) {
    // The same key stored again while live: the newer record wins at recovery (with a fresh
    // delivery count), and the older segment must go first or its copy would come back once
    // this one is deleted.
    LiveMessage& old = it->second;
    release(old.segment);
    if (old.delivered_in != 0) release(old.delivered_in);
    if (old.segment != segment) seg->second.depends_on.insert(old.segment);
  }
  it->second = LiveMessage{segment, 0};
  ++seg->second.live;
}

std::uint64_t SegmentReclaimer::on_ack(std::uint64_t segment, const std::string& queue,
                                       model::MessageId id) {
  auto it = live_.find(QueueMessageKey{queue, id});
  if (it == live_.end()) return 0;
  const LiveMessage gone = it->second;
  live_.erase(it);
  release(gone.segment);
  if (gone.delivered_in != 0) release(gone.delivered_in);
  if (gone.segment != segment) {
    auto seg = segments_.find(segment);
    CARRIER_ASSERT(seg != segments_.end(), "ack record in untracked segment {}", segment);
    seg->second.depends_on.insert(gone.segment);
  }
  return gone.segment;
}

void SegmentReclaimer::on_delivered(std::uint64_t segment, const std::string& queue,
                                    model::MessageId id) {
  auto it = live_.find(QueueMessageKey{queue, id});
  if (it == live_.end()) return;  // dangling hint
  auto seg = segments_.find(segment);
  CARRIER_ASSERT(seg != segments_.end(), "delivered record in untracked segment {}", segment);
  LiveMessage& m = it->second;
  // Pin the newer one before releasing the older: they may be the same segment.
  ++seg->second.live;
  if (m.delivered_in != 0) release(m.delivered_in);
  m.delivered_in = segment;
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
  CARRIER_ASSERT(it->second.live == 0, "forgetting segment {} with {} live entries", segment,
                 it->second.live);
  segments_.erase(it);
  changed_ = true;
}

bool SegmentReclaimer::live_at(const std::string& queue, model::MessageId id, std::uint64_t segment) const {
  auto it = live_.find(QueueMessageKey{queue, id});
  return it != live_.end() && it->second.segment == segment;
}

std::size_t SegmentReclaimer::live_in(std::uint64_t segment) const {
  auto it = segments_.find(segment);
  return it == segments_.end() ? 0 : it->second.live;
}

}  // namespace carrier::store::log
