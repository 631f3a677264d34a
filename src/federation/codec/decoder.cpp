#include "federation/codec/decoder.hpp"

namespace carrier::federation::codec {

Result<DecodeStep> decode(std::string_view input, const Limits& limits) {
  DecodeStep step;
  if (input.size() < kFrameHeaderBytes) {
    step.need_at_least = kFrameHeaderBytes;
    return step;
  }
  WireReader header(input.substr(0, kFrameHeaderBytes));
  const std::uint32_t length = *header.u32("frame length");
  const std::uint32_t operation = *header.u32("frame operation");
  const std::uint32_t request_id = *header.u32("frame request id");
  const std::size_t frame_bytes = kFrameHeaderBytes + std::size_t(length);
  if (frame_bytes > limits.max_frame_bytes) {
    return unexpected(Errc::limit_exceeded,
                      "frame length: " + std::to_string(frame_bytes) + " bytes is over the limit of " +
                          std::to_string(limits.max_frame_bytes) + " at byte 0");
  }
  if (input.size() < frame_bytes) {
    step.need_at_least = frame_bytes;
    return step;
  }
  step.consumed = frame_bytes;
  const std::string_view body = input.substr(kFrameHeaderBytes, length);
  if (operation_name(operation) == nullptr) {
    step.rejected = RejectedFrame{operation, request_id, true,
                                  Error(Errc::protocol_error,
                                        "unknown operation " + std::to_string(operation) + " at byte 4")};
    return step;
  }
  auto decoded = decode_frame_body(static_cast<Operation>(operation), body, limits);
  if (!decoded) {
    step.rejected = RejectedFrame{operation, request_id, false, std::move(decoded).error()};
    return step;
  }
  step.frame = Frame{request_id, std::move(*decoded)};
  return step;
}

}  // namespace carrier::federation::codec
