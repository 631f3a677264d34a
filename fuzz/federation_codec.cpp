// libFuzzer target for the federation link codec (src/federation/codec/): a peer on a link
// can send any bytes, so they must come back as frames, rejected frames or an error, never a
// crash, an overread or an allocation larger than the limits allow.
//
// Input layout: byte 0 picks a split point, the rest is the byte stream a peer sent. The
// stream is read whole and in two reads split at that point, as a link's read loop does, and
// the two must agree. Every frame that decodes must re-encode to exactly the bytes it came
// from (the encoding is canonical). The same bytes are then given to every structure decoder
// (BasicMessage, NodeProperty, RemoteNode, Forwarder, Negotiator) and to the message payload
// decoder; whatever decodes must re-encode to the same bytes (payload: to a stable encoding).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "federation/codec/decoder.hpp"
#include "federation/codec/message_payload.hpp"
#include "fuzz_check.hpp"

namespace {

using namespace carrier::federation::codec;

// Small limits, so that short inputs reach the limit checks too.
constexpr Limits kLimits{.max_frame_bytes = 4096,
                         .max_payload_bytes = 1024,
                         .max_stack_entries = 16,
                         .max_string_bytes = 64,
                         .max_property_slots = 32};

struct Outcome {
  std::vector<Frame> frames;
  std::vector<std::uint32_t> rejected;  // request ids of rejected frames, in order
  bool failed = false;
  std::size_t leftover = 0;
};

// Each decoded frame re-encodes to the bytes it was decoded from.
void check_canonical(const Frame& frame, std::string_view from) {
  std::string wire;
  FUZZ_CHECK(encode_frame(frame, wire).has_value());
  FUZZ_CHECK(wire == from);
}

Outcome read_stream(std::string_view stream, const std::vector<std::size_t>& read_ends) {
  Outcome out;
  std::string buffer;
  std::size_t need = 0;
  std::size_t from = 0;
  for (std::size_t end : read_ends) {
    buffer.append(stream.substr(from, end - from));
    from = end;
    while (buffer.size() >= need) {
      auto step = decode(buffer, kLimits);
      if (!step) {
        out.failed = true;
        out.leftover = buffer.size();
        return out;
      }
      if (step->need_more()) {
        FUZZ_CHECK(step->consumed == 0);
        FUZZ_CHECK(step->need_at_least > buffer.size());
        need = step->need_at_least;
        break;
      }
      FUZZ_CHECK(step->consumed >= kFrameHeaderBytes && step->consumed <= buffer.size());
      FUZZ_CHECK(step->frame.has_value() != step->rejected.has_value());
      if (step->frame) {
        check_canonical(*step->frame, std::string_view(buffer).substr(0, step->consumed));
        out.frames.push_back(std::move(*step->frame));
      } else {
        out.rejected.push_back(step->rejected->request_id);
      }
      buffer.erase(0, step->consumed);
      need = 0;
    }
  }
  out.leftover = buffer.size();
  return out;
}

// decode(bytes) succeeding means encode(decoded) == bytes.
template <class Decode, class Encode>
void check_structure(std::string_view bytes, Decode decode_fn, Encode encode_fn) {
  auto decoded = decode_fn(bytes, kLimits);
  if (!decoded) return;
  std::string wire;
  FUZZ_CHECK(encode_fn(*decoded, wire).has_value());
  FUZZ_CHECK(wire == bytes);
}

void check_payload(std::string_view bytes) {
  auto message = decode_basic_message(bytes, kLimits);
  if (!message) return;
  auto carried = unwrap_message(*message);
  if (!carried) return;
  // The store's encoding accepts some spellings it does not write (e.g. long varints): the
  // re-wrapped payload must decode to a message that wraps to the same bytes again.
  auto once = wrap_message(*carried, *message);
  FUZZ_CHECK(once.has_value());
  auto again = unwrap_message(*once);
  FUZZ_CHECK(again.has_value());
  auto twice = wrap_message(*again, *message);
  FUZZ_CHECK(twice.has_value());
  FUZZ_CHECK(*twice == *once);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  // Scale the byte over the stream so that every input length can be split anywhere near.
  const std::size_t split = (std::size_t(data[0]) * (stream.size() + 1)) / 256;

  const Outcome whole = read_stream(stream, {stream.size()});
  const Outcome split_reads = read_stream(stream, {split, stream.size()});
  FUZZ_CHECK(whole.failed == split_reads.failed);
  FUZZ_CHECK(whole.frames == split_reads.frames);
  FUZZ_CHECK(whole.rejected == split_reads.rejected);
  if (!whole.failed) FUZZ_CHECK(whole.leftover == split_reads.leftover);

  // The structures alone, without a frame around them: the frame header would keep most
  // mutations from reaching them.
  check_structure(stream, decode_basic_message, encode_basic_message);
  check_structure(stream, decode_node_property, encode_node_property);
  check_structure(stream, decode_remote_node, encode_remote_node);
  check_structure(stream, decode_forwarder, encode_forwarder);
  check_structure(stream, decode_negotiator, encode_negotiator);
  check_payload(stream);
  return 0;
}
