// libFuzzer target for the STOMP decoder (and, through the round trip, the encoder).
//
// Input layout: byte 0 picks a split point, the rest is the byte stream a peer sent. For each
// protocol version the stream is decoded twice, whole and in two reads split at that point (as a
// socket reader accumulating a buffer would), and the two must agree. Every decoded frame is then
// encoded and decoded again and must come back equal. Any disagreement aborts.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "stomp/codec/decoder.hpp"
#include "stomp/codec/encoder.hpp"
#include "stomp/codec/escape.hpp"

namespace {

using namespace carrier::stomp::codec;

// Small limits, so that short inputs reach the limit checks too.
constexpr DecoderLimits kLimits{.max_frame_bytes = 512, .max_headers = 16};
// For re-decoding an encoded frame: escaping and an added content-length may grow it.
constexpr DecoderLimits kUnlimited{.max_frame_bytes = std::size_t(1) << 40,
                                   .max_headers = std::size_t(1) << 20};

struct Decoded {
  std::vector<Frame> frames;
  bool failed = false;
  std::size_t leftover = 0;
};

// Appends each read to a buffer and decodes until no progress, as a session's reader does,
// skipping decode calls while the buffer is shorter than need_at_least. That hint must never
// overshoot: each time one is given, the buffer is extended with the stream's next bytes up to
// one short of it, and decoding that must still make no progress.
Decoded read_stream(std::string_view stream, const std::vector<std::size_t>& read_ends,
                    Version version) {
  Decoded out;
  std::string buffer;
  std::size_t need = 0;
  std::size_t from = 0;
  for (std::size_t end : read_ends) {
    buffer.append(stream.substr(from, end - from));
    from = end;
    while (buffer.size() >= need) {
      auto step = decode(buffer, version, kLimits);
      if (!step) {
        out.failed = true;
        out.leftover = buffer.size();
        return out;
      }
      FUZZ_CHECK(step->consumed <= buffer.size());
      buffer.erase(0, step->consumed);
      if (!step->frame) {
        FUZZ_CHECK(step->need_at_least > buffer.size());
        need = step->need_at_least;
        const std::size_t more = std::min(need - 1 - buffer.size(), stream.size() - from);
        if (more > 0) {
          const std::string probe = buffer + std::string(stream.substr(from, more));
          auto early = decode(probe, version, kLimits);
          FUZZ_CHECK(early.has_value() && !early->frame && early->consumed == 0);
        }
        break;
      }
      FUZZ_CHECK(step->consumed > 0);
      need = 0;
      out.frames.push_back(std::move(*step->frame));
    }
  }
  out.leftover = buffer.size();
  return out;
}

// Outside 1.2's escaped frames a CR cannot be written at the end of a header value: the
// decoder takes "\r\n" as the EOL. Such a frame decodes but cannot be re-encoded faithfully.
bool encodable(const Frame& frame, Version version) {
  if (version == Version::v1_2 && escapes_headers(frame.command, version)) return true;
  for (const auto& header : frame.headers) {
    if (!header.second.empty() && header.second.back() == '\r') return false;
  }
  return true;
}

void check_round_trip(const Frame& frame, Version version) {
  if (!encodable(frame, version)) return;
  std::string wire;
  encode(frame, version, wire);
  auto step = decode(wire, version, kUnlimited);
  FUZZ_CHECK(step.has_value());
  FUZZ_CHECK(step->frame.has_value());
  FUZZ_CHECK(step->consumed == wire.size());
  Frame expected = frame;
  if (!frame.body.empty() && frame.header("content-length") == nullptr) {
    expected.headers.emplace_back("content-length", std::to_string(frame.body.size()));
  }
  FUZZ_CHECK(*step->frame == expected);
  // And encoding is now stable: the content-length is not added twice.
  std::string again;
  encode(*step->frame, version, again);
  FUZZ_CHECK(again == wire);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  // Scale the byte over the stream so that every input length can be split anywhere near.
  const std::size_t split = (std::size_t(data[0]) * (stream.size() + 1)) / 256;

  for (Version version : {Version::v1_0, Version::v1_1, Version::v1_2}) {
    const Decoded whole = read_stream(stream, {stream.size()}, version);
    const Decoded split_reads = read_stream(stream, {split, stream.size()}, version);
    FUZZ_CHECK(whole.failed == split_reads.failed);
    FUZZ_CHECK(whole.frames == split_reads.frames);
    if (!whole.failed) FUZZ_CHECK(whole.leftover == split_reads.leftover);
    for (const Frame& frame : whole.frames) check_round_trip(frame, version);
  }
  return 0;
}
