#include "store/log/reclaimer.hpp"

#include <algorithm>
#include <bit>

#include "base/assert.hpp"
#include "store/log/segment_index_codec.hpp"

namespace carrier::store::log {

void SegmentReclaimer::classify(std::function<bool(std::string_view queue)> summary_only) {
  CARRIER_ASSERT(live_.empty() && bit_only_total_ == 0, "classify() after records were applied");
  summary_only_ = std::move(summary_only);
}

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

void SegmentReclaimer::set_segment_bytes(std::uint64_t segment, std::uint64_t bytes) {
  auto it = segments_.find(segment);
  if (it != segments_.end()) it->second.bytes = std::max(it->second.bytes, bytes);
}

SegmentReclaimer::SegmentState& SegmentReclaimer::state_of(std::uint64_t segment, const char* what) {
  auto it = segments_.find(segment);
  CARRIER_ASSERT(it != segments_.end(), "{} record in untracked segment {}", what, segment);
  return it->second;
}

bool SegmentReclaimer::apply(std::uint64_t segment, std::uint64_t offset, std::uint64_t end, const Batch& batch) {
  bool unresolved = false;
  for (const Record& r : batch) {
    switch (r.kind) {
      case RecordKind::message: {
        MessageSummary s;
        if (r.message) s = summarize(*r.message);
        s.id = r.message_id;
        on_message(segment, offset, r.queue, s);
        break;
      }
      case RecordKind::ack: unresolved |= on_ack(segment, r.queue, r.message_id, r.stored).unresolved; break;
      case RecordKind::delivered:
        unresolved |= on_delivered(segment, r.queue, r.message_id, r.delivery_count, r.stored).unresolved;
        break;
    }
  }
  if (end != 0) set_segment_bytes(segment, end);
  return unresolved;
}

void SegmentReclaimer::release(std::uint64_t segment) {
  auto it = segments_.find(segment);
  CARRIER_ASSERT(it != segments_.end(), "live entry in untracked segment {}", segment);
  CARRIER_ASSERT(it->second.live > 0, "live count underflow in segment {}", segment);
  if (--it->second.live == 0) changed_ = true;
}

bool SegmentReclaimer::test_bit(const SegmentState& s, std::uint32_t ordinal) const {
  const std::size_t word = ordinal / 64;
  return word < s.bits.size() && (s.bits[word] >> (ordinal % 64) & 1) != 0;
}

void SegmentReclaimer::set_bit(SegmentState& s, std::uint32_t ordinal) {
  const std::size_t word = ordinal / 64;
  if (word >= s.bits.size()) s.bits.resize(word + 1, 0);
  s.bits[word] |= std::uint64_t{1} << (ordinal % 64);
}

bool SegmentReclaimer::clear_bit(SegmentState& s, std::uint32_t ordinal) {
  if (!test_bit(s, ordinal)) return false;
  s.bits[ordinal / 64] &= ~(std::uint64_t{1} << (ordinal % 64));
  return true;
}

SegmentReclaimer::Kind SegmentReclaimer::kind_for(std::uint32_t queue, const MessageSummary& summary) {
  if (!summary_only_) return Kind::plain;
  // Scheduled messages come back one by one: a scan skips those not yet due, so a tail would
  // lose them.
  if (summary.deliver_at_ms != 0 || !summary_only_(queues_.name(queue))) return Kind::listed;
  return Kind::lane;
}

void SegmentReclaimer::lane_add(std::uint32_t queue, std::uint8_t priority, std::uint64_t footprint,
                                const Location& at) {
  auto [it, made] = lanes_.try_emplace(LaneKey{queue, priority});
  if (made) queues_.retain(queue);
  Lane& lane = it->second;
  if (lane.count == 0 || at < lane.from) lane.from = at;
  ++lane.count;
  lane.bytes += footprint;
}

void SegmentReclaimer::lane_remove(std::uint32_t queue, std::uint8_t priority, std::uint64_t footprint,
                                   bool known_footprint) {
  auto it = lanes_.find(LaneKey{queue, priority});
  if (it == lanes_.end()) return;
  Lane& lane = it->second;
  // Without the footprint (an ack naming only queue and id), the lane's average: bytes are an
  // estimate (RecoveredTail says so); the count stays exact.
  const std::uint64_t take = known_footprint ? footprint : (lane.count ? lane.bytes / lane.count : 0);
  lane.bytes -= std::min(lane.bytes, take);
  if (--lane.count == 0) {
    lanes_.erase(it);
    queues_.release(queue);
  }
}

bool SegmentReclaimer::has_bit_only(std::uint32_t queue) const {
  auto it = bit_only_.find(queue);
  return it != bit_only_.end() && it->second > 0;
}

void SegmentReclaimer::remove_copy(std::uint32_t queue, std::uint32_t number, std::uint32_t ordinal,
                                   std::uint8_t priority, Kind kind, std::uint32_t footprint, bool known_footprint) {
  const std::uint64_t segment = segment_of(number);
  SegmentState& s = state_of(segment, "live");
  // Released only if its bit was set: a StoredRef naming the wrong copy must not make a live
  // count underflow (that copy just stays live, and a full replay sorts it out).
  if (clear_bit(s, ordinal)) release(segment);
  const std::uint64_t key = position_key(number, ordinal);
  if (auto d = delivered_in_.find(key); d != delivered_in_.end()) {
    release(segment_of(d->second));
    delivered_in_.erase(d);
  }
  switch (kind) {
    case Kind::plain: break;
    case Kind::lane: lane_remove(queue, priority, footprint, known_footprint); break;
    case Kind::listed: listed_.erase(key); break;
    case Kind::spilled:
      if (const std::size_t word = ordinal / 64; word < s.spilled.size()) {
        s.spilled[word] &= ~(std::uint64_t{1} << (ordinal % 64));
        --s.spilled_live;
      }
      break;
  }
}

std::uint32_t SegmentReclaimer::on_message(std::uint64_t segment, std::string_view queue, model::MessageId id) {
  MessageSummary s;
  s.id = id;
  return on_message(segment, 0, queue, s);
}

std::uint32_t SegmentReclaimer::on_message(std::uint64_t segment, std::uint64_t offset, std::string_view queue,
                                           const MessageSummary& summary) {
  SegmentState& seg = state_of(segment, "message");
  const std::uint32_t ordinal = next_ordinal(seg);
  const std::uint32_t q = queues_.intern(queue);
  auto [m, inserted] = live_.try_emplace(q, summary.id);
  if (inserted) {
    queues_.retain(q);
  } else {
    // The same key stored again while live: the newer record wins at recovery (with a fresh
    // delivery count), and the older segment must go first or its copy would come back once
    // this one is deleted. (A copy known by bit only is not in the table: the caller acks it
    // by its StoredRef before storing the key again.)
    const LiveMessage old = *m;
    const std::uint64_t old_segment = segment_of(old.segment);
    remove_copy(q, old.segment, old.ordinal, old.priority, old.kind, 0, false);
    if (old_segment != segment) seg.depends_on.insert(old_segment);
    m = live_.find(q, summary.id);
  }
  const Kind kind = summary.spilled ? Kind::spilled : kind_for(q, summary);
  *m = LiveMessage{number(segment), ordinal, summary.priority, kind};
  set_bit(seg, ordinal);
  ++seg.live;
  if (kind == Kind::spilled) {
    if (ordinal / 64 >= seg.spilled.size()) seg.spilled.resize(ordinal / 64 + 1, 0);
    seg.spilled[ordinal / 64] |= std::uint64_t{1} << (ordinal % 64);
    ++seg.spilled_live;
  }
  const Location at{segment, static_cast<std::uint32_t>(std::min<std::uint64_t>(offset, UINT32_MAX)), ordinal};
  if (kind == Kind::lane) lane_add(q, summary.priority, summary.footprint, at);
  if (kind == Kind::listed) listed_[position_key(number(segment), ordinal)] = Listed{q, offset, 0, summary};
  return ordinal;
}

SegmentReclaimer::Applied SegmentReclaimer::on_ack(std::uint64_t segment, std::string_view queue, model::MessageId id,
                                                   const StoredRef& at) {
  SegmentState& seg = state_of(segment, "ack");
  (void)next_ordinal(seg);
  const auto q = queues_.find(queue);
  LiveMessage* m = q ? live_.find(*q, id) : nullptr;
  const bool same_copy = m != nullptr && (!at.known() || (at.location.file == segment_of(m->segment) &&
                                                          at.location.record == m->ordinal));
  std::uint64_t gone_segment = 0;
  if (same_copy) {
    const LiveMessage gone = *m;
    live_.erase(*q, id);
    gone_segment = segment_of(gone.segment);
    remove_copy(*q, gone.segment, gone.ordinal, gone.priority, gone.kind, at.footprint, at.known());
    queues_.release(*q);
  } else if (at.known()) {
    // A copy known by its position only (recovered from a checkpoint).
    const std::uint64_t file = at.location.file;
    auto it = segments_.find(file);
    if (!q || it == segments_.end() || file < base_ || !test_bit(it->second, at.location.record)) return {};
    auto b = bit_only_.find(*q);
    if (b == bit_only_.end() || b->second == 0) return {};  // not this queue's: never ours to clear
    if (--b->second == 0) bit_only_.erase(b);
    --bit_only_total_;
    gone_segment = file;
    remove_copy(*q, number(file), at.location.record, at.priority, Kind::lane, at.footprint, true);
  } else {
    return Applied{0, q && has_bit_only(*q)};
  }
  if (gone_segment != segment) seg.depends_on.insert(gone_segment);
  return Applied{gone_segment, false};
}

SegmentReclaimer::Applied SegmentReclaimer::on_delivered(std::uint64_t segment, std::string_view queue,
                                                         model::MessageId id, std::uint32_t count,
                                                         const StoredRef& at) {
  SegmentState& seg = state_of(segment, "delivered");
  (void)next_ordinal(seg);
  const auto q = queues_.find(queue);
  if (!q) return {};  // dangling hint
  const LiveMessage* m = live_.find(*q, id);
  std::uint32_t number_of = 0, ordinal = 0;
  if (m != nullptr && (!at.known() || (at.location.file == segment_of(m->segment) && at.location.record == m->ordinal))) {
    number_of = m->segment;
    ordinal = m->ordinal;
  } else if (at.known()) {
    auto it = segments_.find(at.location.file);
    if (it == segments_.end() || at.location.file < base_ || !test_bit(it->second, at.location.record) ||
        !has_bit_only(*q)) {
      return {};
    }
    number_of = number(at.location.file);
    ordinal = at.location.record;
  } else {
    return Applied{0, has_bit_only(*q)};
  }
  // Pin the newer one before releasing the older: they may be the same segment.
  ++seg.live;
  const std::uint64_t key = position_key(number_of, ordinal);
  auto [d, made] = delivered_in_.try_emplace(key, number(segment));
  if (!made) {
    release(segment_of(d->second));
    d->second = number(segment);
  }
  if (auto l = listed_.find(key); l != listed_.end()) l->second.delivery_count = count;
  return {};
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

bool SegmentReclaimer::live_at(std::uint64_t segment, std::uint32_t ordinal) const {
  auto it = segments_.find(segment);
  return it != segments_.end() && test_bit(it->second, ordinal);
}

bool SegmentReclaimer::live_at(const Location& location) const { return live_at(location.file, location.record); }

void SegmentReclaimer::check_live(std::uint64_t segment, const std::vector<std::uint32_t>& ordinals,
                                  const std::vector<bool>& skip, std::vector<bool>& live,
                                  std::vector<std::uint64_t>& delivered_in) const {
  live.assign(ordinals.size(), false);
  delivered_in.assign(ordinals.size(), 0);
  auto it = segments_.find(segment);
  if (it == segments_.end()) return;
  for (std::size_t i = 0; i < ordinals.size(); ++i) {
    if (i < skip.size() && skip[i]) continue;
    if (!test_bit(it->second, ordinals[i])) continue;
    live[i] = true;
    if (auto d = delivered_in_.find(position_key(number(segment), ordinals[i])); d != delivered_in_.end()) {
      delivered_in[i] = segment_of(d->second);
    }
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

std::uint32_t SegmentReclaimer::records_in(std::uint64_t segment) const {
  auto it = segments_.find(segment);
  return it == segments_.end() ? 0 : it->second.records;
}

LiveSetCheckpoint SegmentReclaimer::checkpoint(std::uint64_t covered_segment, std::uint64_t covered_bytes) const {
  LiveSetCheckpoint c;
  c.covered_segment = covered_segment;
  c.covered_bytes = covered_bytes;
  // Queue names by the checkpoint's own numbering.
  std::unordered_map<std::uint32_t, std::uint32_t> renumbered;
  auto queue_number = [&](std::uint32_t q) {
    auto [it, made] = renumbered.try_emplace(q, static_cast<std::uint32_t>(c.queues.size()));
    if (made) c.queues.push_back(queues_.name(q));
    return it->second;
  };
  c.segments.reserve(segments_.size());
  for (const auto& [id, s] : segments_) {
    LiveSetCheckpoint::Segment out;
    out.id = id;
    out.bytes = id == covered_segment ? covered_bytes : s.bytes;
    out.records = s.records;
    // Spilled messages are dead after a restart: not in what one loads.
    out.live = s.live - s.spilled_live;
    out.depends_on.assign(s.depends_on.begin(), s.depends_on.end());
    out.bits = s.bits;
    for (std::size_t w = 0; w < s.spilled.size() && w < out.bits.size(); ++w) out.bits[w] &= ~s.spilled[w];
    while (!out.bits.empty() && out.bits.back() == 0) out.bits.pop_back();
    c.segments.push_back(std::move(out));
  }
  for (const auto& [key, lane] : lanes_) {
    c.lanes.push_back(LiveSetCheckpoint::Lane{queue_number(key.first), key.second, lane.count, lane.bytes, lane.from});
  }
  c.delivered.reserve(delivered_in_.size());
  for (const auto& [key, in] : delivered_in_) {
    c.delivered.push_back({segment_of(static_cast<std::uint32_t>(key >> 32)), static_cast<std::uint32_t>(key),
                           segment_of(in)});
  }
  for (const auto& [key, m] : listed_) {
    LiveSetCheckpoint::Listed out;
    out.queue = queue_number(m.queue);
    out.location = Location{segment_of(static_cast<std::uint32_t>(key >> 32)),
                            static_cast<std::uint32_t>(std::min<std::uint64_t>(m.offset, UINT32_MAX)),
                            static_cast<std::uint32_t>(key)};
    out.delivery_count = m.delivery_count;
    out.summary = m.summary;
    c.listed.push_back(out);
  }
  std::sort(c.listed.begin(), c.listed.end(), [](const auto& a, const auto& b) { return a.location < b.location; });
  return c;
}

void SegmentReclaimer::load(const LiveSetCheckpoint& c) {
  CARRIER_ASSERT(segments_.empty() && live_.empty(), "load() into a reclaimer in use");
  CARRIER_ASSERT(classifies(), "load() needs classify() first");
  for (const auto& s : c.segments) {
    add_segment(s.id);
    SegmentState& st = segments_[s.id];
    st.live = s.live;
    st.records = s.records;
    st.bytes = s.bytes;
    st.depends_on.insert(s.depends_on.begin(), s.depends_on.end());
    st.bits = s.bits;
  }
  std::vector<std::uint32_t> q(c.queues.size());
  for (std::size_t i = 0; i < c.queues.size(); ++i) q[i] = queues_.intern(c.queues[i]);
  for (const auto& l : c.lanes) {
    queues_.retain(q[l.queue]);
    lanes_[LaneKey{q[l.queue], l.priority}] = Lane{l.count, l.bytes, l.from};
    bit_only_[q[l.queue]] += l.count;
    bit_only_total_ += l.count;
  }
  for (const auto& d : c.delivered) {
    if (!tracks(d.segment) || !tracks(d.delivered_in)) continue;
    delivered_in_[position_key(number(d.segment), d.ordinal)] = number(d.delivered_in);
  }
  for (const auto& m : c.listed) {
    if (!tracks(m.location.file)) continue;
    const std::uint32_t queue = q[m.queue];
    auto [entry, inserted] = live_.try_emplace(queue, m.summary.id);
    if (inserted) queues_.retain(queue);
    *entry = LiveMessage{number(m.location.file), m.location.record, m.summary.priority, Kind::listed};
    listed_[position_key(number(m.location.file), m.location.record)] =
        Listed{queue, m.location.offset, m.delivery_count, m.summary};
  }
  // Names interned for nothing (a queue whose lanes and listings all went) are not kept.
  for (std::size_t i = 0; i < c.queues.size(); ++i) {
    if (!queues_.find(c.queues[i])) continue;
    queues_.retain(q[i]);
    queues_.release(q[i]);
  }
  changed_ = true;
}

}  // namespace carrier::store::log
