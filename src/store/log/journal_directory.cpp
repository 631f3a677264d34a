#include "store/log/journal_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

namespace carrier::store::log {

namespace {

constexpr std::string_view kSegmentSuffix = ".log";
constexpr std::size_t kSegmentDigits = 20;
constexpr std::string_view kIndexSuffix = ".idx";
constexpr std::string_view kTempSuffix = ".tmp";

}  // namespace

std::filesystem::path journal_dir(const std::filesystem::path& data_dir) {
  return data_dir / "journal";
}

std::filesystem::path segment_path(const std::filesystem::path& dir, std::uint64_t id) {
  return dir / fmt::format("{:020}{}", id, kSegmentSuffix);
}

std::optional<std::uint64_t> parse_segment_name(const std::string& name) {
  if (name.size() != kSegmentDigits + kSegmentSuffix.size()) return std::nullopt;
  if (name.compare(kSegmentDigits, kSegmentSuffix.size(), kSegmentSuffix) != 0) return std::nullopt;
  std::uint64_t id = 0;
  for (std::size_t i = 0; i < kSegmentDigits; ++i) {
    const char c = name[i];
    if (c < '0' || c > '9') return std::nullopt;
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (id > (UINT64_MAX - digit) / 10) return std::nullopt;
    id = id * 10 + digit;
  }
  return id;
}

std::filesystem::path index_path(const std::filesystem::path& dir, std::uint64_t id) {
  return dir / fmt::format("{:020}{}", id, kIndexSuffix);
}

std::filesystem::path index_temp_path(const std::filesystem::path& dir, std::uint64_t id) {
  return dir / fmt::format("{:020}{}{}", id, kIndexSuffix, kTempSuffix);
}

Result<std::vector<IndexFile>> list_index_files(const std::filesystem::path& dir) {
  std::vector<IndexFile> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return unexpected(Errc::io_error, "cannot list " + dir.string() + ": " + ec.message());
  for (const auto& entry : it) {
    std::string name = entry.path().filename().string();
    const bool temporary = name.size() > kTempSuffix.size() &&
                           name.compare(name.size() - kTempSuffix.size(), kTempSuffix.size(), kTempSuffix) == 0;
    if (temporary) name.resize(name.size() - kTempSuffix.size());
    if (name.size() != kSegmentDigits + kIndexSuffix.size() ||
        name.compare(kSegmentDigits, kIndexSuffix.size(), kIndexSuffix) != 0) {
      continue;
    }
    // Same digits as a segment's name: reuse its parser on the .log spelling.
    auto id = parse_segment_name(name.substr(0, kSegmentDigits) + std::string(kSegmentSuffix));
    if (!id) continue;
    out.push_back(IndexFile{*id, entry.path(), temporary});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

Result<std::vector<SegmentFile>> list_segments(const std::filesystem::path& dir) {
  std::vector<SegmentFile> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return unexpected(Errc::io_error, "cannot list " + dir.string() + ": " + ec.message());
  for (const auto& entry : it) {
    auto id = parse_segment_name(entry.path().filename().string());
    if (!id) continue;
    std::error_code size_ec;
    const auto size = entry.file_size(size_ec);
    if (size_ec) {
      return unexpected(Errc::io_error, "cannot stat " + entry.path().string() + ": " +
                                            size_ec.message());
    }
    out.push_back(SegmentFile{*id, entry.path(), size});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

Status sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return unexpected(Errc::io_error, "cannot open directory " + dir.string() + ": " +
                                          std::strerror(errno));
  }
  Status status = ok();
  if (::fsync(fd) != 0) {
    status = unexpected(Errc::io_error, "fsync of directory " + dir.string() + " failed: " +
                                            std::strerror(errno));
  }
  ::close(fd);
  return status;
}

Status JournalLock::acquire(const std::filesystem::path& dir) {
  release();
  const auto path = dir / "LOCK";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return unexpected(Errc::io_error, "cannot open " + path.string() + ": " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return unexpected(Errc::unavailable,
                        "journal " + dir.string() + " is in use by another store (" +
                            path.string() + " is locked)");
    }
    return unexpected(Errc::io_error, "cannot lock " + path.string() + ": " + std::strerror(err));
  }
  fd_ = fd;
  return ok();
}

void JournalLock::release() {
  if (fd_ < 0) return;
  ::close(fd_);  // closing the descriptor drops the flock
  fd_ = -1;
}

Status write_from_start(int fd, const std::string& bytes, const std::filesystem::path& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      return unexpected(Errc::io_error, "write of " + path.string() + " at offset " + std::to_string(done) +
                                            " failed: " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  return ok();
}

Status replace_file(const std::filesystem::path& dir, const std::filesystem::path& path,
                    const std::filesystem::path& temp, const std::string& bytes, bool sync) {
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return unexpected(Errc::io_error, "cannot create " + temp.string() + ": " + std::strerror(errno));
  Status st = write_from_start(fd, bytes, temp);
  if (st && sync && ::fdatasync(fd) != 0) {
    st = unexpected(Errc::io_error, "fdatasync of " + temp.string() + " failed: " + std::strerror(errno));
  }
  ::close(fd);
  if (st && ::rename(temp.c_str(), path.c_str()) != 0) {
    st = unexpected(Errc::io_error, "cannot rename " + temp.string() + " to " + path.filename().string() + ": " +
                                        std::strerror(errno));
  }
  if (!st) {
    ::unlink(temp.c_str());
    return st;
  }
  if (sync) return sync_directory(dir);
  return ok();
}

}  // namespace carrier::store::log
