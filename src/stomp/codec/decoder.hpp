#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "base/result.hpp"
#include "stomp/codec/frame.hpp"

namespace carrier::stomp::codec {

struct DecoderLimits {
  std::size_t max_frame_bytes = 16u << 20;  // command + headers + body
  std::size_t max_headers = 1000;
};

// The outcome of one decode call over the bytes received so far.
struct DecodeStep {
  std::size_t consumed = 0;    // bytes to drop from the front of the input
  std::optional<Frame> frame;  // a complete frame, or nullopt: need more bytes
  // When no frame: the input must grow to at least this many bytes before another call can
  // make progress (lets a caller skip re-scanning a large body that is still arriving).
  // Counted after dropping `consumed` bytes (skipped heart-beats), i.e. over what the caller
  // passes next time.
  std::size_t need_at_least = 0;
};

// Decodes at most one frame from the front of `input`. Pure: no I/O, clock or logging.
// Heart-beats (bare EOLs between frames) are consumed and skipped. Errors are
// Errc::protocol_error or Errc::limit_exceeded with a detail that says what was wrong and at
// which byte offset (counted from the start of `input`). Header escaping follows `version`
// (none in 1.0; \r only from 1.2) and is never applied to CONNECT, STOMP and CONNECTED frames,
// as the spec requires.
Result<DecodeStep> decode(std::string_view input, Version version, const DecoderLimits& limits);

}  // namespace carrier::stomp::codec
