#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace carrier::http::codec {

// RFC 6455 opcodes.
enum class WsOpcode : std::uint8_t { continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA };

// RFC 6455 section 7.4.1 close codes Carrier sends.
enum class WsClose : std::uint16_t {
  normal = 1000,
  going_away = 1001,
  protocol_error = 1002,
  unsupported_data = 1003,  // a text frame where only binary is allowed (MQTT)
  too_big = 1009,
};

struct WsDecodeLimits {
  std::uint64_t max_frame_bytes = 16u << 20;  // a frame's payload; larger -> too_big
  bool binary_only = false;                   // MQTT (MQTT 5.0 section 6): text frames -> unsupported_data
  // Which side reads: a server reads masked client frames (an unmasked one is an error); a
  // client (the bench's) reads unmasked server frames (a masked one is an error).
  bool client_frames = true;
};

// What one decode() call stopped at.
struct WsDecoded {
  enum class Status { need_more, control, error };
  Status status = Status::need_more;
  std::size_t consumed = 0;  // bytes of the input used; the caller drops them
  // control: a whole ping, pong or close frame (payload unmasked, at most 125 bytes).
  WsOpcode opcode = WsOpcode::continuation;
  std::string payload;
  // error: the close code to send and why (for the close frame's reason and the log).
  WsClose close = WsClose::normal;
  std::string reason;
};

// RFC 6455 framing as a server reads it (or, with client_frames = false, a client), resumable: client frames go in as they arrive, in any
// split; the payload of data frames (text, binary, continuation) is unmasked and appended to
// `data` as soon as its bytes come, so a frame is never buffered whole and message boundaries
// are not kept (the sessions above read a byte stream). A decode() returns at a complete
// control frame, at an error, or when the input is used up. After an error the decoder refuses
// everything. No extensions are negotiated, so any RSV bit is an error.
// Runs on: anything; pure.
class WsFrameDecoder {
 public:
  explicit WsFrameDecoder(WsDecodeLimits limits) : limits_(limits) {}

  WsDecoded decode(std::string_view input, std::string& data);
  bool failed() const { return failed_; }

 private:
  WsDecoded fail(WsDecoded& r, WsClose code, std::string reason);

  WsDecodeLimits limits_;
  bool failed_ = false;
  bool in_message_ = false;       // a data message began and its FIN frame has not come
  std::uint64_t payload_left_ = 0;  // of the data frame being read
  std::uint8_t mask_[4] = {};
  std::uint8_t mask_at_ = 0;  // the mask index of the next payload byte
};

// A server frame (unmasked, FIN) with `payload`, appended to `out`.
void ws_append_frame(std::string& out, WsOpcode opcode, std::string_view payload);
// Only the header of such a frame, for a payload of `size` bytes the caller appends next.
void ws_append_header(std::string& out, WsOpcode opcode, std::uint64_t size);
// A close frame with its code and a reason (cut to fit a control frame).
void ws_append_close(std::string& out, WsClose code, std::string_view reason);
// A client frame (masked with `mask`, FIN), for tests and the bench's client.
void ws_append_masked_frame(std::string& out, WsOpcode opcode, std::string_view payload, std::uint32_t mask);

}  // namespace carrier::http::codec
