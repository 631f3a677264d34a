// libFuzzer target for the journal's decoders (store/log/record_codec.hpp): recovery feeds them
// whatever is on disk, so a damaged, truncated or forged segment must come back as an Error,
// never a crash, an overread or a huge allocation.
//
// Input: a segment file as the journal writes it (the seeds are the golden journals of
// src/store/log/testdata): a segment header, then batch frames back to back, read the way
// recovery reads them; the same bytes are also decoded as a bare batch payload. Whatever decodes must be stable under its own encoder: encoding a decoded
// batch and decoding that gives a batch that encodes to the same bytes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "store/log/record_codec.hpp"

namespace {

using namespace carrier::store;

// encode(decode(encode(batch))) == encode(batch), and the frame decodes whole.
void check_round_trip(const Batch& batch) {
  std::string once;
  if (!log::encode_batch(batch, once)) return;  // e.g. over the payload limit: refused, fine
  auto again = log::decode_batch(once);
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(again->bytes == once.size());
  FUZZ_CHECK(again->batch.size() == batch.size());
  std::string twice;
  FUZZ_CHECK(log::encode_batch(again->batch, twice).has_value());
  FUZZ_CHECK(twice == once);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);

  // The record decoders without a frame around them: a checksum would keep most mutations from
  // reaching them. The first byte is the record count a frame header would have claimed.
  if (auto record = log::decode_record(bytes)) FUZZ_CHECK(record->bytes > 0 && record->bytes <= size);
  if (!bytes.empty()) {
    if (auto batch = log::decode_batch_payload(bytes.substr(1), static_cast<std::uint8_t>(bytes[0]) % 8)) {
      check_round_trip(*batch);
    }
  }

  std::string_view rest = bytes;
  if (bytes.size() >= log::kSegmentHeaderBytes) {
    if (auto header = log::decode_segment_header(bytes.substr(0, log::kSegmentHeaderBytes))) {
      rest.remove_prefix(log::kSegmentHeaderBytes);
    }
  }
  // Frames back to back, as recovery reads a segment, until the first that does not decode.
  while (rest.size() >= log::kBatchHeaderBytes) {
    auto frame = log::decode_batch(rest);
    if (!frame) break;
    FUZZ_CHECK(frame->bytes >= log::kBatchHeaderBytes && frame->bytes <= rest.size());
    check_round_trip(frame->batch);
    rest.remove_prefix(frame->bytes);
  }
  return 0;
}
