#pragma once

#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

namespace carrier::store {

// The hand-off between the shards that append and a backend's one writer thread: many
// producers push, the writer takes everything queued at once (that is the group in group
// commit). A mutex and a condition variable, not a lock-free queue: the writer wakes once per
// group and a push holds the lock for a vector push_back, so the lock is not what limits
// throughput; fsync is. Runs on: push from any thread, take_all from the writer thread only.
template <class Item>
class CommitQueue {
 public:
  // Returns false (and leaves `item` untouched) once close() has been called: the caller
  // fails the item itself.
  bool push(Item& item) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return false;
      items_.push_back(std::move(item));
      // Only the first push of a group needs to wake the writer; the rest find it busy.
      if (items_.size() > 1) return true;
    }
    wake_.notify_one();
    return true;
  }

  // Blocks until something is queued or the queue is closed, then moves everything queued into
  // `out` (which must be empty; its capacity is reused). Returns false when closed and drained.
  bool take_all(std::vector<Item>& out) {
    std::unique_lock lock(mutex_);
    wake_.wait(lock, [this] { return !items_.empty() || closed_; });
    if (items_.empty()) return false;
    out.swap(items_);
    return true;
  }

  // Non-blocking take_all, for draining when no writer thread runs.
  bool try_take_all(std::vector<Item>& out) {
    std::lock_guard lock(mutex_);
    if (items_.empty()) return false;
    out.swap(items_);
    return true;
  }

  bool empty() {
    std::lock_guard lock(mutex_);
    return items_.empty();
  }

  // Refuses later pushes; items already queued are still handed out by take_all.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    wake_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Item> items_;
  bool closed_ = false;
};

}  // namespace carrier::store
