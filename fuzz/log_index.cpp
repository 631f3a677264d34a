// libFuzzer target for the journal's segment index decoder (store/log/segment_index_codec.hpp):
// recovery reads NNNN.idx files from disk before it believes them, so a damaged, truncated or
// forged index must come back as an Error (and the segment is then read instead), never a crash,
// an overread or a huge allocation.
//
// Input: an index file as the journal writes it (seeds in corpus/log_index). The same bytes are
// also wrapped in a header with good checksums, so mutations reach the content decoder past the
// CRCs: the first 8 bytes give the queue and record counts the header claims.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "store/binary_format.hpp"
#include "store/log/crc32c.hpp"
#include "store/log/segment_index_codec.hpp"

namespace {

using namespace carrier::store;

void check(std::string_view bytes) {
  auto index = log::decode_segment_index(bytes);
  if (!index) return;
  for (const auto& r : index->records) {
    FUZZ_CHECK(r.queue < index->queues.size());
    FUZZ_CHECK(r.kind == RecordKind::message || r.kind == RecordKind::ack || r.kind == RecordKind::delivered);
    if (r.kind == RecordKind::message) FUZZ_CHECK(r.summary.id == r.id);
  }
  FUZZ_CHECK(index->records.size() <= bytes.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check(bytes);
  if (size < 8) return 0;
  std::string sealed(log::kIndexHeaderBytes, '\0');
  sealed.append(bytes.substr(8));
  char* h = sealed.data();
  for (std::size_t i = 0; i < log::kIndexMagic.size(); ++i) h[i] = log::kIndexMagic[i];
  binary::store_u32(h + 8, log::kIndexFormatVersion);
  binary::store_u64(h + 16, 1);
  binary::store_u64(h + 24, 4096);
  binary::store_u32(h + 32, binary::load_u32(bytes.data()) % 64);
  binary::store_u32(h + 36, binary::load_u32(bytes.data() + 4));
  binary::store_u32(h + 40, log::crc32c(std::string_view(sealed).substr(log::kIndexHeaderBytes)));
  binary::store_u32(h + 44, log::crc32c(std::string_view(h, 44)));
  check(sealed);
  return 0;
}
