#include "store/log/segment_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "store/binary_format.hpp"
#include "store/log/crc32c.hpp"

namespace carrier::store::log {

Result<SegmentReader> SegmentReader::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return unexpected(Errc::io_error, "cannot open " + path.string() + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return unexpected(Errc::io_error, "cannot stat " + path.string() + ": " + std::strerror(err));
  }
  std::string bytes;
  bytes.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return unexpected(Errc::io_error, "read of " + path.string() + " at offset " +
                                            std::to_string(done) + " failed: " + std::strerror(err));
    }
    if (n == 0) break;  // shrank while we read: take what is there
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return SegmentReader(std::move(bytes), path);
}

SegmentReader SegmentReader::from_bytes(std::string bytes, std::filesystem::path name) {
  return SegmentReader(std::move(bytes), std::move(name));
}

Result<SegmentHeader> SegmentReader::read_header() {
  auto header = decode_segment_header(bytes_);
  if (header) pos_ = kSegmentHeaderBytes;
  return header;
}

SegmentReader::Item SegmentReader::next() {
  Item item;
  item.offset = pos_;
  if (pos_ >= bytes_.size()) {
    item.kind = Item::Kind::end;
    return item;
  }
  const std::string_view rest = std::string_view(bytes_).substr(pos_);
  auto damaged = [&](std::string why, bool truncated) {
    item.kind = Item::Kind::damaged;
    item.truncated = truncated;
    item.detail = path_.string() + " at offset " + std::to_string(item.offset) + ": " + why;
    return std::move(item);
  };
  if (rest.size() < kBatchHeaderBytes) {
    return damaged("file ends inside a batch header (" + std::to_string(rest.size()) + " of " +
                       std::to_string(kBatchHeaderBytes) + " bytes)", true);
  }
  auto header = decode_batch_header(rest);
  if (!header) return damaged(header.error().detail, false);
  const std::uint64_t frame = kBatchHeaderBytes + std::uint64_t(header->payload_bytes);
  if (frame > rest.size()) {
    return damaged("file ends inside a batch (" + std::to_string(rest.size()) + " of " +
                       std::to_string(frame) + " bytes)", true);
  }
  const std::string_view payload = rest.substr(kBatchHeaderBytes, header->payload_bytes);
  if (crc32c(payload) != header->payload_crc) {
    return damaged("batch payload checksum mismatch", false);
  }
  auto batch = decode_batch_payload(payload, header->record_count, kBatchHeaderBytes);
  if (!batch) {
    // The checksum matched, so these bytes are what was written: a writer bug or a format
    // this build does not understand. Either way, not a torn write.
    return damaged("batch does not decode: " + batch.error().detail, false);
  }
  item.kind = Item::Kind::batch;
  item.batch = std::move(*batch);
  item.next = pos_ + frame;
  pos_ = item.next;
  return item;
}

std::optional<std::uint64_t> SegmentReader::find_next_frame(std::uint64_t after) const {
  const std::string_view all(bytes_);
  char magic[4];
  binary::store_u32(magic, kBatchMagic);
  const std::string_view needle(magic, 4);
  std::size_t at = static_cast<std::size_t>(after) + 1;
  while (at < all.size()) {
    at = all.find(needle, at);
    if (at == std::string_view::npos) return std::nullopt;
    const std::string_view rest = all.substr(at);
    auto header = decode_batch_header(rest);
    if (header && kBatchHeaderBytes + std::uint64_t(header->payload_bytes) <= rest.size() &&
        crc32c(rest.substr(kBatchHeaderBytes, header->payload_bytes)) == header->payload_crc) {
      return at;
    }
    ++at;
  }
  return std::nullopt;
}

}  // namespace carrier::store::log
