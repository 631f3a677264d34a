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
// Runs on: the owning shard.
template <class Entry>
class UnackedLog {
 public:
  // `tag` must be greater than every tag pushed before.
  void push(std::uint64_t tag, Entry entry) {
    slots_.push_back(Slot{tag, true, std::move(entry)});
    ++live_;
  }

  bool contains(std::uint64_t tag) const { return locate(tag) != slots_.size(); }

  // Takes the entry with `tag` out; nullopt if there is none (unknown, or already taken).
  std::optional<Entry> take(std::uint64_t tag) {
    const std::size_t at = locate(tag);
    if (at == slots_.size()) return std::nullopt;
    Slot& s = slots_[at];
    std::optional<Entry> out(std::move(s.entry));
    s.live = false;
    s.entry = Entry{};
    --live_;
    while (!slots_.empty() && !slots_.front().live) slots_.pop_front();
    if (slots_.size() > 64 && slots_.size() > 2 * live_) compact();
    return out;
  }

  // Every entry, in tag order; the log is left empty.
  std::vector<Entry> take_all() {
    std::vector<Entry> out;
    out.reserve(live_);
    for (auto& s : slots_) {
      if (s.live) out.push_back(std::move(s.entry));
    }
    slots_.clear();
    live_ = 0;
    return out;
  }

  // Visits every entry, in tag order.
  template <class Fn>
  void for_each(Fn&& visit) const {
    for (const auto& s : slots_) {
      if (s.live) visit(s.entry);
    }
  }

  std::size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  // Slots held, holes included: what the log costs in memory.
  std::size_t slots() const { return slots_.size(); }

 private:
  struct Slot {
    std::uint64_t tag;
    bool live;
    Entry entry;
  };

  // Index of the live slot with `tag`, or slots_.size().
  std::size_t locate(std::uint64_t tag) const {
    if (slots_.empty()) return 0;
    // The front is the common case: check it before searching.
    if (slots_.front().tag == tag) return slots_.front().live ? 0 : slots_.size();
    auto it = std::lower_bound(slots_.begin(), slots_.end(), tag,
                               [](const Slot& s, std::uint64_t t) { return s.tag < t; });
    if (it == slots_.end() || it->tag != tag || !it->live) return slots_.size();
    return static_cast<std::size_t>(it - slots_.begin());
  }

  void compact() {
    std::erase_if(slots_, [](const Slot& s) { return !s.live; });
  }

  std::deque<Slot> slots_;
  std::size_t live_ = 0;
};

}  // namespace carrier::core
