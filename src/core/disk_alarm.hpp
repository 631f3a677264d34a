#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace carrier::core {

// Free space on the store's disk against `[journal] disk_free_limit_bytes` (RabbitMQ's
// disk_free_limit). Someone off the shards (serve's timer, admin::DiskGuard) reads the free
// space now and then and calls update(); while it is under the limit the alarm holds: protocol
// sessions leave SENDs and PUBLISHes of persistent messages unread (TCP back-pressure, as at the
// memory limit), they are not failed. When space returns, `on_relief` runs once so the paused
// connections read again. Non-persistent messages never touch the disk and keep flowing.
// Thread-safe: atomics only; one poller updates, sessions ask.
class DiskAlarm {
 public:
  enum class Transition { none, raised, cleared };

  explicit DiskAlarm(std::uint64_t limit_bytes = 0) : limit_(limit_bytes) {}

  void set_on_relief(std::function<void()> fn) { on_relief_ = std::move(fn); }
  // SIGHUP may move the line; the next update() judges against it. 0 turns the alarm off.
  void set_limit(std::uint64_t limit_bytes) { limit_.store(limit_bytes, std::memory_order_relaxed); }
  std::uint64_t limit() const { return limit_.load(std::memory_order_relaxed); }

  // One reading of the free bytes. Says whether the alarm went on or off with it; on `cleared`
  // the relief has run.
  Transition update(std::uint64_t free_bytes) {
    free_.store(free_bytes, std::memory_order_relaxed);
    measured_.store(true, std::memory_order_relaxed);
    const auto limit = limit_.load(std::memory_order_relaxed);
    const bool hold = limit != 0 && free_bytes < limit;
    if (hold == holding_.load(std::memory_order_relaxed)) return Transition::none;
    holding_.store(hold, std::memory_order_release);
    if (hold) {
      ++alarms_;
      return Transition::raised;
    }
    if (on_relief_) on_relief_();
    return Transition::cleared;
  }

  // True while publishers of persistent messages must wait. The fast path is one load.
  bool holding() const { return holding_.load(std::memory_order_acquire); }
  std::uint64_t free_bytes() const { return free_.load(std::memory_order_relaxed); }
  bool measured() const { return measured_.load(std::memory_order_relaxed); }
  // How many times the alarm went on since start (for /metrics).
  std::uint64_t alarms() const { return alarms_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> limit_;
  std::atomic<std::uint64_t> free_{0};
  std::atomic<bool> measured_{false};
  std::atomic<bool> holding_{false};
  std::atomic<std::uint64_t> alarms_{0};
  std::function<void()> on_relief_;
};

}  // namespace carrier::core
