#pragma once

#include <cstddef>
#include <optional>
#include <string>
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

// The first value of header `name` among the complete header lines of the frame at the front of
// `input`, or nullopt. For the ERROR about a frame decode() refused (too large, malformed): its
// `receipt` may have been read already, and the reply should name it. Stops at the first line
// that is no header (no colon, bad escape); only the failing path calls it.
std::optional<std::string> peek_header(std::string_view input, std::string_view name, Version version);

}  // namespace carrier::stomp::codec
