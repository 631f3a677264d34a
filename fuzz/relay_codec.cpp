// libFuzzer target for the relay's JXME message codec (src/relay/codec/): a thin client's POST
// body is any bytes, so they must come back as messages or an error, never a crash, an overread
// or an allocation past the limits.
//
// Every message that decodes re-encodes to exactly the bytes it came from, except that the
// encoder declares only namespaces in use after the declared ones: the re-encoding must decode
// to the same message again. Decoding a prefix of a whole message fails (never a different one).
// The same bytes, split at the first '?', are also a request target for the relay's URL parser.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "relay/codec/jxme_message.hpp"
#include "relay/codec/relay_target.hpp"

namespace {

using namespace carrier::relay::codec;

constexpr Limits kLimits{.max_message_bytes = 4096, .max_elements = 64, .max_namespaces = 8};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto one = decode_one(bytes, kLimits);
  if (one) {
    FUZZ_CHECK(one->consumed <= bytes.size() && one->consumed <= kLimits.max_message_bytes);
    std::string wire;
    FUZZ_CHECK(encode(one->message, wire).has_value());
    FUZZ_CHECK(wire == bytes.substr(0, one->consumed));
    auto again = decode_one(wire, kLimits);
    FUZZ_CHECK(again.has_value() && again->message == one->message && again->consumed == wire.size());
    if (one->consumed > 0) FUZZ_CHECK(!decode_one(bytes.substr(0, one->consumed - 1), kLimits).has_value());
  }
  auto all = decode_all(bytes, kLimits);
  if (all) {
    std::string wire;
    for (const auto& m : *all) FUZZ_CHECK(encode(m, wire).has_value());
    FUZZ_CHECK(wire == bytes);
  }
  const auto q = bytes.find('?');
  const auto path = bytes.substr(0, q);
  const auto query = q == std::string_view::npos ? std::string_view() : bytes.substr(q + 1);
  if (is_relay_path(path)) {
    auto target = parse_relay_target(path, query);
    if (target && !target->peer.empty()) FUZZ_CHECK(is_peer_id(target->peer));
  }
  return 0;
}
