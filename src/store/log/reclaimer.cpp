#include "store/log/reclaimer.hpp"

#include "base/assert.hpp"

namespace carrier::store::log {

bool SegmentReclaimer::can_track(std::uint64_t id) const {
  if (base_ == 0) return id != 0 && id < UINT64_MAX;
  return id >= base_ && id - base_ < UINT32_MAX - 1;
}

void SegmentReclaimer::add_segment(std::uint64_t id) {
  CARRIER_ASSERT(can_track(id), "segment {} outside the reclaimer's range (first segment {})", id, base_);
  if (base_ == 0) base_ = id;
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

void SegmentReclaimer::on_message(std::uint64_t segment, std::string_view queue, model::MessageId id) {
  auto seg = segments_.find(segment);
  CARRIER_ASSERT(seg != segments_.end(), "message record in untracked segment {}", segment);
  const std::uint32_t q = queues_.intern(queue);
  auto [m, inserted] = live_.try_emplace(q, id);
  if (inserted) {
    queues_.retain(q);
  } else {
    // The same key stored again while live: the newer record wins at recovery (with a fresh
    // delivery count), and the older segment must go first or its copy would come back once
    // this one is deleted.
    const std::uint64_t old_segment = segment_of(m->segment);
    release(old_segment);
    if (m->delivered_in != 0) release(segment_of(m->delivered_in));
    if (old_segment != segment) seg->second.depends_on.insert(old_segment);
  }
  *m = LiveMessage{number(segment), 0};
  ++seg->second.live;
}

std::uint64_t SegmentReclaimer::on_ack(std::uint64_t segment, std::string_view queue, model::MessageId id) {
  const auto q = queues_.find(queue);
  if (!q) return 0;
  const LiveMessage* m = live_.find(*q, id);
  if (m == nullptr) return 0;
  const LiveMessage gone = *m;
  live_.erase(*q, id);
  queues_.release(*q);
  const std::uint64_t gone_segment = segment_of(gone.segment);
  release(gone_segment);
  if (gone.delivered_in != 0) release(segment_of(gone.delivered_in));
  if (gone_segment != segment) {
    auto seg = segments_.find(segment);
    CARRIER_ASSERT(seg != segments_.end(), "ack record in untracked segment {}", segment);
    seg->second.depends_on.insert(gone_segment);
  }
  return gone_segment;
}

void SegmentReclaimer::on_delivered(std::uint64_t segment, std::string_view queue, model::MessageId id) {
  const auto q = queues_.find(queue);
  if (!q) return;  // dangling hint
  LiveMessage* m = live_.find(*q, id);
  if (m == nullptr) return;
  auto seg = segments_.find(segment);
  CARRIER_ASSERT(seg != segments_.end(), "delivered record in untracked segment {}", segment);
  // Pin the newer one before releasing the older: they may be the same segment.
  ++seg->second.live;
  if (m->delivered_in != 0) release(segment_of(m->delivered_in));
  m->delivered_in = number(segment);
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
  CARRIER_ASSERT(it->second.live == 0, "forgetting segment {} with {} live entries", segment, it->second.live);
  segments_.erase(it);
  changed_ = true;
}

bool SegmentReclaimer::live_at(std::string_view queue, model::MessageId id, std::uint64_t segment) const {
  const auto q = queues_.find(queue);
  if (!q) return false;
  const LiveMessage* m = live_.find(*q, id);
  return m != nullptr && segment >= base_ && segment_of(m->segment) == segment;
}

void SegmentReclaimer::check_live(std::string_view queue, std::uint64_t segment,
                                  const std::vector<model::MessageId>& ids, const std::vector<bool>& skip,
                                  std::vector<bool>& live, std::vector<std::uint64_t>& delivered_in) const {
  live.assign(ids.size(), false);
  delivered_in.assign(ids.size(), 0);
  const auto q = queues_.find(queue);
  if (!q || segment < base_) return;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i < skip.size() && skip[i]) continue;
    const LiveMessage* m = live_.find(*q, ids[i]);
    if (m == nullptr || segment_of(m->segment) != segment) continue;
    live[i] = true;
    if (m->delivered_in != 0) delivered_in[i] = segment_of(m->delivered_in);
  }
}

std::uint64_t SegmentReclaimer::first_segment_from(std::uint64_t id) const {
  auto it = segments_.lower_bound(id);
  return it == segments_.end() ? 0 : it->first;
}

std::size_t SegmentReclaimer::live_in(std::uint64_t segment) const {
  auto it = segments_.find(segment);
  return it == segments_.end() ? 0 : it->second.live;
}

}  // namespace carrier::store::log
