#pragma once

#include <cstdint>
#include <functional>
#include <map>

namespace carrier::core {

// One ordered schedule per shard: redeliveries, scheduled messages, sweeps. Tasks run in due
// order; the owner arms a single wake-up for the earliest one (no timer per message, no polling).
// Runs on: its shard.
class Schedule {
 public:
  using Task = std::function<void()>;

  void add(std::int64_t due_ms, Task task) { tasks_.emplace(due_ms, std::move(task)); }
  // Runs every task due at or before `now_ms`, including ones they add that are already due.
  std::size_t run_due(std::int64_t now_ms) {
    std::size_t n = 0;
    while (!tasks_.empty() && tasks_.begin()->first <= now_ms) {
      auto task = std::move(tasks_.begin()->second);
      tasks_.erase(tasks_.begin());
      task();
      ++n;
    }
    return n;
  }
  bool empty() const { return tasks_.empty(); }
  std::int64_t next_due() const { return tasks_.empty() ? INT64_MAX : tasks_.begin()->first; }
  std::size_t size() const { return tasks_.size(); }

 private:
  std::multimap<std::int64_t, Task> tasks_;
};

}  // namespace carrier::core
