#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "base/result.hpp"

namespace carrier::store::log {

// Appends frames to the end of one segment file: positioned writes (pwritev) at an offset it
// tracks itself, so a failed write is undone with ftruncate and the next write lands exactly
// where the last good byte ended. Runs on: the log store's writer thread, its only owner.
//
// Invariant: size() bytes of the file are good frames (or the header), and after a failed
// append the file is truncated back to size(). If even that truncation fails, broken() turns
// true and the writer must not be used again (see LogStore).
class SegmentWriter {
 public:
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;
  ~SegmentWriter();

  // Creates journal_dir/<id>.log holding just the header, and (if `sync`) fsyncs the
  // directory so the new name survives a crash. O_TRUNC: a half-created file left by a failed
  // attempt with the same id is overwritten.
  static Result<std::unique_ptr<SegmentWriter>> create(const std::filesystem::path& journal_dir,
                                                       std::uint64_t id, bool sync);

  // Reopens an existing segment whose first `size` bytes recovery has validated.
  static Result<std::unique_ptr<SegmentWriter>> reopen(const std::filesystem::path& journal_dir,
                                                       std::uint64_t id, std::uint64_t size);

  std::uint64_t id() const { return id_; }
  std::uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }
  bool broken() const { return broken_; }

  // Writes the buffers back to back at size(), with as few pwritev calls as IOV_MAX allows.
  // On failure nothing of them remains in the file (it is truncated back) and size() is
  // unchanged; the error names the file and offset.
  Status append(const std::vector<iovec>& buffers);

  // fdatasync. On failure, truncates back to `rollback_to` (the size before the unsynced
  // writes): after a failed sync the kernel may have dropped those pages, so the store reports
  // them failed and must not leave them in the file to be recovered later.
  Status sync(std::uint64_t rollback_to);

 private:
  SegmentWriter(int fd, std::uint64_t id, std::filesystem::path path, std::uint64_t size)
      : fd_(fd), id_(id), path_(std::move(path)), size_(size) {}
  Status truncate_to(std::uint64_t size, const Error& cause);

  int fd_;
  std::uint64_t id_;
  std::filesystem::path path_;
  std::uint64_t size_;
  bool broken_ = false;
  std::vector<iovec> slice_;  // reused: the buffers handed to one pwritev call
};

}  // namespace carrier::store::log
