#include "store/log/segment_writer.hpp"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "store/log/journal_directory.hpp"
#include "store/log/record_codec.hpp"

namespace carrier::store::log {


SegmentWriter::~SegmentWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<SegmentWriter>> SegmentWriter::create(const std::filesystem::path& dir,
                                                             std::uint64_t id, bool sync) {
  auto path = segment_path(dir, id);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return unexpected(Errc::io_error, "cannot create " + path.string() + ": " + std::strerror(errno));
  }
  const std::string header = encode_segment_header(id);
  auto written = write_from_start(fd, header, path);
  if (written && sync && ::fdatasync(fd) != 0) {
    written = unexpected(Errc::io_error, "fdatasync of " + path.string() + " failed: " +
                                             std::strerror(errno));
  }
  if (written && sync) written = sync_directory(dir);
  if (!written) {
    ::close(fd);
    // Best effort: a leftover stub is harmless (recovery treats a last segment with a torn
    // header as empty, and the next attempt reuses this id with O_TRUNC).
    ::unlink(path.c_str());
    return unexpected(written.error());
  }
  return std::unique_ptr<SegmentWriter>(new SegmentWriter(fd, id, std::move(path), header.size()));
}

Result<std::unique_ptr<SegmentWriter>> SegmentWriter::reopen(const std::filesystem::path& dir,
                                                             std::uint64_t id, std::uint64_t size) {
  auto path = segment_path(dir, id);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return unexpected(Errc::io_error, "cannot open " + path.string() + ": " + std::strerror(errno));
  }
  return std::unique_ptr<SegmentWriter>(new SegmentWriter(fd, id, std::move(path), size));
}

Status SegmentWriter::append(const std::vector<iovec>& buffers) {
  CARRIER_ASSERT(!broken_, "append to broken segment {}", path_.string());
  std::uint64_t offset = size_;
  std::size_t next = 0;          // first buffer not fully written
  std::size_t partial = 0;       // bytes of buffers[next] already written
  while (next < buffers.size()) {
    slice_.clear();
    for (std::size_t i = next; i < buffers.size() && slice_.size() < IOV_MAX; ++i) {
      iovec v = buffers[i];
      if (i == next) {
        v.iov_base = static_cast<char*>(v.iov_base) + partial;
        v.iov_len -= partial;
      }
      if (v.iov_len > 0) slice_.push_back(v);
    }
    if (slice_.empty()) break;  // only empty buffers were left
    const ssize_t n = ::pwritev(fd_, slice_.data(), static_cast<int>(slice_.size()),
                                static_cast<off_t>(offset));
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      // A regular file never takes zero bytes of a non-empty write unless it is full.
      const int err = n < 0 ? errno : ENOSPC;
      Error cause(Errc::io_error, "write of " + path_.string() + " at offset " +
                                      std::to_string(size_) + " failed after " +
                                      std::to_string(offset - size_) + " bytes: " +
                                      std::strerror(err));
      auto undone = truncate_to(size_, cause);
      return unexpected(undone ? cause : undone.error());
    }
    offset += static_cast<std::uint64_t>(n);
    // Advance past what the kernel took (a short write is legal, e.g. near RLIMIT_FSIZE).
    std::size_t left = static_cast<std::size_t>(n);
    while (left > 0 && next < buffers.size()) {
      const std::size_t rest = buffers[next].iov_len - partial;
      if (left >= rest) {
        left -= rest;
        ++next;
        partial = 0;
      } else {
        partial += left;
        left = 0;
      }
    }
    while (next < buffers.size() && buffers[next].iov_len == 0) ++next;
  }
  size_ = offset;
  return ok();
}

Status SegmentWriter::sync(std::uint64_t rollback_to) {
  CARRIER_ASSERT(!broken_, "sync of broken segment {}", path_.string());
  if (::fdatasync(fd_) == 0) return ok();
  Error cause(Errc::io_error, "fdatasync of " + path_.string() + " failed: " + std::strerror(errno));
  const std::uint64_t keep = std::min(rollback_to, size_);
  auto undone = truncate_to(keep, cause);
  if (!undone) return undone;
  size_ = keep;
  return unexpected(std::move(cause));
}

Status SegmentWriter::truncate_to(std::uint64_t size, const Error& cause) {
  while (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
    if (errno == EINTR) continue;
    broken_ = true;
    return unexpected(Errc::io_error, cause.detail + "; truncating " + path_.string() +
                                          " back to " + std::to_string(size) +
                                          " bytes also failed: " + std::strerror(errno));
  }
  return ok();
}

}  // namespace carrier::store::log
