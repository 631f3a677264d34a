// Queue's cold tails (docs/storage.md, "Cold tails"): the end of a priority lane kept only as a
// count, a byte total and a store location to scan from. The owner (queue_cold_tails.cpp) issues
// the scans and keeps the store's locations; the queue moves messages between memory and tail.
#include <algorithm>
#include <limits>

#include "core/queue.hpp"

namespace carrier::core {

using model::MessagePtr;

namespace {

bool cold_expired(const Queue::Entry& e, std::int64_t now_ms) {
  const auto at = e.expires_ms();
  return at != 0 && at <= now_ms;
}

// Where a tail's next scan starts once `at` belongs to it: the smallest location of its
// messages. While a scan is out, the answer's `next` must not pass `at`, and its `exhausted`
// cannot be trusted (the scan may have been called before `at` was durable).
void lower_from(Queue::ColdTail& t, store::Location at) {
  if (t.scanning) {
    t.lowered_to = t.lowered ? std::min(t.lowered_to, at) : at;
    t.lowered = true;
  }
  if (!t.active()) {
    t.from = at;
  } else {
    t.from = std::min(t.from, at);
  }
}

constexpr std::size_t kDropScan = 1024;  // messages read per scan that only drops

void note_oldest(Queue::ColdTail& t, std::int64_t timestamp_ms) {
  if (timestamp_ms != 0 && (t.oldest_ms == 0 || timestamp_ms < t.oldest_ms)) t.oldest_ms = timestamp_ms;
}

}  // namespace

Queue::ColdTail& Queue::cold_for(std::size_t priority) {
  if (!cold_) cold_ = std::make_unique<std::array<ColdTail, 10>>();
  return (*cold_)[std::min<std::size_t>(priority, 9)];
}

bool Queue::holding(std::size_t priority) const {
  if (!cold_) return false;
  const auto& t = (*cold_)[std::min<std::size_t>(priority, 9)];
  return t.count != 0 && !t.failed;
}

bool Queue::cold_reading() const {
  if (!cold_) return false;
  return std::any_of(cold_->begin(), cold_->end(), [](const ColdTail& t) { return t.scanning; });
}

bool Queue::cold_active() const {
  if (!cold_) return false;
  return std::any_of(cold_->begin(), cold_->end(), [](const ColdTail& t) { return t.active() && !t.failed; });
}

void Queue::release_held(std::size_t priority) {
  if (!cold_) return;
  auto& t = (*cold_)[priority];
  auto held = std::move(t.held);
  t.held.clear();
  for (auto& e : held) {
    held_bytes_ -= e.footprint();
    --held_count_;
    push_back_ready(std::move(e));
  }
}

std::vector<Queue::WentCold> Queue::go_cold(std::size_t keep_head, const Locator& where, const Enough& enough) {
  std::vector<WentCold> out;
  if (paged_count_ == ready_count_) return out;
  std::array<std::size_t, 10> ahead{};
  std::size_t total = 0;
  for (auto p = ready_.size(); p-- > 0;) {
    ahead[p] = total;
    if (ready_[p]) total += ready_[p]->size();
  }
  for (std::size_t p = 0; p < ready_.size(); ++p) {
    if (!ready_[p]) continue;
    auto& lane = *ready_[p];
    std::vector<std::size_t> unlocated;  // stored, not durable yet: held if behind the tail
    // Below this seq every consumer (all selective) refused every entry of the lane.
    std::uint64_t refused_upto = 0;
    if (!consumers_.empty() && selective_consumers_ == consumers_.size()) {
      refused_upto = std::numeric_limits<std::uint64_t>::max();
      for (const auto& c : consumers_) refused_upto = std::min(refused_upto, c->refused_below[p]);
    }
    std::size_t first_frozen = lane.size();
    bool done = false;
    for (std::size_t i = lane.size(); i-- > 0;) {
      if (ahead[p] + i < keep_head) break;
      Entry& e = lane[i];
      if (!e.message || !e.message->stored()) continue;  // paged and unstored non-persistent ones stay
      const auto at = where(*e.message);
      if (!at.valid()) {
        unlocated.push_back(i);
        continue;
      }
      if (e.seq < refused_upto) {
        out.push_back(WentCold{page(e, at), at, true});
        if (enough(*out.back().message)) return out;
        continue;
      }
      auto& t = cold_for(p);
      const std::size_t fp = e.message->footprint();
      note_oldest(t, e.message->timestamp_ms);
      lower_from(t, at);
      ++t.count;
      t.bytes += fp;
      ++cold_count_;
      cold_bytes_ += fp;
      --ready_count_;
      ready_bytes_ -= fp;
      out.push_back(WentCold{std::move(e.message), at, false});
      e.message.reset();
      first_frozen = i;
      if (enough(*out.back().message)) {
        done = true;
        break;
      }
    }
    if (first_frozen < lane.size()) {
      auto& t = cold_for(p);
      // Not yet located but behind what went cold: they wait for their location (held).
      for (auto it = unlocated.rbegin(); it != unlocated.rend(); ++it) {
        if (*it < first_frozen) continue;
        Entry& e = lane[*it];
        --ready_count_;
        ready_bytes_ -= e.footprint();
        ++held_count_;
        held_bytes_ += e.footprint();
        t.held.push_back(std::move(e));
        e.message.reset();
      }
      lane.erase(std::remove_if(lane.begin() + static_cast<std::ptrdiff_t>(first_frozen), lane.end(),
                                [](const Entry& e) { return e.empty(); }),
                 lane.end());
    }
    if (done) return out;
  }
  return out;
}

MessagePtr Queue::join_cold(std::size_t priority, const model::MessageId& id, store::Location at) {
  if (!holding(priority)) return nullptr;
  auto& t = cold_for(priority);
  auto it = std::find_if(t.held.begin(), t.held.end(), [&](const Entry& e) { return e.message && e.message->id == id; });
  if (it == t.held.end()) return nullptr;
  MessagePtr m = std::move(it->message);
  t.held.erase(it);
  const std::size_t fp = m->footprint();
  --held_count_;
  held_bytes_ -= fp;
  note_oldest(t, m->timestamp_ms);
  lower_from(t, at);
  ++t.count;
  t.bytes += fp;
  ++cold_count_;
  cold_bytes_ += fp;
  return m;
}

void Queue::add_cold(std::size_t priority, std::uint32_t footprint, store::Location at, std::int64_t timestamp_ms) {
  note_oldest(cold_for(priority), timestamp_ms);
  add_cold_run(priority, 1, footprint, at);
}

void Queue::add_cold_run(std::size_t priority, std::uint64_t count, std::uint64_t bytes, store::Location from) {
  if (count == 0) return;  // nothing to read: no tail for messages dispatch would wait behind
  auto& t = cold_for(priority);
  lower_from(t, from);
  t.count += count;
  t.bytes += bytes;
  cold_count_ += count;
  cold_bytes_ += bytes;
}

std::optional<Queue::ColdRead> Queue::cold_read(std::size_t window, bool all) {
  if (!cold_ || cold_reading() || window == 0) return std::nullopt;
  auto issue = [&](std::size_t p, std::size_t max) {
    auto& t = (*cold_)[p];
    t.scanning = true;
    t.lowered = false;
    return ColdRead{p, t.from, max, cold_epoch_};
  };
  // Drops owed (overflow, purge) are read and acked without waiting for a consumer.
  for (std::size_t p = 0; p < cold_->size(); ++p) {
    const auto& t = (*cold_)[p];
    if (t.drops != 0 && !t.failed) return issue(p, std::min<std::uint64_t>(t.drops, kDropScan));
  }
  if (consumers_.empty() && !all) return std::nullopt;
  std::size_t in_memory = 0;
  for (auto p = ready_.size(); p-- > 0;) {
    if (ready_[p]) in_memory += ready_[p]->size();
    const auto& t = (*cold_)[p];
    if (t.failed || t.count == 0) continue;
    if (all) return issue(p, window);
    if (selective_consumers_ != 0) {
      // Which messages a selector takes is known only once read: read where dispatch stopped.
      if (stalled_ && stall_lane_ == p) return issue(p, window);
      return std::nullopt;
    }
    // Half a window still in memory ahead of the tail: not yet. Lower lanes wait behind it.
    if (in_memory >= (window + 1) / 2) return std::nullopt;
    return issue(p, window);
  }
  return std::nullopt;
}

Queue::ColdAnswer Queue::cold_scanned(const ColdRead& read, store::ScanResult result,
                                      const std::function<bool(const model::MessageId&)>& skip, std::int64_t now_ms) {
  ColdAnswer out;
  if (!cold_ || read.epoch != cold_epoch_ || read.lane >= cold_->size()) return out;
  auto& t = (*cold_)[read.lane];
  t.scanning = false;
  for (auto& sm : result.messages) {
    if (!sm.message) continue;
    // Not due yet: it waits in the schedule, and joins the tail (lowering `from`) or the lane
    // when it is due; taken now it would be delivered early, and again when due.
    if (sm.message->deliver_at_ms > now_ms) continue;
    const auto& id = sm.message->id;
    const std::size_t fp = sm.message->footprint();
    // A held arrival the scan found before its location came back: read now, it leaves held.
    auto held = std::find_if(t.held.begin(), t.held.end(), [&](const Entry& e) { return e.message && e.message->id == id; });
    if (held != t.held.end()) {
      --held_count_;
      held_bytes_ -= held->footprint();
      t.held.erase(held);
    } else if (skip && skip(id)) {
      continue;  // in memory here: not the tail's
    } else if (t.drops != 0) {
      // The oldest of the tail come first: those an overflow or purge took.
      --t.drops;
      out.dropped.push_back(sm.message);
      out.dropped_at.push_back(sm.location);
      continue;
    } else if (t.count != 0) {
      --t.count;
      --cold_count_;
      const std::uint64_t share = t.count == 0 ? t.bytes : std::min<std::uint64_t>(fp, t.bytes);
      t.bytes -= share;
      cold_bytes_ -= std::min(cold_bytes_, share);
    }
    Entry e;
    e.message = sm.message;
    e.seq = next_seq_++;
    e.delivery_count = sm.delivery_count;
    e.redelivered = sm.delivery_count > 0;
    if (cold_expired(e, now_ms)) {
      out.expired.push_back(std::move(e));
      out.expired_at.push_back(sm.location);
      continue;
    }
    out.entered.push_back(ColdEntered{sm.message, sm.location, e.seq});
    push_back_ready(std::move(e));
  }
  // Damaged in the store: they stay there, out of dispatch and of the depth, as a paged entry
  // whose read failed (their bytes are not known: each takes its share of the tail's).
  for (std::uint64_t i = 0; i < result.unreadable && t.count != 0; ++i) {
    const std::uint64_t share = t.bytes / t.count;
    --t.count;
    --cold_count_;
    t.bytes -= share;
    cold_bytes_ -= std::min<std::uint64_t>(cold_bytes_, share);
    ++out.unreadable;
  }
  if (!result.messages.empty() && result.messages.back().message) {
    t.oldest_ms = result.messages.back().message->timestamp_ms;  // store order is about arrival order
  }
  t.from = t.lowered ? std::min(result.next, t.lowered_to) : result.next;
  const bool trust_exhausted = result.exhausted && !t.lowered;
  t.lowered = false;
  t.lowered_to = {};
  if (trust_exhausted && t.active()) {
    // The store holds no more of it: the count was off (a message removed behind our back).
    out.corrected = t.count + t.drops;
    cold_count_ -= t.count;
    cold_bytes_ -= std::min<std::uint64_t>(cold_bytes_, t.bytes);
    t.count = 0;
    t.bytes = 0;
    t.drops = 0;
  }
  if (t.count == 0) {
    t.bytes = 0;
    release_held(read.lane);
  }
  out.emptied = !t.active();
  if (out.emptied) {
    t.from = {};
    t.oldest_ms = 0;
  }
  return out;
}

void Queue::cold_unread(const ColdRead& read, bool stop) {
  if (!cold_ || read.epoch != cold_epoch_ || read.lane >= cold_->size()) return;
  auto& t = (*cold_)[read.lane];
  t.scanning = false;
  t.lowered = false;
  t.lowered_to = {};
  if (!stop) return;
  t.failed = true;
  release_held(read.lane);
}

std::uint64_t Queue::drop_cold_lane(std::size_t p, std::uint64_t max) {
  auto& t = cold_for(p);
  if (t.count == 0 || t.failed || max == 0) return 0;
  const std::uint64_t k = std::min(t.count, max);
  const std::uint64_t share = k == t.count ? t.bytes : t.bytes / t.count * k;
  t.count -= k;
  t.bytes -= share;
  t.drops += k;
  cold_count_ -= k;
  cold_bytes_ -= std::min(cold_bytes_, share);
  if (t.count == 0) release_held(p);
  return k;
}

std::uint64_t Queue::drop_cold(std::uint64_t max) {
  if (!cold_) return 0;
  std::uint64_t n = 0;
  for (std::size_t p = 0; p < cold_->size() && n < max; ++p) n += drop_cold_lane(p, max - n);
  return n;
}

std::vector<Queue::ColdCut> Queue::cut_cold() {
  std::vector<ColdCut> out;
  if (!cold_) return out;
  for (std::size_t p = 0; p < cold_->size(); ++p) {
    auto& t = (*cold_)[p];
    release_held(p);
    if (t.active()) out.push_back(ColdCut{p, t.from, t.count + t.drops});
    t = ColdTail{};
  }
  cold_count_ = 0;
  cold_bytes_ = 0;
  ++cold_epoch_;
  return out;
}

}  // namespace carrier::core
