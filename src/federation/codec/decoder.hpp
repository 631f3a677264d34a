#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/result.hpp"
#include "federation/codec/frame.hpp"
#include "federation/codec/limits.hpp"

namespace carrier::federation::codec {

// A whole frame the link must refuse but can step over: its header was sound, so the stream
// stays in step. The link answers a refused request with an error result carrying
// `request_id` and stays up (a peer that keeps sending them is the link's to drop).
struct RejectedFrame {
  std::uint32_t operation = 0;   // as sent
  std::uint32_t request_id = 0;
  bool unknown_operation = false;  // the operation names nothing this build knows
  Error error;                     // what was wrong, with the byte offset in the frame
};

// The outcome of one decode call over the bytes received so far: a frame, a rejected frame,
// or need-more (neither).
struct DecodeStep {
  std::size_t consumed = 0;  // bytes to drop from the front of the input (0 when need-more)
  std::optional<Frame> frame;
  std::optional<RejectedFrame> rejected;
  // Need-more: the input must grow to at least this many bytes before another call can make
  // progress (the whole frame, once its header has arrived).
  std::size_t need_at_least = 0;

  bool need_more() const { return !frame && !rejected; }
};

// Decodes at most one frame from the front of `input`. Pure and stateless: no I/O, clock or
// logging; the result does not depend on how the stream was split into reads. The only error
// is a frame whose header announces more than limits.max_frame_bytes (Errc::limit_exceeded):
// the link closes, since skipping it would mean reading that much. An unknown operation or a
// body that does not parse is a RejectedFrame, consumed whole.
Result<DecodeStep> decode(std::string_view input, const Limits& limits);

}  // namespace carrier::federation::codec
