#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"

// The journal's directory: naming and listing segment files, making directory changes
// durable, and the lock that keeps a second process out. Runs on: whichever thread owns the
// store at the time (start-up, then the writer thread); nothing here keeps state between calls
// except JournalLock.
namespace carrier::store::log {

// data_dir/journal
std::filesystem::path journal_dir(const std::filesystem::path& data_dir);

// journal_dir/00000000000000000001.log: 20 digits, so names sort like ids.
std::filesystem::path segment_path(const std::filesystem::path& journal_dir, std::uint64_t id);

// The id in a segment file name, or nullopt for a name that is not a segment's.
std::optional<std::uint64_t> parse_segment_name(const std::string& file_name);

// journal_dir/00000000000000000001.idx: the checkpointed index of that segment, and the
// temporary name it is written under before the rename (…001.idx.tmp).
std::filesystem::path index_path(const std::filesystem::path& journal_dir, std::uint64_t id);
std::filesystem::path index_temp_path(const std::filesystem::path& journal_dir, std::uint64_t id);

struct IndexFile {
  std::uint64_t id = 0;
  std::filesystem::path path;
  bool temporary = false;  // a .idx.tmp left by a crash before its rename
};

// Every index file (.idx and .idx.tmp) in the directory, ascending by id.
Result<std::vector<IndexFile>> list_index_files(const std::filesystem::path& journal_dir);

struct SegmentFile {
  std::uint64_t id = 0;
  std::filesystem::path path;
  std::uint64_t size = 0;
};

// Every segment in the directory, ascending by id. Other files are ignored.
Result<std::vector<SegmentFile>> list_segments(const std::filesystem::path& journal_dir);

// fsync on the directory: makes a created, renamed or removed entry survive a crash.
Status sync_directory(const std::filesystem::path& dir);

// Writes all of `bytes` to fd from offset 0, through short writes and EINTR; an error names
// `path` and the offset. A write that makes no progress is ENOSPC.
Status write_from_start(int fd, const std::string& bytes, const std::filesystem::path& path);

// Replaces `path` (in `dir`) with `bytes` whole or not at all: writes `temp`, fdatasyncs it,
// renames it over `path` and fsyncs `dir` (the syncs only with `sync`); on failure `temp` is
// removed and `path` left as it was. What segment indexes and the live-set checkpoint use.
Status replace_file(const std::filesystem::path& dir, const std::filesystem::path& path,
                    const std::filesystem::path& temp, const std::string& bytes, bool sync);

// An exclusive flock() on journal_dir/LOCK for the store's lifetime: two brokers appending to
// one journal would interleave frames. Released by release() or the destructor.
class JournalLock {
 public:
  JournalLock() = default;
  JournalLock(const JournalLock&) = delete;
  JournalLock& operator=(const JournalLock&) = delete;
  ~JournalLock() { release(); }

  // Errc::unavailable if another process (or store in this process) holds it.
  Status acquire(const std::filesystem::path& journal_dir);
  void release();

 private:
  int fd_ = -1;
};

}  // namespace carrier::store::log
