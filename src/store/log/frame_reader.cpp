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

// Reads `n` bytes at `offset` into `out`, or fewer if the file ends after at least `need` of
// them; ending before `need` is corrupt_data (the location points past the end of what was
// written).
Status pread_at_least(int fd, std::string& out, std::size_t need, std::size_t n, std::uint64_t offset,
                      const std::filesystem::path& dir, std::uint64_t segment) {
  auto path = [&] { return segment_path(dir, segment); };
  out.resize(n);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, out.data() + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      return unexpected(Errc::io_error, "read of " + path().string() + " at offset " + std::to_string(offset + done) +
                                            " failed: " + std::strerror(err));
    }
    if (got == 0) {
      if (done >= need) break;
      return unexpected(Errc::corrupt_data, path().string() + ": no frame of " + std::to_string(need) +
                                                " bytes at offset " + std::to_string(offset) + " (the file ends at " +
                                                std::to_string(offset + done) + ")");
    }
    done += static_cast<std::size_t>(got);
  }
  out.resize(done);
  return ok();
}

}  // namespace

void FrameReader::close_all() {
  for (const auto& [id, fd] : open_) ::close(fd);
  open_.clear();
  window_segment_ = 0;
  window_.clear();
  // A large frame grew it: give that back rather than keep it for the next group.
  if (window_.capacity() > 2 * kReadAheadBytes) std::string().swap(window_);
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
  if (offset < kSegmentHeaderBytes) {
    return unexpected(Errc::corrupt_data, segment_path(dir_, segment).string() + ": offset " + std::to_string(offset) +
                                              " is inside the header");
  }
  if (auto in_window = frame_in_window(segment, offset)) {
    ++window_hits_;
    return std::move(*in_window);
  }
  return read_frame_from_file(*fd, segment, offset);
}

std::optional<DecodedBatch> FrameReader::frame_in_window(std::uint64_t segment, std::uint64_t offset) {
  if (window_segment_ != segment || offset < window_offset_) return std::nullopt;
  const std::uint64_t at = offset - window_offset_;
  if (at + kBatchHeaderBytes > window_.size()) return std::nullopt;
  const std::string_view rest = std::string_view(window_).substr(at);
  auto header = decode_batch_header(rest);
  if (!header || kBatchHeaderBytes + std::uint64_t{header->payload_bytes} > rest.size()) return std::nullopt;
  // Bytes the writer had not finished when they were read fail a checksum here: read afresh.
  auto decoded = decode_batch(rest);
  if (!decoded) return std::nullopt;
  return std::move(*decoded);
}

Result<DecodedBatch> FrameReader::read_frame_from_file(int fd, std::uint64_t segment, std::uint64_t offset) {
  // The path is only for error details: building it for every frame cost more than the preads.
  auto path = [&] { return segment_path(dir_, segment); };
  window_segment_ = 0;
  ++preads_;
  if (auto st = pread_at_least(fd, window_, kBatchHeaderBytes, kReadAheadBytes, offset, dir_, segment); !st) {
    return unexpected(st.error());
  }
  auto header = decode_batch_header(window_);
  if (!header) {
    return unexpected(Errc::corrupt_data,
                      path().string() + " at offset " + std::to_string(offset) + ": " + header.error().detail);
  }
  const std::size_t frame_bytes = kBatchHeaderBytes + header->payload_bytes;
  if (frame_bytes > window_.size()) {
    // Larger than the window (or the file ends inside it): the frame alone, exactly.
    ++preads_;
    if (auto st = pread_at_least(fd, window_, frame_bytes, frame_bytes, offset, dir_, segment); !st) {
      return unexpected(st.error());
    }
  }
  auto decoded = decode_batch(std::string_view(window_).substr(0, frame_bytes));
  if (!decoded) {
    return unexpected(Errc::corrupt_data,
                      path().string() + " at offset " + std::to_string(offset) + ": " + decoded.error().detail);
  }
  window_segment_ = segment;
  window_offset_ = offset;
  return std::move(*decoded);
}

}  // namespace carrier::store::log
