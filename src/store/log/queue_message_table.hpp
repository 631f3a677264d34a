#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "base/assert.hpp"
#include "model/message_id.hpp"

namespace carrier::store::log {

// A hash map from (queue index, message id) to a small trivially copyable Value, built to cost
// few bytes per entry when it holds millions (a backlog bigger than memory keeps one entry per
// live message here): the entries sit densely in fixed-size chunks (no allocation per entry, no
// doubling of a huge array), and the hash index is a power-of-two array of 32-bit entry numbers
// with linear probing, kept between 1/8 and 4/5 full. Erasing moves the last entry into the hole
// (order is not kept) and shifts the probe run back (no tombstones), and the table shrinks as it
// empties, so a drained backlog gives its memory back.
//
// The queue is an index from a QueueNameTable: the key is 20 bytes, not a string per entry.
// Pointers returned by find/try_emplace are invalidated by the next insert or erase.
// Runs on: whoever owns it; not thread-safe.
template <class Value>
class QueueMessageTable {
 public:
  struct Entry {
    std::uint32_t id[4];  // MessageId as four words: 4-byte alignment, so no padding after Value
    std::uint32_t queue;
    Value value;
  };
  static constexpr std::size_t kChunkEntries = 4096;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  Value* find(std::uint32_t queue, model::MessageId id) {
    const std::size_t slot = find_slot(queue, id);
    return slot == kNone ? nullptr : &entry(slots_[slot] - 1).value;
  }
  const Value* find(std::uint32_t queue, model::MessageId id) const {
    return const_cast<QueueMessageTable*>(this)->find(queue, id);
  }

  // The entry for the key, made with Value{} if absent; second is true when it was made.
  std::pair<Value*, bool> try_emplace(std::uint32_t queue, model::MessageId id) {
    if (const std::size_t slot = find_slot(queue, id); slot != kNone) return {&entry(slots_[slot] - 1).value, false};
    CARRIER_ASSERT(size_ < UINT32_MAX - 1, "queue message table full ({} entries)", size_);
    if ((size_ + 1) * 5 > slots_.size() * 4) rehash(slots_.empty() ? 16 : slots_.size() * 2);
    if (size_ / kChunkEntries >= chunks_.size()) chunks_.push_back(std::make_unique<Entry[]>(kChunkEntries));
    Entry& e = entry(size_);
    set_key(e, queue, id);
    e.value = Value{};
    place(size_);
    ++size_;
    return {&e.value, true};
  }

  bool erase(std::uint32_t queue, model::MessageId id) {
    const std::size_t slot = find_slot(queue, id);
    if (slot == kNone) return false;
    const std::size_t index = slots_[slot] - 1;
    unlink_slot(slot);
    const std::size_t last = size_ - 1;
    if (index != last) {
      // The last entry fills the hole; its slot must name its new place.
      entry(index) = entry(last);
      std::size_t s = home(entry(index));
      while (slots_[s] != last + 1) s = (s + 1) & mask_;
      slots_[s] = static_cast<std::uint32_t>(index + 1);
    }
    --size_;
    // Keep one spare chunk, so a size hovering at a chunk boundary does not allocate each time.
    while (chunks_.size() > (size_ + kChunkEntries - 1) / kChunkEntries + 1) chunks_.pop_back();
    if (slots_.size() > 16 && size_ * 8 < slots_.size()) rehash(slots_.size() / 2);
    return true;
  }

  void clear() {
    chunks_.clear();
    std::vector<std::uint32_t>().swap(slots_);
    mask_ = 0;
    size_ = 0;
  }

  // Calls f(queue, id, value&) for every entry, in no particular order.
  template <class F>
  void for_each(F&& f) {
    for (std::size_t i = 0; i < size_; ++i) {
      Entry& e = entry(i);
      f(e.queue, id_of(e), e.value);
    }
  }

  // Bytes held (chunks and index), for tests and reports.
  std::size_t memory_bytes() const {
    return chunks_.size() * kChunkEntries * sizeof(Entry) + slots_.capacity() * sizeof(std::uint32_t);
  }

 private:
  static constexpr std::size_t kNone = SIZE_MAX;

  static void set_key(Entry& e, std::uint32_t queue, model::MessageId id) {
    e.id[0] = static_cast<std::uint32_t>(id.hi >> 32);
    e.id[1] = static_cast<std::uint32_t>(id.hi);
    e.id[2] = static_cast<std::uint32_t>(id.lo >> 32);
    e.id[3] = static_cast<std::uint32_t>(id.lo);
    e.queue = queue;
  }
  static model::MessageId id_of(const Entry& e) {
    return model::MessageId{(std::uint64_t(e.id[0]) << 32) | e.id[1], (std::uint64_t(e.id[2]) << 32) | e.id[3]};
  }
  static bool same_key(const Entry& e, std::uint32_t queue, model::MessageId id) {
    return e.queue == queue && id_of(e) == id;
  }
  // Each half goes through a full 64-bit finaliser (MurmurHash3's fmix64) before they are
  // combined: ids that are simple functions of each other (hi = n, lo = n * constant) must not
  // cancel out into one bucket.
  static std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
  }
  static std::uint64_t hash(std::uint32_t queue, model::MessageId id) {
    return mix(id.hi ^ mix(id.lo ^ (std::uint64_t(queue) << 32)));
  }

  Entry& entry(std::size_t i) { return chunks_[i / kChunkEntries][i % kChunkEntries]; }
  std::size_t home(const Entry& e) const { return hash(e.queue, id_of(e)) & mask_; }

  std::size_t find_slot(std::uint32_t queue, model::MessageId id) {
    if (size_ == 0) return kNone;
    for (std::size_t s = hash(queue, id) & mask_;; s = (s + 1) & mask_) {
      const std::uint32_t v = slots_[s];
      if (v == 0) return kNone;
      if (same_key(entry(v - 1), queue, id)) return s;
    }
  }

  void place(std::size_t index) {
    std::size_t s = home(entry(index));
    while (slots_[s] != 0) s = (s + 1) & mask_;
    slots_[s] = static_cast<std::uint32_t>(index + 1);
  }

  // Empties `slot` and moves later members of its probe run back, so lookups never need
  // tombstones.
  void unlink_slot(std::size_t hole) {
    for (std::size_t j = (hole + 1) & mask_; slots_[j] != 0; j = (j + 1) & mask_) {
      const std::size_t k = home(entry(slots_[j] - 1));
      const bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = 0;
  }

  void rehash(std::size_t slot_count) {
    std::vector<std::uint32_t>(slot_count, 0).swap(slots_);
    mask_ = slot_count - 1;
    for (std::size_t i = 0; i < size_; ++i) place(i);
  }

  std::vector<std::unique_ptr<Entry[]>> chunks_;
  std::vector<std::uint32_t> slots_;  // entry number + 1; 0 = empty
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace carrier::store::log
