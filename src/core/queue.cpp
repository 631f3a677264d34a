#include "core/queue.hpp"

#include <algorithm>

namespace carrier::core {

namespace {
std::size_t priority_index(const Message& m) { return std::min<std::size_t>(m.priority, 9); }
bool expired(const Message& m, std::int64_t now_ms) { return m.expires_ms != 0 && m.expires_ms <= now_ms; }
}  // namespace

void Queue::enqueue(MessagePtr message) {
  Entry e;
  e.message = std::move(message);
  e.seq = next_seq_++;
  push_back_ready(std::move(e));
}

void Queue::restore(MessagePtr message, std::uint32_t delivery_count) {
  Entry e;
  e.message = std::move(message);
  e.seq = next_seq_++;
  e.delivery_count = delivery_count;
  e.redelivered = delivery_count > 0;
  push_back_ready(std::move(e));
}

void Queue::requeue(Entry entry) { push_ready(std::move(entry)); }

void Queue::push_back_ready(Entry entry) {
  ready_bytes_ += entry.message->footprint();
  ++ready_count_;
  ready_[priority_index(*entry.message)].push_back(std::move(entry));
}

void Queue::push_ready(Entry entry) {
  auto& lane = ready_[priority_index(*entry.message)];
  auto pos = std::lower_bound(lane.begin(), lane.end(), entry.seq,
                              [](const Entry& e, std::uint64_t seq) { return e.seq < seq; });
  ready_bytes_ += entry.message->footprint();
  ++ready_count_;
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
  return !c.ref.selector || !matcher_ || matcher_(*c.ref.selector, m);
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

std::vector<Queue::Dispatch> Queue::dispatch(std::int64_t now_ms, std::vector<Entry>& expired_out) {
  std::vector<Dispatch> out;
  if (consumers_.empty() || ready_count_ == 0) return out;
  // One batch per consumer per call: the owner posts each batch to the consumer's shard once.
  std::vector<int> batch_of(consumers_.size(), -1);
  const std::size_t n = consumers_.size();
  for (auto p = ready_.size(); p-- > 0 && ready_count_ > 0;) {
    auto& lane = ready_[p];
    // Messages no consumer takes now keep their place, ahead of the rest of the lane.
    std::vector<Entry> skipped;
    while (!lane.empty()) {
      if (!any_credit()) break;
      const Message& m = *lane.front().message;
      if (expired(m, now_ms)) {
        ready_bytes_ -= m.footprint();
        --ready_count_;
        expired_out.push_back(std::move(lane.front()));
        lane.pop_front();
        continue;
      }
      const std::size_t idx = choose(m);
      if (idx == n) {
        if (selective_consumers_ == 0) break;  // nobody has credit
        ready_bytes_ -= m.footprint();
        --ready_count_;
        skipped.push_back(std::move(lane.front()));
        lane.pop_front();
        continue;
      }
      ready_bytes_ -= m.footprint();
      --ready_count_;
      Entry e = std::move(lane.front());
      lane.pop_front();
      deliver_to(idx, std::move(e), out, batch_of);
    }
    for (auto it = skipped.rbegin(); it != skipped.rend(); ++it) {
      ready_bytes_ += it->message->footprint();
      ++ready_count_;
      lane.push_front(std::move(*it));
    }
    if (!any_credit()) break;
  }
  if (!out.empty()) last_activity_ms_ = now_ms;
  return out;
}

std::vector<Queue::Entry> Queue::take_expired(std::int64_t now_ms) {
  std::vector<Entry> out;
  for (auto& lane : ready_) {
    auto keep = std::stable_partition(lane.begin(), lane.end(),
                                      [now_ms](const Entry& e) { return !expired(*e.message, now_ms); });
    for (auto it = keep; it != lane.end(); ++it) {
      ready_bytes_ -= it->message->footprint();
      --ready_count_;
      out.push_back(std::move(*it));
    }
    lane.erase(keep, lane.end());
  }
  return out;
}

bool Queue::take_oldest(Entry& out) {
  for (auto& lane : ready_) {
    if (lane.empty()) continue;
    out = std::move(lane.front());
    lane.pop_front();
    ready_bytes_ -= out.message->footprint();
    --ready_count_;
    return true;
  }
  return false;
}

std::vector<Queue::Entry> Queue::take_all() {
  std::vector<Entry> out;
  for (auto& lane : ready_) {
    for (auto& e : lane) out.push_back(std::move(e));
    lane.clear();
  }
  for (auto& c : consumers_) {
    for (auto& e : c->unacked.take_all()) out.push_back(std::move(e));
  }
  ready_count_ = 0;
  ready_bytes_ = 0;
  return out;
}

void Queue::for_each(const std::function<void(const Entry&)>& visit) const {
  for (const auto& lane : ready_) {
    for (const auto& e : lane) visit(e);
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

}  // namespace carrier::core
