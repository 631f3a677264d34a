#include "store/log/segment_index_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "store/log/journal_directory.hpp"

namespace carrier::store::log {


Status write_index_file(const std::filesystem::path& dir, const SegmentIndexBuilder& builder,
                        std::uint64_t segment_bytes, bool sync) {
  const auto temp = index_temp_path(dir, builder.segment_id());
  const auto path = index_path(dir, builder.segment_id());
  return replace_file(dir, path, temp, builder.encode(segment_bytes), sync);
}

Result<SegmentIndex> load_index_file(const std::filesystem::path& dir, std::uint64_t segment_id,
                                     std::uint64_t segment_bytes) {
  const auto path = index_path(dir, segment_id);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return unexpected(err == ENOENT ? Errc::not_found : Errc::io_error,
                      "cannot open " + path.string() + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return unexpected(Errc::io_error, "cannot stat " + path.string() + ": " + std::strerror(err));
  }
  // An index takes at most about three bytes per byte of its segment (a 20-byte entry for an
  // 18-byte ack, each queue name once): anything bigger is not this segment's, and is not
  // read into memory.
  if (static_cast<std::uint64_t>(st.st_size) > 3 * segment_bytes + kIndexHeaderBytes + 4096) {
    ::close(fd);
    return unexpected(Errc::corrupt_data, path.string() + ": " + std::to_string(st.st_size) +
                                              " bytes, too large for a segment of " + std::to_string(segment_bytes) +
                                              " bytes");
  }
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return unexpected(Errc::io_error, "read of " + path.string() + " failed: " + std::strerror(err));
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  auto index = decode_segment_index(bytes);
  if (!index) return unexpected(Errc::corrupt_data, path.string() + ": " + index.error().detail);
  if (index->segment_id != segment_id) {
    return unexpected(Errc::corrupt_data, path.string() + ": names segment " + std::to_string(index->segment_id));
  }
  if (index->segment_bytes != segment_bytes) {
    return unexpected(Errc::corrupt_data, path.string() + ": stale, covers " + std::to_string(index->segment_bytes) +
                                              " bytes of a segment now " + std::to_string(segment_bytes) +
                                              " bytes long");
  }
  return std::move(*index);
}

}  // namespace carrier::store::log
