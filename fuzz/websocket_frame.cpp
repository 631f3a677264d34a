// libFuzzer target for Carrier's own WebSocket frame decoder (src/http/codec/websocket_frame):
// the client frames a GET /ws connection carries. (The upgrade request itself is Boost.Beast's
// HTTP parser.)
//
// Input layout: byte 0 sets the limits (bit 0: binary only; bit 1: read as a client, unmasked
// server frames; the rest: the frame limit as a power of two) and the split step (byte 1); the rest is the stream, fed in pieces of that step. The
// same stream decoded in one piece must give the same payload bytes and the same end, so the
// decoder does not depend on how the bytes arrive; nothing it gives may exceed what came in.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/codec/websocket_frame.hpp"

namespace {

using namespace carrier::http::codec;

struct Outcome {
  std::string data;
  std::string controls;  // each control frame's opcode and payload, in order
  bool failed = false;
  int close = 0;
};

Outcome run(std::string_view stream, std::size_t step, WsDecodeLimits limits) {
  WsFrameDecoder decoder(limits);
  Outcome o;
  std::string pending;
  for (std::size_t i = 0; i < stream.size() && !o.failed; i += step) {
    pending.append(stream.substr(i, step));
    for (;;) {
      const std::size_t before = o.data.size();
      auto r = decoder.decode(pending, o.data);
      FUZZ_CHECK(r.consumed <= pending.size());
      FUZZ_CHECK(o.data.size() - before <= pending.size());
      if (r.status == WsDecoded::Status::error) {
        FUZZ_CHECK(decoder.failed());
        FUZZ_CHECK(!r.reason.empty());
        o.failed = true;
        o.close = static_cast<int>(r.close);
        break;
      }
      pending.erase(0, r.consumed);
      if (r.status == WsDecoded::Status::need_more) break;
      FUZZ_CHECK(r.payload.size() <= 125);
      o.controls.push_back(static_cast<char>(r.opcode));
      o.controls.append(r.payload);
    }
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  WsDecodeLimits limits;
  limits.binary_only = (data[0] & 1) != 0;
  limits.client_frames = (data[0] & 2) == 0;
  limits.max_frame_bytes = std::uint64_t{1} << ((data[0] >> 2) % 40);
  const std::size_t step = data[1] == 0 ? 1 : data[1];
  const std::string_view stream(reinterpret_cast<const char*>(data + 2), size - 2);
  const Outcome whole = run(stream, stream.size() + 1, limits);
  const Outcome split = run(stream, step, limits);
  FUZZ_CHECK(whole.failed == split.failed && whole.close == split.close);
  FUZZ_CHECK(whole.data == split.data && whole.controls == split.controls);
  return 0;
}
