#include "core/queue.hpp"

#include <algorithm>
#include <limits>

#include "selector/selector.hpp"

namespace carrier::core {

using model::Message;
using model::MessagePtr;

namespace {
// Paged entries expire from their summary, without being read back.
bool expired(const Queue::Entry& e, std::int64_t now_ms) {
  const auto at = e.expires_ms();
  return at != 0 && at <= now_ms;
}
}  // namespace

Queue::Lane& Queue::lane_for(std::size_t priority) {
  auto& slot = ready_[priority];
  if (!slot) slot = std::make_unique<Lane>();
  return *slot;
}

void Queue::enqueue(MessagePtr message) {
  Entry e;
  e.message = std::move(message);
  e.seq = next_seq_++;
  if (e.message->stored() && holding(e.priority())) {
    // Behind a cold tail: out of dispatch until it is located and joins the tail.
    ++held_count_;
    held_bytes_ += e.footprint();
    cold_for(e.priority()).held.push_back(std::move(e));
    return;
  }
  push_back_ready(std::move(e));
}

void Queue::restore(MessagePtr message, std::uint32_t delivery_count) {
  Entry e;
  e.message = std::move(message);
  e.seq = next_seq_++;
  e.delivery_count = delivery_count;
  e.redelivered = delivery_count > 0;
  if (e.message->stored() && holding(e.priority())) {
    ++held_count_;
    held_bytes_ += e.footprint();
    cold_for(e.priority()).held.push_back(std::move(e));
    return;
  }
  push_back_ready(std::move(e));
}

void Queue::restore_paged(const store::MessageSummary& summary, store::Location location, std::uint32_t delivery_count) {
  Entry e;
  e.paged = std::make_unique<Paged>(Paged{summary, location, false});
  e.seq = next_seq_++;
  e.delivery_count = delivery_count;
  e.redelivered = delivery_count > 0;
  push_back_ready(std::move(e));
}

void Queue::requeue(Entry entry) { push_ready(std::move(entry)); }

void Queue::push_back_ready(Entry entry) {
  note_expiry(entry);
  ready_bytes_ += entry.footprint();
  ++ready_count_;
  if (entry.is_paged()) ++paged_count_;
  lane_for(entry.priority()).push_back(std::move(entry));
}

void Queue::push_ready(Entry entry) {
  const std::size_t p = entry.priority();
  auto& lane = lane_for(p);
  auto pos = std::lower_bound(lane.begin(), lane.end(), entry.seq,
                              [](const Entry& e, std::uint64_t seq) { return e.seq < seq; });
  note_expiry(entry);
  ready_bytes_ += entry.footprint();
  ++ready_count_;
  if (entry.is_paged()) ++paged_count_;
  // Consumers that refused what was around it have not seen this one (or saw it before a
  // consumer that has since left took it): they are offered it again.
  for (auto& held : consumers_) {
    auto& c = *held;
    if (!c.ref.selector || entry.seq >= c.refused_below[p]) continue;
    if (c.returned.size() < ConsumerState::kMaxReturned) {
      c.returned.push_back({p, entry.seq});
    } else {
      c.refused_below[p] = entry.seq;
    }
  }
  lane.insert(pos, std::move(entry));
}

Queue::ConsumerState* Queue::find(ConsumerId id) {
  for (auto& c : consumers_) {
    if (c->ref.id == id) return c.get();
  }
  return nullptr;
}

bool Queue::has_consumer(ConsumerId id) const {
  return std::any_of(consumers_.begin(), consumers_.end(), [id](const auto& c) { return c->ref.id == id; });
}

void Queue::pause_consumer(ConsumerId id) {
  if (auto* c = find(id)) c->ref.prefetch = 0;
}

void Queue::add_consumer(ConsumerRef consumer) {
  if (consumer.prefetch == 0) consumer.prefetch = 1;
  if (consumer.selector) ++selective_consumers_;
  consumers_.push_back(std::make_unique<ConsumerState>(ConsumerState{std::move(consumer), 1, {}}));
}

std::vector<Queue::Entry> Queue::remove_consumer(ConsumerId id, bool* found) {
  std::vector<Entry> returned;
  auto it = std::find_if(consumers_.begin(), consumers_.end(), [id](const auto& c) { return c->ref.id == id; });
  if (found != nullptr) *found = it != consumers_.end();
  if (it == consumers_.end()) return returned;
  returned = (*it)->unacked.take_all();
  for (auto& entry : returned) entry.redelivered = true;
  std::sort(returned.begin(), returned.end(), [](const Entry& a, const Entry& b) { return a.seq < b.seq; });
  if ((*it)->ref.selector) --selective_consumers_;
  const auto index = static_cast<std::size_t>(it - consumers_.begin());
  consumers_.erase(it);
  if (round_robin_ > index) --round_robin_;
  if (round_robin_ >= consumers_.size()) round_robin_ = 0;
  return returned;
}

Queue::Outcome Queue::ack(ConsumerId id, std::span<const std::uint64_t> tags) {
  Outcome out;
  auto* c = find(id);
  if (c == nullptr) {
    out.unknown_tags = tags.size();
    return out;
  }
  for (auto tag : tags) {
    auto entry = c->unacked.take(tag);
    if (!entry) {
      ++out.unknown_tags;
      continue;
    }
    out.removed.push_back(std::move(entry->message));
  }
  return out;
}

Queue::Outcome Queue::nack(ConsumerId id, std::span<const std::uint64_t> tags) {
  Outcome out;
  auto* c = find(id);
  if (c == nullptr) {
    out.unknown_tags = tags.size();
    return out;
  }
  for (auto tag : tags) {
    auto entry = c->unacked.take(tag);
    if (!entry) {
      ++out.unknown_tags;
      continue;
    }
    entry->redelivered = true;
    out.returned.push_back(std::move(*entry));
  }
  return out;
}

bool Queue::accepts(const ConsumerState& c, const Message& m) const {
  if (!c.ref.selector) return true;
  return matcher_ ? matcher_(*c.ref.selector, m) : selector::matches(*c.ref.selector, m);
}

bool Queue::any_credit() const {
  return std::any_of(consumers_.begin(), consumers_.end(), [](const auto& c) { return c->has_credit(); });
}

std::size_t Queue::choose(const Message& m) const {
  const std::size_t n = consumers_.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t idx = (round_robin_ + i) % n;
    if (consumers_[idx]->has_credit() && accepts(*consumers_[idx], m)) return idx;
  }
  return n;
}

void Queue::deliver_to(std::size_t idx, Entry e, std::vector<Dispatch>& out, std::vector<int>& batch_of) {
  round_robin_ = (idx + 1) % consumers_.size();
  auto& c = *consumers_[idx];
  if (batch_of[idx] < 0) {
    batch_of[idx] = static_cast<int>(out.size());
    out.push_back(Dispatch{c.ref, {}});
  }
  ++e.delivery_count;
  const std::uint64_t tag = c.next_tag++;
  out[static_cast<std::size_t>(batch_of[idx])].batch.push_back(Delivery{e.message, tag, e.delivery_count, e.redelivered});
  c.unacked.push(tag, std::move(e));
}

bool Queue::ConsumerState::refused(std::size_t lane, std::uint64_t seq) const {
  if (seq >= refused_below[lane]) return false;
  return std::none_of(returned.begin(), returned.end(),
                      [&](const Returned& r) { return r.lane == lane && r.seq == seq; });
}

std::size_t Queue::choose_selective(const Entry& e, std::size_t lane) const {
  const std::size_t n = consumers_.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t idx = (round_robin_ + i) % n;
    const auto& c = *consumers_[idx];
    if (!c.has_credit()) continue;
    if (c.ref.selector && c.refused(lane, e.seq)) continue;
    if (accepts(c, *e.message)) return idx;
  }
  return n;
}

std::vector<Queue::Dispatch> Queue::dispatch(std::int64_t now_ms, std::vector<Entry>& expired_out) {
  std::vector<Dispatch> out;
  if (consumers_.empty() || (ready_count_ == 0 && cold_count_ == 0)) return out;
  // One batch per consumer per call: the owner posts each batch to the consumer's shard once.
  std::vector<int> batch_of(consumers_.size(), -1);
  stalled_ = false;
  for (auto p = ready_.size(); p-- > 0 && (ready_count_ > 0 || cold_count_ > 0);) {
    if (ready_[p]) {
      if (selective_consumers_ == 0) {
        dispatch_lane(p, now_ms, expired_out, out, batch_of);
      } else {
        dispatch_lane_selective(p, now_ms, expired_out, out, batch_of);
      }
    }
    // Credit left after the lane's messages in memory: the rest of the lane is its cold tail,
    // which lower priorities wait behind too, until it is read back.
    if (!stalled_ && holding(p) && any_credit()) {
      stalled_ = true;
      stall_lane_ = p;
      stall_seq_ = std::numeric_limits<std::uint64_t>::max();
    }
    // Stopped at a paged entry: lower priorities wait with it, so none overtakes it while it is
    // read back.
    if (stalled_ || !any_credit()) break;
  }
  if (!out.empty()) last_activity_ms_ = now_ms;
  return out;
}

// No selectors: every consumer with credit takes the front message.
void Queue::dispatch_lane(std::size_t p, std::int64_t now_ms, std::vector<Entry>& expired_out,
                          std::vector<Dispatch>& out, std::vector<int>& batch_of) {
  auto& lane = *ready_[p];
  while (!lane.empty() && any_credit()) {
    Entry& front = lane.front();
    if (expired(front, now_ms)) {
      take_out(front);
      expired_out.push_back(std::move(front));
      lane.pop_front();
      continue;
    }
    if (front.is_paged()) {
      stalled_ = true;
      stall_lane_ = p;
      stall_seq_ = front.seq;
      break;
    }
    const std::size_t idx = choose(*front.message);
    if (idx == consumers_.size()) break;  // nobody has credit
    take_out(front);
    Entry e = std::move(front);
    lane.pop_front();
    deliver_to(idx, std::move(e), out, batch_of);
  }
}

// Some consumer has a selector: messages no consumer takes now keep their place, and each
// consumer's selector sees each entry once (refused_below, returned), so a backlog nobody
// matches costs nothing per send. Entries taken out leave holes, closed in one pass at the end.
void Queue::dispatch_lane_selective(std::size_t p, std::int64_t now_ms, std::vector<Entry>& expired_out,
                                    std::vector<Dispatch>& out, std::vector<int>& batch_of) {
  auto& lane = *ready_[p];
  const auto position = [&lane](std::uint64_t seq) {
    return static_cast<std::size_t>(
        std::lower_bound(lane.begin(), lane.end(), seq, [](const Entry& e, std::uint64_t s) { return e.seq < s; }) -
        lane.begin());
  };
  std::size_t first_hole = lane.size();
  // Offer entries in lane order, jumping over every stretch that all consumers with credit have
  // refused already: a backlog nobody matches is not walked at all.
  for (std::size_t i = position(next_unrefused(p, 0)); i < lane.size() && any_credit();) {
    const std::uint64_t seq = lane[i].seq;
    const Offered offered = offer(p, i, now_ms, expired_out, out, batch_of, first_hole);
    if (offered == Offered::taken) {
      ++i;
    } else if (offered == Offered::paged) {
      // Read back before any selector sees it; dispatch resumes here once it is.
      stalled_ = true;
      stall_lane_ = p;
      stall_seq_ = seq;
      break;
    } else {
      i = std::max(i + 1, position(next_unrefused(p, seq + 1)));
    }
  }
  // A consumer that still has credit had it all along (credit only shrinks here) and was offered
  // every entry of this lane it had not refused before: nothing of the lane is pending for it
  // (unless the walk stopped at a paged entry, short of the lane's end).
  for (auto& held : consumers_) {
    if (stalled_) break;
    auto& c = *held;
    if (!c.has_credit() || c.returned.empty()) continue;
    std::erase_if(c.returned, [p](const ConsumerState::Returned& r) { return r.lane == p; });
  }
  if (first_hole < lane.size()) {
    lane.erase(std::remove_if(lane.begin() + static_cast<std::ptrdiff_t>(first_hole), lane.end(),
                              [](const Entry& e) { return e.empty(); }),
               lane.end());
  }
}

std::uint64_t Queue::next_unrefused(std::size_t p, std::uint64_t from) const {
  std::uint64_t next = std::numeric_limits<std::uint64_t>::max();
  for (const auto& held : consumers_) {
    const auto& c = *held;
    if (!c.has_credit()) continue;
    if (!c.ref.selector) return from;
    next = std::min(next, std::max(from, c.refused_below[p]));
    for (const auto& r : c.returned) {
      if (r.lane == p && r.seq >= from) next = std::min(next, r.seq);
    }
  }
  return next;
}

Queue::Offered Queue::offer(std::size_t p, std::size_t i, std::int64_t now_ms, std::vector<Entry>& expired_out,
                            std::vector<Dispatch>& out, std::vector<int>& batch_of, std::size_t& first_hole) {
  Entry& e = (*ready_[p])[i];
  if (expired(e, now_ms)) {
    take_out(e);
    expired_out.push_back(std::move(e));
    first_hole = std::min(first_hole, i);
    return Offered::taken;
  }
  if (e.is_paged()) return Offered::paged;
  const std::size_t idx = choose_selective(e, p);
  if (idx == consumers_.size()) {
    // Every consumer with credit refused it (credit only shrinks during a dispatch, so each of
    // them also refused every entry it was offered since its refused_below).
    for (auto& held : consumers_) {
      auto& c = *held;
      if (c.has_credit() && c.ref.selector && c.refused_below[p] <= e.seq) c.refused_below[p] = e.seq + 1;
    }
    return Offered::refused;
  }
  take_out(e);
  deliver_to(idx, std::move(e), out, batch_of);
  first_hole = std::min(first_hole, i);
  return Offered::taken;
}

std::vector<Queue::Entry> Queue::take_expired(std::int64_t now_ms) {
  std::vector<Entry> out;
  // Nothing ready can have expired yet: the sweep (every second, on every queue) does not walk
  // a backlog of messages without expiry, which cost a shard a fifth of its time per million.
  if (now_ms < next_expiry_ms_) return out;
  next_expiry_ms_ = kNoExpiry;
  for (auto& slot : ready_) {
    if (!slot) continue;
    auto& lane = *slot;
    auto keep = std::stable_partition(lane.begin(), lane.end(),
                                      [now_ms](const Entry& e) { return !expired(e, now_ms); });
    for (auto it = keep; it != lane.end(); ++it) {
      take_out(*it);
      out.push_back(std::move(*it));
    }
    lane.erase(keep, lane.end());
    for (const auto& e : lane) note_expiry(e);
  }
  return out;
}

bool Queue::take_oldest(Entry& out) {
  for (std::size_t p = 0; p < ready_.size(); ++p) {
    auto& slot = ready_[p];
    if (!slot || slot->empty()) {
      // The lane is all cold: its oldest is the tail's first, dropped when read (out empty).
      if (holding(p) && drop_cold_one(p)) {
        out = Entry{};
        return true;
      }
      continue;
    }
    auto& lane = *slot;
    take_out(lane.front());
    out = std::move(lane.front());
    lane.pop_front();
    return true;
  }
  return false;
}

std::vector<Queue::Entry> Queue::take_all() {
  std::vector<Entry> out;
  for (auto& slot : ready_) {
    if (!slot) continue;
    for (auto& e : *slot) out.push_back(std::move(e));
    slot.reset();
  }
  for (auto& c : consumers_) {
    for (auto& e : c->unacked.take_all()) out.push_back(std::move(e));
  }
  if (cold_) {
    for (auto& t : *cold_) {
      for (auto& e : t.held) out.push_back(std::move(e));
    }
  }
  cold_.reset();
  cold_count_ = 0;
  cold_bytes_ = 0;
  held_count_ = 0;
  held_bytes_ = 0;
  ++cold_epoch_;
  ready_count_ = 0;
  paged_count_ = 0;
  stalled_ = false;
  next_expiry_ms_ = kNoExpiry;
  ready_bytes_ = 0;
  return out;
}

void Queue::for_each(const std::function<void(const Entry&)>& visit) const {
  for (const auto& slot : ready_) {
    if (!slot) continue;
    for (const auto& e : *slot) visit(e);
  }
  for (const auto& c : consumers_) {
    c->unacked.for_each(visit);
  }
}

std::size_t Queue::unacked() const {
  std::size_t n = 0;
  for (const auto& c : consumers_) n += c->unacked.size();
  return n;
}

std::int64_t Queue::oldest_ready_timestamp_ms() const {
  const Entry* first = nullptr;
  for (const auto& lane : ready_) {
    if (lane && !lane->empty() && (first == nullptr || lane->front().seq < first->seq)) first = &lane->front();
  }
  std::int64_t oldest = first != nullptr ? first->timestamp_ms() : 0;
  // A lane with nothing in memory ahead of its cold tail: the tail's estimate.
  for (std::size_t p = 0; cold_ && p < ready_.size(); ++p) {
    const auto& t = (*cold_)[p];
    if (t.count == 0 || t.oldest_ms == 0 || (ready_[p] && !ready_[p]->empty())) continue;
    if (oldest == 0 || t.oldest_ms < oldest) oldest = t.oldest_ms;
  }
  return oldest;
}

Queue::Entry* Queue::find_ready(std::size_t lane, std::uint64_t seq) {
  if (lane >= ready_.size() || !ready_[lane]) return nullptr;
  auto& l = *ready_[lane];
  auto it = std::lower_bound(l.begin(), l.end(), seq, [](const Entry& e, std::uint64_t s) { return e.seq < s; });
  return it != l.end() && it->seq == seq ? &*it : nullptr;
}

MessagePtr Queue::page(Entry& e, store::Location at) {
  const Message& m = *e.message;
  auto paged = std::make_unique<Paged>();
  paged->summary = store::MessageSummary{m.id,           m.priority,    m.persistent,
                                         m.timestamp_ms, m.expires_ms,  m.deliver_at_ms,
                                         static_cast<std::uint32_t>(std::min<std::size_t>(m.footprint(), UINT32_MAX)),
                                         m.spilled};
  paged->location = at;
  // ready_bytes_ keeps counting the footprint: the summary says what the message weighs.
  ready_bytes_ -= m.footprint();
  ready_bytes_ += paged->summary.footprint;
  e.paged = std::move(paged);
  ++paged_count_;
  return std::move(e.message);
}

std::vector<MessagePtr> Queue::page_out(std::size_t keep_head, const Locator& where,
                                        const Enough& enough) {
  std::vector<MessagePtr> out;
  if (paged_count_ == ready_count_) return out;
  // ahead[p]: ready entries of higher priorities, which dispatch offers before lane p's.
  std::array<std::size_t, 10> ahead{};
  std::size_t total = 0;
  for (auto p = ready_.size(); p-- > 0;) {
    ahead[p] = total;
    if (ready_[p]) total += ready_[p]->size();
  }
  for (std::size_t p = 0; p < ready_.size(); ++p) {
    if (!ready_[p]) continue;
    auto& lane = *ready_[p];
    for (std::size_t i = lane.size(); i-- > 0;) {
      if (ahead[p] + i < keep_head) break;
      Entry& e = lane[i];
      // Everything before it was paged by an earlier call, or arrived since the head was read
      // back: either way not this walk's to visit again.
      if (e.is_paged()) break;
      if (!e.message->stored()) continue;
      const auto at = where(*e.message);
      if (!at.valid()) continue;  // not durable yet: a later call pages it
      out.push_back(page(e, at));
      if (enough(*out.back())) return out;
    }
  }
  return out;
}

std::vector<MessagePtr> Queue::page_out_again(std::span<const PageRead> entries, std::size_t keep_head,
                                              const Locator& where, const Enough& enough) {
  std::vector<MessagePtr> out;
  for (const auto& r : entries) {
    if (r.lane >= ready_.size() || !ready_[r.lane]) continue;
    auto& lane = *ready_[r.lane];
    auto it = std::lower_bound(lane.begin(), lane.end(), r.seq, [](const Entry& e, std::uint64_t s) { return e.seq < s; });
    if (it == lane.end() || it->seq != r.seq || it->is_paged() || !it->message->stored()) continue;
    std::size_t ahead = static_cast<std::size_t>(it - lane.begin());
    for (auto p = ready_.size(); p-- > r.lane + 1;) ahead += ready_[p] ? ready_[p]->size() : 0;
    if (ahead < keep_head) continue;
    const auto at = where(*it->message);
    if (!at.valid()) continue;
    out.push_back(page(*it, at));
    if (enough(*out.back())) break;
  }
  return out;
}

std::vector<Queue::PageRead> Queue::read_ahead(std::size_t window) {
  std::vector<PageRead> out;
  if (paged_count_ == 0 || reading_ || consumers_.empty() || window == 0) return out;
  // Up to `window` paged entries of lane p from index `from` on; the scan is bounded too.
  const auto collect = [&](std::size_t p, std::size_t from) {
    auto& lane = *ready_[p];
    for (std::size_t i = from; i < lane.size() && i < from + 2 * window && out.size() < window; ++i) {
      Entry& e = lane[i];
      if (!e.is_paged() || e.paged->reading) continue;
      e.paged->reading = true;
      out.push_back(PageRead{p, e.seq, store::ReadItem{e.paged->summary.id, e.paged->location}});
    }
  };
  if (selective_consumers_ != 0) {
    // Which entries a selector will take is known only once read: read where dispatch stopped.
    if (!stalled_ || !ready_[stall_lane_]) return out;
    auto& lane = *ready_[stall_lane_];
    const auto from = std::lower_bound(lane.begin(), lane.end(), stall_seq_,
                                       [](const Entry& e, std::uint64_t s) { return e.seq < s; }) -
                      lane.begin();
    collect(stall_lane_, static_cast<std::size_t>(from));
  } else {
    std::size_t in_memory = 0;
    for (auto p = ready_.size(); p-- > 0 && out.empty();) {
      if (!ready_[p]) continue;
      auto& lane = *ready_[p];
      for (std::size_t i = 0; i < lane.size(); ++i) {
        if (!lane[i].is_paged()) {
          // Half a window still in memory ahead of the first paged entry: not yet.
          if (++in_memory >= (window + 1) / 2) return out;
          continue;
        }
        collect(p, i);
        break;
      }
    }
  }
  // Nothing paged where dispatch stopped (a cold tail's end): the stall stays for its scan.
  if (!out.empty()) stalled_ = false;
  reading_ = !out.empty();
  return out;
}

std::vector<Queue::PageRead> Queue::paged_entries() const {
  std::vector<PageRead> out;
  if (paged_count_ == 0) return out;
  out.reserve(paged_count_);
  for (std::size_t p = 0; p < ready_.size(); ++p) {
    if (!ready_[p]) continue;
    for (const auto& e : *ready_[p]) {
      if (e.is_paged()) out.push_back(PageRead{p, e.seq, store::ReadItem{e.paged->summary.id, e.paged->location}});
    }
  }
  return out;
}

bool Queue::page_in(const PageRead& at, MessagePtr message) {
  Entry* e = find_ready(at.lane, at.seq);
  if (e == nullptr || !e->is_paged() || !message || message->id != e->paged->summary.id) return false;
  ready_bytes_ -= e->paged->summary.footprint;
  ready_bytes_ += message->footprint();
  e->message = std::move(message);
  e->paged.reset();
  --paged_count_;
  return true;
}

std::optional<Queue::Entry> Queue::take_paged(const PageRead& at) {
  Entry* e = find_ready(at.lane, at.seq);
  if (e == nullptr || !e->is_paged()) return std::nullopt;
  take_out(*e);
  Entry out = std::move(*e);
  auto& lane = *ready_[at.lane];
  lane.erase(std::lower_bound(lane.begin(), lane.end(), at.seq,
                              [](const Entry& x, std::uint64_t s) { return x.seq < s; }));
  return out;
}

void Queue::unmark_reading(const PageRead& at) {
  Entry* e = find_ready(at.lane, at.seq);
  if (e != nullptr && e->is_paged()) e->paged->reading = false;
}

}  // namespace carrier::core
