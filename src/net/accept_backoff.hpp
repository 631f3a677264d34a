#pragma once

#include <chrono>
#include <cstdint>

namespace carrier::net {

// How long the accept loop sleeps after a failed accept. Out of descriptors (EMFILE/ENFILE) the
// pending connection stays queued and the acceptor stays readable, so retrying at once spins
// shard 0 and floods the log: instead wait `min`, doubling up to `max`, and reset on success.
// Warnings are rate-limited to one per `log_interval`, each counting the failures it stands for.
// Runs on: shard 0 (the accept loop); not thread-safe.
class AcceptBackoff {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds min{10};
  static constexpr std::chrono::milliseconds max{1000};
  static constexpr std::chrono::seconds log_interval{10};

  // Records a failure at `now` and returns how long to sleep before the next accept.
  std::chrono::milliseconds fail(Clock::time_point now);
  // Whether the failure just recorded should be logged; if so, `failures_to_log()` says how many
  // failures (this one included) the warning covers.
  bool should_log() const { return log_now_; }
  std::uint64_t failures_to_log() const { return logged_count_; }
  // Records a successful accept; returns the failures since the last success (0: none).
  std::uint64_t succeed();

 private:
  std::chrono::milliseconds delay_{0};
  std::uint64_t failures_ = 0;     // since the last success
  std::uint64_t unlogged_ = 0;     // failures not yet counted in a warning
  std::uint64_t logged_count_ = 0;
  bool log_now_ = false;
  bool logged_once_ = false;
  Clock::time_point last_log_{};
};

}  // namespace carrier::net
