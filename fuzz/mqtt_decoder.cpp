// libFuzzer target for the MQTT decoder (and, through the round trip, the encoder).
//
// Input layout: byte 0 picks a split point, the rest is the byte stream a peer sent. For each
// protocol version (3.1, 3.1.1, 5.0) the stream is decoded twice, whole and in two reads split at
// that point (as a socket reader accumulating a buffer would), and the two must agree. Every
// decoded packet is then encoded and decoded again and must come back equal, and encoding that
// must give the same bytes. Any disagreement aborts.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "mqtt/codec/decoder.hpp"
#include "mqtt/codec/encoder.hpp"

namespace {

using namespace carrier::mqtt::codec;

// A small limit, so that short inputs reach the packet-too-large check too.
constexpr DecoderLimits kLimits{.max_packet_size = 2048};
constexpr DecoderLimits kUnlimited{};

struct Decoded {
  std::vector<Packet> packets;
  bool failed = false;
  ReasonCode reason = ReasonCode::success;
  std::size_t leftover = 0;
};

// Appends each read to a buffer and decodes until no progress, skipping decode calls while the
// buffer is shorter than need_at_least. That hint must never overshoot: each time one is
// given, the buffer is extended with the stream's next bytes up to one short of it, and
// decoding that must still need more.
Decoded read_stream(std::string_view stream, const std::vector<std::size_t>& read_ends, Version version) {
  Decoded out;
  std::string buffer;
  std::size_t need = 0;
  std::size_t from = 0;
  for (std::size_t end : read_ends) {
    buffer.append(stream.substr(from, end - from));
    from = end;
    while (buffer.size() >= need) {
      auto r = decode(buffer, version, kLimits);
      if (r.error) {
        FUZZ_CHECK(!r.packet);
        FUZZ_CHECK(r.error->offset <= buffer.size());
        out.failed = true;
        out.reason = r.error->reason;
        out.leftover = buffer.size();
        return out;
      }
      if (!r.packet) {
        FUZZ_CHECK(r.need_at_least > buffer.size());
        need = r.need_at_least;
        const std::size_t more = std::min(need - 1 - buffer.size(), stream.size() - from);
        if (more > 0) {
          const std::string probe = buffer + std::string(stream.substr(from, more));
          auto early = decode(probe, version, kLimits);
          // Errors may show early (a reserved type, a packet too large), packets may not.
          FUZZ_CHECK(!early.packet);
        }
        break;
      }
      FUZZ_CHECK(r.consumed > 0 && r.consumed <= buffer.size());
      FUZZ_CHECK(r.consumed <= kLimits.max_packet_size);
      buffer.erase(0, r.consumed);
      need = 0;
      out.packets.push_back(std::move(*r.packet));
    }
  }
  out.leftover = buffer.size();
  return out;
}

void check_round_trip(const Packet& packet, Version version) {
  // A CONNECT carries its own version; everything else is encoded as the connection's.
  const Version as = std::holds_alternative<Connect>(packet) ? std::get<Connect>(packet).version : version;
  std::string wire;
  encode(packet, version, wire);
  auto r = decode(wire, as, kUnlimited);
  FUZZ_CHECK(!r.error);
  FUZZ_CHECK(r.packet.has_value());
  FUZZ_CHECK(r.consumed == wire.size());
  FUZZ_CHECK(*r.packet == packet);
  std::string again;
  encode(*r.packet, version, again);
  FUZZ_CHECK(again == wire);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t split = (std::size_t(data[0]) * (stream.size() + 1)) / 256;

  for (Version version : {Version::v3_1, Version::v3_1_1, Version::v5}) {
    const Decoded whole = read_stream(stream, {stream.size()}, version);
    const Decoded split_reads = read_stream(stream, {split, stream.size()}, version);
    FUZZ_CHECK(whole.failed == split_reads.failed);
    FUZZ_CHECK(whole.packets == split_reads.packets);
    if (whole.failed) {
      FUZZ_CHECK(whole.reason == split_reads.reason);
    } else {
      FUZZ_CHECK(whole.leftover == split_reads.leftover);
    }
    for (const Packet& packet : whole.packets) check_round_trip(packet, version);
  }
  return 0;
}
