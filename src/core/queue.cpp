#include "core/queue.hpp"

#include <algorithm>

namespace carrier::core {

namespace {
std::size_t priority_index(const Message& m) { return std::min<std::size_t>(m.priority, 9); }
}  // namespace

void Queue::enqueue(MessagePtr message) {
  Entry e;
  e.message = std::move(message);
  e.seq = next_seq_++;
  const auto p = priority_index(*e.message);
  ready_[p].push_back(std::move(e));
  ++ready_count_;
}

void Queue::restore(MessagePtr message, std::uint32_t delivery_count) {
  Entry e;
  e.message = std::move(message);
  e.seq = next_seq_++;
  e.delivery_count = delivery_count;
  e.redelivered = delivery_count > 0;
  const auto p = priority_index(*e.message);
  ready_[p].push_back(std::move(e));
  ++ready_count_;
}

void Queue::push_ready(Entry entry) {
  auto& lane = ready_[priority_index(*entry.message)];
  auto pos = std::lower_bound(lane.begin(), lane.end(), entry.seq,
                              [](const Entry& e, std::uint64_t seq) { return e.seq < seq; });
  lane.insert(pos, std::move(entry));
  ++ready_count_;
}

bool Queue::pop_ready(Entry& out) {
  for (auto p = ready_.size(); p-- > 0;) {
    if (!ready_[p].empty()) {
      out = std::move(ready_[p].front());
      ready_[p].pop_front();
      --ready_count_;
      return true;
    }
  }
  return false;
}

Queue::ConsumerState* Queue::find(ConsumerId id) {
  for (auto& c : consumers_) {
    if (c.ref.id == id) return &c;
  }
  return nullptr;
}

bool Queue::has_consumer(ConsumerId id) const {
  return std::any_of(consumers_.begin(), consumers_.end(), [id](const ConsumerState& c) { return c.ref.id == id; });
}

void Queue::add_consumer(ConsumerRef consumer) {
  if (consumer.prefetch == 0) consumer.prefetch = 1;
  consumers_.push_back(ConsumerState{std::move(consumer), 1, {}});
}

bool Queue::remove_consumer(ConsumerId id) {
  auto it = std::find_if(consumers_.begin(), consumers_.end(), [id](const ConsumerState& c) { return c.ref.id == id; });
  if (it == consumers_.end()) return false;
  for (auto& [tag, entry] : it->unacked) {
    entry.redelivered = true;
    push_ready(std::move(entry));
  }
  const auto index = static_cast<std::size_t>(it - consumers_.begin());
  consumers_.erase(it);
  if (round_robin_ > index) --round_robin_;
  if (round_robin_ >= consumers_.size()) round_robin_ = 0;
  return true;
}

Queue::Outcome Queue::ack(ConsumerId id, std::span<const std::uint64_t> tags) {
  Outcome out;
  auto* c = find(id);
  if (c == nullptr) {
    out.unknown_tags = tags.size();
    return out;
  }
  for (auto tag : tags) {
    auto it = c->unacked.find(tag);
    if (it == c->unacked.end()) {
      ++out.unknown_tags;
      continue;
    }
    out.removed.push_back(std::move(it->second.message));
    c->unacked.erase(it);
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
    auto it = c->unacked.find(tag);
    if (it == c->unacked.end()) {
      ++out.unknown_tags;
      continue;
    }
    it->second.redelivered = true;
    push_ready(std::move(it->second));
    c->unacked.erase(it);
  }
  return out;
}

std::vector<Queue::Dispatch> Queue::dispatch(std::int64_t now_ms, std::vector<MessagePtr>& expired) {
  std::vector<Dispatch> out;
  if (consumers_.empty() || ready_count_ == 0) return out;
  // One batch per consumer per call: the owner posts each batch to the consumer's shard once.
  std::vector<int> batch_of(consumers_.size(), -1);
  const std::size_t n = consumers_.size();
  while (ready_count_ > 0) {
    std::size_t chosen = n;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t idx = (round_robin_ + i) % n;
      if (consumers_[idx].has_credit()) {
        chosen = idx;
        break;
      }
    }
    if (chosen == n) break;
    Entry e;
    pop_ready(e);
    if (e.message->expires_ms != 0 && e.message->expires_ms <= now_ms) {
      expired.push_back(std::move(e.message));
      continue;
    }
    round_robin_ = (chosen + 1) % n;
    auto& c = consumers_[chosen];
    if (batch_of[chosen] < 0) {
      batch_of[chosen] = static_cast<int>(out.size());
      out.push_back(Dispatch{c.ref, {}});
    }
    ++e.delivery_count;
    const std::uint64_t tag = c.next_tag++;
    out[static_cast<std::size_t>(batch_of[chosen])].batch.push_back(
        Delivery{e.message, tag, e.delivery_count, e.redelivered});
    c.unacked.emplace(tag, std::move(e));
  }
  return out;
}

std::size_t Queue::unacked() const {
  std::size_t n = 0;
  for (const auto& c : consumers_) n += c.unacked.size();
  return n;
}

}  // namespace carrier::core
