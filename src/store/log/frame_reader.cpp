#include "store/log/frame_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "store/log/journal_directory.hpp"
#include "store/log/record_codec.hpp"

namespace carrier::store::log {

namespace {

// Reads exactly `n` bytes at `offset` into `out`; a short file is corrupt_data (the location
// points past the end of what was written).
Status pread_exact(int fd, std::string& out, std::size_t n, std::uint64_t offset, const std::filesystem::path& path) {
  out.resize(n);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, out.data() + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return unexpected(Errc::io_error, "read of " + path.string() + " at offset " + std::to_string(offset + done) +
                                            " failed: " + std::strerror(errno));
    }
    if (got == 0) {
      return unexpected(Errc::corrupt_data, path.string() + ": no frame of " + std::to_string(n) +
                                                " bytes at offset " + std::to_string(offset) + " (the file ends at " +
                                                std::to_string(offset + done) + ")");
    }
    done += static_cast<std::size_t>(got);
  }
  return ok();
}

}  // namespace

void FrameReader::close_all() {
  for (const auto& [id, fd] : open_) ::close(fd);
  open_.clear();
}

Result<int> FrameReader::descriptor(std::uint64_t segment) {
  if (auto it = open_.find(segment); it != open_.end()) return it->second;
  const auto path = segment_path(dir_, segment);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return unexpected(err == ENOENT ? Errc::not_found : Errc::io_error,
                      "cannot open " + path.string() + ": " + std::strerror(err));
  }
  open_.emplace(segment, fd);
  return fd;
}

Result<Batch> FrameReader::read_batch(std::uint64_t segment, std::uint64_t offset) {
  auto frame = read_frame(segment, offset);
  if (!frame) return unexpected(std::move(frame).error());
  return std::move(frame->batch);
}

Result<std::uint64_t> FrameReader::file_size(std::uint64_t segment) {
  auto fd = descriptor(segment);
  if (!fd) return unexpected(std::move(fd).error());
  struct stat st {};
  if (::fstat(*fd, &st) != 0) {
    return unexpected(Errc::io_error, "cannot stat " + segment_path(dir_, segment).string() + ": " + std::strerror(errno));
  }
  return static_cast<std::uint64_t>(st.st_size);
}

Result<DecodedBatch> FrameReader::read_frame(std::uint64_t segment, std::uint64_t offset) {
  auto fd = descriptor(segment);
  if (!fd) return unexpected(std::move(fd).error());
  const auto path = segment_path(dir_, segment);
  if (offset < kSegmentHeaderBytes) {
    return unexpected(Errc::corrupt_data, path.string() + ": offset " + std::to_string(offset) + " is inside the header");
  }
  std::string frame;
  if (auto st = pread_exact(*fd, frame, kBatchHeaderBytes, offset, path); !st) return unexpected(st.error());
  auto header = decode_batch_header(frame);
  if (!header) {
    return unexpected(Errc::corrupt_data,
                      path.string() + " at offset " + std::to_string(offset) + ": " + header.error().detail);
  }
  if (auto st = pread_exact(*fd, frame, kBatchHeaderBytes + header->payload_bytes, offset, path); !st) {
    return unexpected(st.error());
  }
  auto decoded = decode_batch(frame);
  if (!decoded) {
    return unexpected(Errc::corrupt_data,
                      path.string() + " at offset " + std::to_string(offset) + ": " + decoded.error().detail);
  }
  return std::move(*decoded);
}

}  // namespace carrier::store::log
