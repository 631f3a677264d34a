#include "store/log/segment_index_codec.hpp"

#include <algorithm>

#include "base/assert.hpp"
#include "store/binary_format.hpp"
#include "store/log/crc32c.hpp"
#include "store/log/stored_ref_codec.hpp"

namespace carrier::store::log {

namespace {

constexpr std::uint8_t kPersistentFlag = 1;
constexpr std::uint8_t kSpilledFlag = 2;
// kind + queue + id + offset + record: the least an entry can take (one-byte varints).
constexpr std::size_t kMinEntryBytes = 1 + 1 + 16 + 1 + 1;

}  // namespace

MessageSummary summarize(const model::Message& m) {
  MessageSummary s;
  s.id = m.id;
  s.priority = m.priority;
  s.persistent = m.persistent;
  s.spilled = m.spilled && !m.persistent;
  s.timestamp_ms = m.timestamp_ms;
  s.expires_ms = m.expires_ms;
  s.deliver_at_ms = m.deliver_at_ms;
  s.footprint = static_cast<std::uint32_t>(std::min<std::size_t>(m.footprint(), UINT32_MAX));
  return s;
}

void SegmentIndexBuilder::reset(std::uint64_t segment_id) {
  segment_id_ = segment_id;
  queue_ids_.clear();
  queues_.clear();
  entries_.clear();
  record_count_ = 0;
}

std::uint32_t SegmentIndexBuilder::queue_index(const std::string& queue) {
  auto [it, inserted] = queue_ids_.try_emplace(queue, static_cast<std::uint32_t>(queue_ids_.size()));
  if (inserted) binary::put_string(queues_, queue);
  return it->second;
}

void SegmentIndexBuilder::add_batch(std::uint64_t offset, const Batch& batch) {
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const Record& r = batch[i];
    binary::put_u8(entries_, written_kind(r.kind, r.stored));
    binary::put_varint(entries_, queue_index(r.queue));
    binary::put_u64(entries_, r.message_id.hi);
    binary::put_u64(entries_, r.message_id.lo);
    binary::put_varint(entries_, offset);
    binary::put_varint(entries_, i);
    if (r.kind == RecordKind::delivered) binary::put_varint(entries_, r.delivery_count);
    if (r.kind != RecordKind::message) {
      if (r.stored.known()) put_stored_ref(entries_, r.stored);
    } else {
      CARRIER_ASSERT(r.message != nullptr, "indexing a message record without its message");
      const MessageSummary s = summarize(*r.message);
      binary::put_u8(entries_, s.priority);
      binary::put_u8(entries_, static_cast<std::uint8_t>((s.persistent ? kPersistentFlag : 0) | (s.spilled ? kSpilledFlag : 0)));
      binary::put_u64(entries_, static_cast<std::uint64_t>(s.timestamp_ms));
      binary::put_u64(entries_, static_cast<std::uint64_t>(s.expires_ms));
      binary::put_u64(entries_, static_cast<std::uint64_t>(s.deliver_at_ms));
      binary::put_varint(entries_, s.footprint);
    }
    ++record_count_;
  }
}

std::string SegmentIndexBuilder::encode(std::uint64_t segment_bytes) const {
  std::string out(kIndexHeaderBytes, '\0');
  out.reserve(kIndexHeaderBytes + queues_.size() + entries_.size());
  out.append(queues_);
  out.append(entries_);
  char* h = out.data();
  std::copy(kIndexMagic.begin(), kIndexMagic.end(), h);
  binary::store_u32(h + 8, kIndexFormatVersion);
  binary::store_u32(h + 12, 0);  // flags
  binary::store_u64(h + 16, segment_id_);
  binary::store_u64(h + 24, segment_bytes);
  binary::store_u32(h + 32, static_cast<std::uint32_t>(queue_ids_.size()));
  binary::store_u32(h + 36, record_count_);
  binary::store_u32(h + 40, crc32c(std::string_view(out).substr(kIndexHeaderBytes)));
  binary::store_u32(h + 44, crc32c(std::string_view(h, 44)));
  return out;
}

Result<SegmentIndex> decode_segment_index(std::string_view bytes) {
  if (bytes.size() < kIndexHeaderBytes) {
    return unexpected(Errc::corrupt_data, "index header truncated: " + std::to_string(bytes.size()) + " of " +
                                              std::to_string(kIndexHeaderBytes) + " bytes");
  }
  const char* h = bytes.data();
  if (bytes.substr(0, kIndexMagic.size()) != kIndexMagic) {
    return unexpected(Errc::corrupt_data, "index header: bad magic at offset 0");
  }
  const std::uint32_t version = binary::load_u32(h + 8);
  if (version != kIndexFormatVersion) {
    return unexpected(Errc::corrupt_data, "unsupported index format version " + std::to_string(version) +
                                              " (this build reads version " + std::to_string(kIndexFormatVersion) +
                                              ")");
  }
  if (binary::load_u32(h + 44) != crc32c(bytes.substr(0, 44))) {
    return unexpected(Errc::corrupt_data, "index header: checksum mismatch at offset 44");
  }
  if (binary::load_u32(h + 12) != 0) return unexpected(Errc::corrupt_data, "index header: unknown flags at offset 12");
  const std::string_view content = bytes.substr(kIndexHeaderBytes);
  if (binary::load_u32(h + 40) != crc32c(content)) {
    return unexpected(Errc::corrupt_data, "index content: checksum mismatch");
  }
  SegmentIndex out;
  out.segment_id = binary::load_u64(h + 16);
  out.segment_bytes = binary::load_u64(h + 24);
  const std::uint32_t queue_count = binary::load_u32(h + 32);
  const std::uint32_t record_count = binary::load_u32(h + 36);
  // Bound the counts by what the content could hold before reserving anything.
  if (queue_count > content.size() || record_count > content.size() / kMinEntryBytes) {
    return unexpected(Errc::corrupt_data, "index header: " + std::to_string(queue_count) + " queues and " +
                                              std::to_string(record_count) + " records cannot fit in " +
                                              std::to_string(content.size()) + " bytes");
  }
  binary::ByteReader in(content, kIndexHeaderBytes);
  // A name takes at least one byte of content but 32 bytes of std::string: grow, don't reserve.
  out.queues.reserve(std::min<std::uint32_t>(queue_count, 1024));
  for (std::uint32_t q = 0; q < queue_count; ++q) {
    CARRIER_STORE_TRY(name, in.bytes("index queue name"));
    out.queues.emplace_back(name);
  }
  out.records.reserve(record_count);
  for (std::uint32_t i = 0; i < record_count; ++i) {
    IndexRecord r;
    const std::size_t at = in.offset();
    CARRIER_STORE_TRY(kind, in.u8("index record kind"));
    bool names_copy = false;
    if (!read_kind(kind, r.kind, names_copy)) {
      return in.fail("index record kind", "unknown value " + std::to_string(kind), at);
    }
    CARRIER_STORE_TRY(queue, in.varint("index record queue"));
    if (queue >= queue_count) return in.fail("index record queue", "no queue " + std::to_string(queue), at);
    r.queue = static_cast<std::uint32_t>(queue);
    CARRIER_STORE_TRY(hi, in.u64("index record id"));
    CARRIER_STORE_TRY(lo, in.u64("index record id"));
    r.id = model::MessageId{hi, lo};
    CARRIER_STORE_TRY(offset, in.varint("index record offset"));
    r.offset = offset;
    CARRIER_STORE_TRY(record, in.varint("index record position"));
    if (record > UINT32_MAX) return in.fail("index record position", "exceeds 32 bits", at);
    r.record = static_cast<std::uint32_t>(record);
    if (r.kind == RecordKind::delivered) {
      CARRIER_STORE_TRY(count, in.varint("index delivery count"));
      if (count > UINT32_MAX) return in.fail("index delivery count", "exceeds 32 bits", at);
      r.delivery_count = static_cast<std::uint32_t>(count);
    }
    if (names_copy) {
      CARRIER_STORE_TRY(stored, read_stored_ref(in));
      r.stored = stored;
    } else if (r.kind == RecordKind::message) {
      CARRIER_STORE_TRY(priority, in.u8("index priority"));
      CARRIER_STORE_TRY(flags, in.u8("index flags"));
      if ((flags & ~(kPersistentFlag | kSpilledFlag)) != 0) return in.fail("index flags", "unknown bits", at);
      CARRIER_STORE_TRY(timestamp, in.u64("index timestamp"));
      CARRIER_STORE_TRY(expires, in.u64("index expiry"));
      CARRIER_STORE_TRY(deliver_at, in.u64("index deliver-at"));
      CARRIER_STORE_TRY(footprint, in.varint("index footprint"));
      if (footprint > UINT32_MAX) return in.fail("index footprint", "exceeds 32 bits", at);
      r.summary.id = r.id;
      r.summary.priority = priority;
      r.summary.persistent = (flags & kPersistentFlag) != 0;
      r.summary.spilled = (flags & kSpilledFlag) != 0 && !r.summary.persistent;
      r.summary.timestamp_ms = static_cast<std::int64_t>(timestamp);
      r.summary.expires_ms = static_cast<std::int64_t>(expires);
      r.summary.deliver_at_ms = static_cast<std::int64_t>(deliver_at);
      r.summary.footprint = static_cast<std::uint32_t>(footprint);
    }
    out.records.push_back(r);
  }
  if (!in.at_end()) {
    return in.fail("index content", std::to_string(in.remaining()) + " bytes after the last record", in.offset());
  }
  return out;
}

}  // namespace carrier::store::log
