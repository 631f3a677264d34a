#include "store/log/live_set_checkpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "store/binary_format.hpp"
#include "store/log/crc32c.hpp"
#include "store/log/journal_directory.hpp"

namespace carrier::store::log {

namespace {

using binary::ByteReader;

// Decoding helpers named for this file (unity builds: other files have their own).
#define CARRIER_CKPT_TRY(var, expr)                              \
  auto var##_r = (expr);                                 \
  if (!var##_r) return unexpected(std::move(var##_r).error()); \
  auto var = *var##_r

void put_location(std::string& out, const Location& l) {
  binary::put_varint(out, l.file);
  binary::put_varint(out, l.offset);
  binary::put_varint(out, l.record);
}

Result<Location> read_location(ByteReader& in) {
  CARRIER_CKPT_TRY(file, in.varint("checkpoint location"));
  CARRIER_CKPT_TRY(offset, in.varint("checkpoint location"));
  CARRIER_CKPT_TRY(record, in.varint("checkpoint location"));
  if (offset > UINT32_MAX || record > UINT32_MAX) return in.fail("checkpoint location", "out of range", in.offset());
  return Location{file, static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(record)};
}

// A count that each element needs at least `min_bytes` for: checked against what is left, so a
// forged count cannot make the decoder allocate.
Result<std::uint64_t> read_count(ByteReader& in, std::size_t min_bytes, const char* what) {
  CARRIER_CKPT_TRY(n, in.varint(what));
  if (n > in.remaining() / min_bytes) return in.fail(what, "count " + std::to_string(n) + " exceeds the bytes left", in.offset());
  return n;
}

}  // namespace

std::string encode_checkpoint(const LiveSetCheckpoint& c) {
  std::string content;
  binary::put_varint(content, c.queues.size());
  for (const auto& q : c.queues) binary::put_string(content, q);
  binary::put_varint(content, c.segments.size());
  for (const auto& s : c.segments) {
    binary::put_varint(content, s.id);
    binary::put_varint(content, s.bytes);
    binary::put_varint(content, s.records);
    binary::put_varint(content, s.live);
    binary::put_varint(content, s.depends_on.size());
    for (auto d : s.depends_on) binary::put_varint(content, d);
    binary::put_varint(content, s.bits.size());
    for (auto w : s.bits) binary::put_u64(content, w);
  }
  binary::put_varint(content, c.lanes.size());
  for (const auto& l : c.lanes) {
    binary::put_varint(content, l.queue);
    binary::put_u8(content, l.priority);
    binary::put_varint(content, l.count);
    binary::put_varint(content, l.bytes);
    put_location(content, l.from);
  }
  binary::put_varint(content, c.delivered.size());
  for (const auto& d : c.delivered) {
    binary::put_varint(content, d.segment);
    binary::put_varint(content, d.ordinal);
    binary::put_varint(content, d.delivered_in);
  }
  binary::put_varint(content, c.listed.size());
  for (const auto& m : c.listed) {
    binary::put_varint(content, m.queue);
    put_location(content, m.location);
    binary::put_varint(content, m.delivery_count);
    const MessageSummary& s = m.summary;
    binary::put_u64(content, s.id.hi);
    binary::put_u64(content, s.id.lo);
    binary::put_u8(content, s.priority);
    binary::put_u8(content, s.persistent ? 1 : 0);
    binary::put_u64(content, static_cast<std::uint64_t>(s.timestamp_ms));
    binary::put_u64(content, static_cast<std::uint64_t>(s.expires_ms));
    binary::put_u64(content, static_cast<std::uint64_t>(s.deliver_at_ms));
    binary::put_varint(content, s.footprint);
  }
  std::string out;
  out.reserve(kCheckpointHeaderBytes + content.size());
  out.append(kCheckpointMagic);
  binary::put_u32(out, kCheckpointFormatVersion);
  binary::put_u32(out, 0);
  binary::put_u64(out, c.covered_segment);
  binary::put_u64(out, c.covered_bytes);
  binary::put_u64(out, content.size());
  binary::put_u32(out, crc32c(content));
  binary::put_u32(out, crc32c(out));
  out += content;
  return out;
}

Result<LiveSetCheckpoint> decode_checkpoint(std::string_view bytes) {
  if (bytes.size() < kCheckpointHeaderBytes) return unexpected(Errc::corrupt_data, "checkpoint: truncated header");
  if (bytes.substr(0, 8) != kCheckpointMagic) return unexpected(Errc::corrupt_data, "checkpoint: bad magic");
  const std::uint32_t version = binary::load_u32(bytes.data() + 8);
  if (version != kCheckpointFormatVersion) {
    return unexpected(Errc::corrupt_data, "checkpoint: format version " + std::to_string(version) +
                                              " (this build reads version " +
                                              std::to_string(kCheckpointFormatVersion) + ")");
  }
  if (crc32c(bytes.substr(0, 44)) != binary::load_u32(bytes.data() + 44)) {
    return unexpected(Errc::corrupt_data, "checkpoint: header checksum mismatch");
  }
  if (binary::load_u32(bytes.data() + 12) != 0) return unexpected(Errc::corrupt_data, "checkpoint: unknown flags");
  LiveSetCheckpoint c;
  c.covered_segment = binary::load_u64(bytes.data() + 16);
  c.covered_bytes = binary::load_u64(bytes.data() + 24);
  const std::uint64_t content_bytes = binary::load_u64(bytes.data() + 32);
  if (content_bytes != bytes.size() - kCheckpointHeaderBytes) {
    return unexpected(Errc::corrupt_data, "checkpoint: " + std::to_string(bytes.size() - kCheckpointHeaderBytes) +
                                              " bytes of content, the header says " + std::to_string(content_bytes));
  }
  const std::string_view content = bytes.substr(kCheckpointHeaderBytes);
  if (crc32c(content) != binary::load_u32(bytes.data() + 40)) {
    return unexpected(Errc::corrupt_data, "checkpoint: content checksum mismatch");
  }
  ByteReader in(content, kCheckpointHeaderBytes);
  CARRIER_CKPT_TRY(queues, read_count(in, 1, "checkpoint queues"));
  c.queues.reserve(queues);
  for (std::uint64_t i = 0; i < queues; ++i) {
    CARRIER_CKPT_TRY(name, in.bytes("checkpoint queue"));
    c.queues.emplace_back(name);
  }
  CARRIER_CKPT_TRY(segments, read_count(in, 6, "checkpoint segments"));
  c.segments.reserve(segments);
  for (std::uint64_t i = 0; i < segments; ++i) {
    LiveSetCheckpoint::Segment s;
    CARRIER_CKPT_TRY(id, in.varint("checkpoint segment"));
    CARRIER_CKPT_TRY(size, in.varint("checkpoint segment"));
    CARRIER_CKPT_TRY(records, in.varint("checkpoint segment"));
    CARRIER_CKPT_TRY(live, in.varint("checkpoint segment"));
    if (records > UINT32_MAX) return in.fail("checkpoint segment", "record count out of range", in.offset());
    if (!c.segments.empty() && id <= c.segments.back().id) return in.fail("checkpoint segment", "ids not ascending", in.offset());
    s.id = id;
    s.bytes = size;
    s.records = static_cast<std::uint32_t>(records);
    s.live = live;
    CARRIER_CKPT_TRY(deps, read_count(in, 1, "checkpoint dependencies"));
    s.depends_on.reserve(deps);
    for (std::uint64_t d = 0; d < deps; ++d) {
      CARRIER_CKPT_TRY(dep, in.varint("checkpoint dependency"));
      s.depends_on.push_back(dep);
    }
    CARRIER_CKPT_TRY(words, read_count(in, 8, "checkpoint bitmap"));
    if (words > (records + 63) / 64) return in.fail("checkpoint bitmap", "longer than its records", in.offset());
    s.bits.reserve(words);
    for (std::uint64_t w = 0; w < words; ++w) {
      CARRIER_CKPT_TRY(word, in.u64("checkpoint bitmap"));
      s.bits.push_back(word);
    }
    c.segments.push_back(std::move(s));
  }
  CARRIER_CKPT_TRY(lanes, read_count(in, 7, "checkpoint lanes"));
  c.lanes.reserve(lanes);
  for (std::uint64_t i = 0; i < lanes; ++i) {
    LiveSetCheckpoint::Lane l;
    CARRIER_CKPT_TRY(queue, in.varint("checkpoint lane"));
    CARRIER_CKPT_TRY(priority, in.u8("checkpoint lane"));
    CARRIER_CKPT_TRY(count, in.varint("checkpoint lane"));
    CARRIER_CKPT_TRY(lane_bytes, in.varint("checkpoint lane"));
    CARRIER_CKPT_TRY(from, read_location(in));
    if (queue >= c.queues.size()) return in.fail("checkpoint lane", "queue out of range", in.offset());
    l.queue = static_cast<std::uint32_t>(queue);
    l.priority = priority;
    l.count = count;
    l.bytes = lane_bytes;
    l.from = from;
    c.lanes.push_back(l);
  }
  CARRIER_CKPT_TRY(delivered, read_count(in, 3, "checkpoint delivered"));
  c.delivered.reserve(delivered);
  for (std::uint64_t i = 0; i < delivered; ++i) {
    CARRIER_CKPT_TRY(segment, in.varint("checkpoint delivered"));
    CARRIER_CKPT_TRY(ordinal, in.varint("checkpoint delivered"));
    CARRIER_CKPT_TRY(in_segment, in.varint("checkpoint delivered"));
    if (ordinal > UINT32_MAX) return in.fail("checkpoint delivered", "ordinal out of range", in.offset());
    c.delivered.push_back({segment, static_cast<std::uint32_t>(ordinal), in_segment});
  }
  CARRIER_CKPT_TRY(listed, read_count(in, 48, "checkpoint listed messages"));
  c.listed.reserve(listed);
  for (std::uint64_t i = 0; i < listed; ++i) {
    LiveSetCheckpoint::Listed m;
    CARRIER_CKPT_TRY(queue, in.varint("checkpoint listed message"));
    if (queue >= c.queues.size()) return in.fail("checkpoint listed message", "queue out of range", in.offset());
    CARRIER_CKPT_TRY(location, read_location(in));
    CARRIER_CKPT_TRY(count, in.varint("checkpoint listed message"));
    if (count > UINT32_MAX) return in.fail("checkpoint listed message", "delivery count out of range", in.offset());
    CARRIER_CKPT_TRY(hi, in.u64("checkpoint listed message"));
    CARRIER_CKPT_TRY(lo, in.u64("checkpoint listed message"));
    CARRIER_CKPT_TRY(priority, in.u8("checkpoint listed message"));
    CARRIER_CKPT_TRY(persistent, in.u8("checkpoint listed message"));
    CARRIER_CKPT_TRY(timestamp, in.u64("checkpoint listed message"));
    CARRIER_CKPT_TRY(expires, in.u64("checkpoint listed message"));
    CARRIER_CKPT_TRY(deliver_at, in.u64("checkpoint listed message"));
    CARRIER_CKPT_TRY(footprint, in.varint("checkpoint listed message"));
    if (persistent > 1 || footprint > UINT32_MAX) return in.fail("checkpoint listed message", "bad summary", in.offset());
    m.queue = static_cast<std::uint32_t>(queue);
    m.location = location;
    m.delivery_count = static_cast<std::uint32_t>(count);
    m.summary.id = model::MessageId{hi, lo};
    m.summary.priority = priority;
    m.summary.persistent = persistent == 1;
    m.summary.timestamp_ms = static_cast<std::int64_t>(timestamp);
    m.summary.expires_ms = static_cast<std::int64_t>(expires);
    m.summary.deliver_at_ms = static_cast<std::int64_t>(deliver_at);
    m.summary.footprint = static_cast<std::uint32_t>(footprint);
    c.listed.push_back(m);
  }
  if (!in.at_end()) return in.fail("checkpoint", "bytes after the last entry", in.offset());
  return c;
}

#undef CARRIER_CKPT_TRY

std::filesystem::path checkpoint_path(const std::filesystem::path& dir) { return dir / "live.ckpt"; }

Status write_checkpoint_file(const std::filesystem::path& dir, const LiveSetCheckpoint& c, bool sync) {
  const auto path = checkpoint_path(dir);
  auto temp = path;
  temp += ".tmp";
  return replace_file(dir, path, temp, encode_checkpoint(c), sync);
}

Result<LiveSetCheckpoint> load_checkpoint_file(const std::filesystem::path& dir) {
  const auto path = checkpoint_path(dir);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return unexpected(err == ENOENT ? Errc::not_found : Errc::io_error,
                      "cannot open " + path.string() + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) > kMaxCheckpointBytes) {
    ::close(fd);
    return unexpected(Errc::corrupt_data, path.string() + ": cannot stat, or too large to be a checkpoint");
  }
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return unexpected(Errc::io_error, "cannot read " + path.string());
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  auto decoded = decode_checkpoint(bytes);
  if (!decoded) return unexpected(Errc::corrupt_data, path.string() + ": " + decoded.error().detail);
  return decoded;
}

Status remove_checkpoint_file(const std::filesystem::path& dir, bool sync) {
  const auto path = checkpoint_path(dir);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return unexpected(Errc::io_error, "cannot remove " + path.string() + ": " + std::strerror(errno));
  }
  auto temp = path;
  temp += ".tmp";
  ::unlink(temp.c_str());
  if (sync) return sync_directory(dir);
  return ok();
}

}  // namespace carrier::store::log
