#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace carrier::core {

// A consumer's deliveries awaiting ack, by tag. Tags are handed out in increasing order and most
// acks come in that order too (auto-ack, cumulative, a consumer keeping up), so this is a deque:
// O(1) push and front removal, no node allocation per delivery as with a map. An ack out of order
// leaves a hole that is skipped once it reaches the front; holes are compacted when they outnumber
// the live entries, so a never-acked old delivery cannot make the log grow without bound.
// The deque is made on the first push: an empty std::deque already holds ~600 bytes, which was
// more than half of what an idle consumer cost.
// Runs on: the owning shard.
template <class Entry>
class UnackedLog {
 public:
  // `tag` must be greater than every tag pushed before.
  void push(std::uint64_t tag, Entry entry) {
    if (!slots_) slots_.emplace();
    slots_->push_back(Slot{tag, true, std::move(entry)});
    ++live_;
  }

  bool contains(std::uint64_t tag) const { return slots_ && locate(tag) != slots_->size(); }

  // Takes the entry with `tag` out; nullopt if there is none (unknown, or already taken).
  std::optional<Entry> take(std::uint64_t tag) {
    if (!slots_) return std::nullopt;
    auto& held = *slots_;
    const std::size_t at = locate(tag);
    if (at == held.size()) return std::nullopt;
    Slot& s = held[at];
    std::optional<Entry> out(std::move(s.entry));
    s.live = false;
    s.entry = Entry{};
    --live_;
    while (!held.empty() && !held.front().live) held.pop_front();
    if (held.size() > 64 && held.size() > 2 * live_) compact();
    return out;
  }

  // Every entry, in tag order; the log is left empty.
  std::vector<Entry> take_all() {
    std::vector<Entry> out;
    if (!slots_) return out;
    out.reserve(live_);
    for (auto& s : *slots_) {
      if (s.live) out.push_back(std::move(s.entry));
    }
    slots_->clear();
    live_ = 0;
    return out;
  }

  // Visits every entry, in tag order.
  template <class Fn>
  void for_each(Fn&& visit) const {
    if (!slots_) return;
    for (const auto& s : *slots_) {
      if (s.live) visit(s.entry);
    }
  }

  std::size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  // Slots held, holes included: what the log costs in memory.
  std::size_t slots() const { return slots_ ? slots_->size() : 0; }

 private:
  struct Slot {
    std::uint64_t tag;
    bool live;
    Entry entry;
  };

  // Index of the live slot with `tag`, or the number of slots. The deque exists.
  std::size_t locate(std::uint64_t tag) const {
    const auto& held = *slots_;
    if (held.empty()) return 0;
    // The front is the common case: check it before searching.
    if (held.front().tag == tag) return held.front().live ? 0 : held.size();
    auto it = std::lower_bound(held.begin(), held.end(), tag,
                               [](const Slot& s, std::uint64_t t) { return s.tag < t; });
    if (it == held.end() || it->tag != tag || !it->live) return held.size();
    return static_cast<std::size_t>(it - held.begin());
  }

  void compact() {
    std::erase_if(*slots_, [](const Slot& s) { return !s.live; });
  }

  std::optional<std::deque<Slot>> slots_;
  std::size_t live_ = 0;
};

}  // namespace carrier::core
