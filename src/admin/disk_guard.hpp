#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>

#include "core/disk_alarm.hpp"

namespace carrier::admin {

// Free bytes for an unprivileged writer on the filesystem holding `path` (statvfs f_bavail);
// nullopt when it cannot be read (the directory gone, a permission).
std::optional<std::uint64_t> free_disk_bytes(const std::filesystem::path& path);

// Reads the free space of the store's disk on a timer (serve calls poll() once a second, off the
// shards: never a statvfs per message) and feeds core::DiskAlarm, logging each transition at
// most once per `kLogInterval` (a disk hovering at the line would flood the log otherwise: the
// transitions in between are counted and said at the next line).
// Runs on: serve's main thread (poll); the alarm it drives is read by every shard.
class DiskGuard {
 public:
  using Probe = std::function<std::optional<std::uint64_t>(const std::filesystem::path&)>;
  static constexpr std::chrono::seconds kLogInterval{10};

  DiskGuard(std::filesystem::path dir, core::DiskAlarm& alarm, Probe probe = free_disk_bytes)
      : dir_(std::move(dir)), alarm_(alarm), probe_(std::move(probe)) {}

  // One reading; `now` is passed in so tests can drive the log's rate limit.
  void poll(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

  const std::filesystem::path& dir() const { return dir_; }
  unsigned log_lines() const { return log_lines_; }  // transitions logged (for tests)

 private:
  std::filesystem::path dir_;
  core::DiskAlarm& alarm_;
  Probe probe_;
  bool probe_failed_ = false;
  std::optional<std::chrono::steady_clock::time_point> last_log_;
  unsigned unlogged_ = 0;  // transitions not yet logged
  unsigned log_lines_ = 0;
};

}  // namespace carrier::admin
