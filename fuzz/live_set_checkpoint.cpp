// libFuzzer target for the journal's live-set checkpoint decoder (store/log/live_set_checkpoint.hpp):
// recovery reads journal/live.ckpt before it believes it, so a damaged, truncated or forged file
// must come back as an Error (and the journal is then replayed in full), never a crash, an
// overread or a huge allocation; what decodes must encode back to the same bytes.
//
// Input: a checkpoint as the journal writes it (seeds in corpus/live_set_checkpoint). The bytes
// past the first 16 are also wrapped in a header with good checksums, so mutations reach the
// content decoder past the CRCs: the first 16 give the covered segment and bytes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "store/binary_format.hpp"
#include "store/log/crc32c.hpp"
#include "store/log/live_set_checkpoint.hpp"

namespace {

using namespace carrier::store;

void check(std::string_view bytes) {
  auto c = log::decode_checkpoint(bytes);
  if (!c) return;
  for (const auto& lane : c->lanes) FUZZ_CHECK(lane.queue < c->queues.size());
  for (const auto& m : c->listed) FUZZ_CHECK(m.queue < c->queues.size());
  FUZZ_CHECK(c->segments.size() <= bytes.size());
  // What decodes is what the writer would have written: the encoding round-trips.
  const std::string again = log::encode_checkpoint(*c);
  auto back = log::decode_checkpoint(again);
  FUZZ_CHECK(back.has_value());
  FUZZ_CHECK(log::encode_checkpoint(*back) == again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check(bytes);
  if (size < 16) return 0;
  const std::string_view content = bytes.substr(16);
  std::string sealed;
  sealed.append(log::kCheckpointMagic);
  binary::put_u32(sealed, log::kCheckpointFormatVersion);
  binary::put_u32(sealed, 0);
  binary::put_u64(sealed, binary::load_u64(bytes.data()));
  binary::put_u64(sealed, binary::load_u64(bytes.data() + 8));
  binary::put_u64(sealed, content.size());
  binary::put_u32(sealed, log::crc32c(content));
  binary::put_u32(sealed, log::crc32c(sealed));
  sealed.append(content);
  check(sealed);
  return 0;
}
