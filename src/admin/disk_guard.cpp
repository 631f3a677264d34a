#include "admin/disk_guard.hpp"

#include <sys/statvfs.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "base/logging.hpp"

namespace carrier::admin {

namespace {

std::shared_ptr<spdlog::logger> log() {
  static auto logger = logging::get("store");
  return logger;
}

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

std::optional<std::uint64_t> free_disk_bytes(const std::filesystem::path& path) {
  struct statvfs fs {};
  if (::statvfs(path.c_str(), &fs) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(fs.f_bavail) * static_cast<std::uint64_t>(fs.f_frsize);
}

void DiskGuard::poll(std::chrono::steady_clock::time_point now) {
  const auto free = probe_(dir_);
  if (!free) {
    // Unknown space holds nobody: a store that cannot write says so on its own batches.
    if (!probe_failed_) log()->warn("cannot read the free space of {}: {}", dir_.string(), std::strerror(errno));
    probe_failed_ = true;
    return;
  }
  probe_failed_ = false;
  const auto change = alarm_.update(*free);
  // A change inside the interval is counted, and the state it left is said once the interval is
  // over, so the last line in the log always tells the state in force.
  if (change != core::DiskAlarm::Transition::none) ++unlogged_;
  if (unlogged_ == 0 || (last_log_ && now - *last_log_ < kLogInterval)) return;
  const std::string also =
      unlogged_ == 1 ? std::string() : fmt::format(" ({} changes since the last line)", unlogged_);
  unlogged_ = 0;
  last_log_ = now;
  ++log_lines_;
  if (alarm_.holding()) {
    log()->warn("disk alarm: {:.1f} MiB free on {}, under [journal] disk_free_limit_bytes ({:.1f} MiB): "
                "publishers of persistent messages are held until space returns{}",
                mib(*free), dir_.string(), mib(alarm_.limit()), also);
  } else {
    log()->info("disk alarm cleared: {:.1f} MiB free on {} (limit {:.1f} MiB): held publishers resume{}", mib(*free),
                dir_.string(), mib(alarm_.limit()), also);
  }
}

}  // namespace carrier::admin
