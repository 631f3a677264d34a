#include "store/log/record_codec.hpp"

#include <memory>
#include <utility>

#include "store/binary_format.hpp"
#include "store/log/crc32c.hpp"
#include "store/log/stored_ref_codec.hpp"
#include "store/message_codec.hpp"

namespace carrier::store::log {

namespace {

constexpr std::size_t kRecordFixedBytes = 1 + 16;  // kind + message id

std::string at(std::size_t offset) { return " at offset " + std::to_string(offset); }

}  // namespace

std::string encode_segment_header(std::uint64_t segment_id) {
  std::string out(kSegmentHeaderBytes, '\0');
  out.replace(0, kSegmentMagic.size(), kSegmentMagic);
  binary::store_u32(out.data() + 8, kFormatVersion);
  binary::store_u32(out.data() + 12, 0);  // flags
  binary::store_u64(out.data() + 16, segment_id);
  binary::store_u32(out.data() + 24, 0);  // reserved
  binary::store_u32(out.data() + 28, crc32c(std::string_view(out).substr(0, 28)));
  return out;
}

Result<SegmentHeader> decode_segment_header(std::string_view bytes) {
  if (bytes.size() < kSegmentHeaderBytes) {
    return unexpected(Errc::corrupt_data, "segment header truncated: " +
                                              std::to_string(bytes.size()) + " of " +
                                              std::to_string(kSegmentHeaderBytes) + " bytes");
  }
  if (bytes.substr(0, kSegmentMagic.size()) != kSegmentMagic) {
    return unexpected(Errc::corrupt_data, "segment header: bad magic" + at(0));
  }
  SegmentHeader h;
  h.version = binary::load_u32(bytes.data() + 8);
  if (h.version != kFormatVersion) return h;  // the caller refuses it; see the header comment
  const std::uint32_t stored = binary::load_u32(bytes.data() + 28);
  if (stored != crc32c(bytes.substr(0, 28))) {
    return unexpected(Errc::corrupt_data, "segment header: checksum mismatch" + at(28));
  }
  if (binary::load_u32(bytes.data() + 12) != 0) {
    return unexpected(Errc::corrupt_data, "segment header: unknown flags" + at(12));
  }
  h.segment_id = binary::load_u64(bytes.data() + 16);
  return h;
}

Result<BatchHeader> decode_batch_header(std::string_view bytes) {
  if (bytes.size() < kBatchHeaderBytes) {
    return unexpected(Errc::corrupt_data, "batch header truncated: " +
                                              std::to_string(bytes.size()) + " of " +
                                              std::to_string(kBatchHeaderBytes) + " bytes");
  }
  const char* p = bytes.data();
  if (binary::load_u32(p) != kBatchMagic) {
    return unexpected(Errc::corrupt_data, "batch header: bad magic" + at(0));
  }
  if (binary::load_u32(p + 20) != crc32c(bytes.substr(0, 20))) {
    return unexpected(Errc::corrupt_data, "batch header: checksum mismatch" + at(20));
  }
  if (binary::load_u32(p + 16) != 0) {
    return unexpected(Errc::corrupt_data, "batch header: unknown flags" + at(16));
  }
  BatchHeader h;
  h.payload_bytes = binary::load_u32(p + 4);
  h.record_count = binary::load_u32(p + 8);
  h.payload_crc = binary::load_u32(p + 12);
  if (h.payload_bytes > kMaxBatchPayloadBytes) {
    return unexpected(Errc::corrupt_data, "batch header: payload of " +
                                              std::to_string(h.payload_bytes) +
                                              " bytes exceeds the limit" + at(4));
  }
  // Every record takes at least kRecordFixedBytes + 1 (empty queue name).
  if (h.record_count > h.payload_bytes / (kRecordFixedBytes + 1)) {
    return unexpected(Errc::corrupt_data, "batch header: " + std::to_string(h.record_count) +
                                              " records cannot fit in " +
                                              std::to_string(h.payload_bytes) + " bytes" + at(8));
  }
  return h;
}

Status encode_batch(const Batch& batch, std::string& out) {
  // Size first: one allocation for the frame, and the limit is checked before any byte is
  // written, so a refused batch leaves `out` untouched.
  std::size_t payload = 0;
  for (const Record& r : batch) {
    payload += kRecordFixedBytes + binary::string_size(r.queue);
    switch (r.kind) {
      case RecordKind::message: {
        if (!r.message) {
          return unexpected(Errc::invalid_argument,
                            "message record without a message for queue " + r.queue);
        }
        if (r.message->id != r.message_id) {
          return unexpected(Errc::invalid_argument,
                            "message record id differs from its message's id for queue " + r.queue);
        }
        const std::size_t m = encoded_message_size(*r.message);
        payload += binary::varint_size(m) + m;
        break;
      }
      case RecordKind::ack:
        if (r.stored.known()) payload += stored_ref_size(r.stored);
        break;
      case RecordKind::delivered:
        payload += binary::varint_size(r.delivery_count);
        if (r.stored.known()) payload += stored_ref_size(r.stored);
        break;
      default:
        return unexpected(Errc::invalid_argument,
                          "unknown record kind " + std::to_string(static_cast<int>(r.kind)));
    }
    if (payload > kMaxBatchPayloadBytes) break;
  }
  if (payload > kMaxBatchPayloadBytes) {
    return unexpected(Errc::limit_exceeded, "batch of " + std::to_string(batch.size()) +
                                                " records exceeds the journal's " +
                                                std::to_string(kMaxBatchPayloadBytes) +
                                                "-byte batch limit");
  }

  const std::size_t start = out.size();
  out.reserve(start + kBatchHeaderBytes + payload);
  out.append(kBatchHeaderBytes, '\0');
  for (const Record& r : batch) {
    binary::put_u8(out, written_kind(r.kind, r.stored));
    binary::put_string(out, r.queue);
    binary::put_u64(out, r.message_id.hi);
    binary::put_u64(out, r.message_id.lo);
    if (r.kind == RecordKind::message) {
      binary::put_varint(out, encoded_message_size(*r.message));
      encode_message(*r.message, out);
      continue;
    }
    if (r.kind == RecordKind::delivered) binary::put_varint(out, r.delivery_count);
    if (r.stored.known()) put_stored_ref(out, r.stored);
  }
  CARRIER_ASSERT(out.size() - start - kBatchHeaderBytes == payload,
                 "batch payload size {} != computed {}", out.size() - start - kBatchHeaderBytes,
                 payload);
  char* h = out.data() + start;
  binary::store_u32(h, kBatchMagic);
  binary::store_u32(h + 4, static_cast<std::uint32_t>(payload));
  binary::store_u32(h + 8, static_cast<std::uint32_t>(batch.size()));
  binary::store_u32(h + 12, crc32c(std::string_view(out).substr(start + kBatchHeaderBytes)));
  binary::store_u32(h + 16, 0);
  binary::store_u32(h + 20, crc32c(std::string_view(h, 20)));
  return ok();
}

Result<DecodedRecord> decode_record(std::string_view bytes, std::size_t base_offset) {
  binary::ByteReader in(bytes, base_offset);
  DecodedRecord out;
  Record& r = out.record;

  CARRIER_STORE_TRY(kind, in.u8("record kind"));
  bool names_copy = false;
  if (!read_kind(kind, r.kind, names_copy)) {
    return in.fail("record kind", "unknown value " + std::to_string(kind), 0);
  }
  CARRIER_STORE_TRY(queue, in.bytes("record queue"));
  r.queue.assign(queue);
  CARRIER_STORE_TRY(hi, in.u64("record message id"));
  CARRIER_STORE_TRY(lo, in.u64("record message id"));
  r.message_id = model::MessageId{hi, lo};

  if (r.kind == RecordKind::message) {
    const std::size_t message_at = in.offset();
    CARRIER_STORE_TRY(encoded, in.bytes("record message"));
    auto message = decode_message(encoded);
    if (!message) {
      return unexpected(Errc::corrupt_data, "record message at offset " +
                                                std::to_string(base_offset + message_at) + ": " +
                                                message.error().detail);
    }
    if (message->id != r.message_id) {
      return in.fail("record message", "message id differs from the record's", message_at);
    }
    r.message = std::make_shared<const model::Message>(std::move(*message));
  } else if (r.kind == RecordKind::delivered) {
    const std::size_t count_at = in.offset();
    CARRIER_STORE_TRY(count, in.varint("delivery count"));
    if (count > UINT32_MAX) {
      return in.fail("delivery count", "exceeds 32 bits", count_at);
    }
    r.delivery_count = static_cast<std::uint32_t>(count);
  }
  if (names_copy) {
    CARRIER_STORE_TRY(stored, read_stored_ref(in));
    r.stored = stored;
  }
  out.bytes = in.offset();
  return out;
}

Result<Batch> decode_batch_payload(std::string_view payload, std::uint32_t record_count,
                                   std::size_t base_offset) {
  Batch batch;
  // record_count was bounded by the payload size in decode_batch_header, but this is also
  // public: bound it again before reserving.
  batch.reserve(std::min<std::size_t>(record_count, payload.size() / (kRecordFixedBytes + 1)));
  std::size_t pos = 0;
  for (std::uint32_t i = 0; i < record_count; ++i) {
    auto rec = decode_record(payload.substr(pos), base_offset + pos);
    if (!rec) return unexpected(std::move(rec).error());
    pos += rec->bytes;
    batch.push_back(std::move(rec->record));
  }
  if (pos != payload.size()) {
    return unexpected(Errc::corrupt_data, "batch payload: " +
                                              std::to_string(payload.size() - pos) +
                                              " bytes after the last record" +
                                              at(base_offset + pos));
  }
  return batch;
}

Result<DecodedBatch> decode_batch(std::string_view bytes) {
  CARRIER_STORE_TRY(header, decode_batch_header(bytes));
  const std::size_t frame = kBatchHeaderBytes + header.payload_bytes;
  if (bytes.size() < frame) {
    return unexpected(Errc::corrupt_data, "batch payload truncated: " +
                                              std::to_string(bytes.size() - kBatchHeaderBytes) +
                                              " of " + std::to_string(header.payload_bytes) +
                                              " bytes");
  }
  std::string_view payload = bytes.substr(kBatchHeaderBytes, header.payload_bytes);
  if (crc32c(payload) != header.payload_crc) {
    return unexpected(Errc::corrupt_data, "batch payload: checksum mismatch" + at(kBatchHeaderBytes));
  }
  CARRIER_STORE_TRY(batch, decode_batch_payload(payload, header.record_count, kBatchHeaderBytes));
  return DecodedBatch{std::move(batch), frame};
}

}  // namespace carrier::store::log
