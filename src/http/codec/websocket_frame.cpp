#include "http/codec/websocket_frame.hpp"

#include <algorithm>
#include <cstring>

namespace carrier::http::codec {

namespace {

constexpr std::size_t kMaxControlPayload = 125;

std::uint64_t big_endian(std::string_view bytes) {
  std::uint64_t v = 0;
  for (char c : bytes) v = (v << 8) | static_cast<std::uint8_t>(c);
  return v;
}

bool is_control(std::uint8_t opcode) { return (opcode & 0x8) != 0; }

void unmask_into(char* to, const char* from, std::size_t n, const std::uint8_t (&mask)[4], std::uint8_t at) {
  // Eight bytes at a time with the key repeated from `at`: this runs over every payload byte.
  std::uint8_t key[8];
  for (std::size_t i = 0; i < 8; ++i) key[i] = mask[(at + i) & 3];
  std::uint64_t key64;
  std::memcpy(&key64, key, 8);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t v;
    std::memcpy(&v, from + i, 8);
    v ^= key64;
    std::memcpy(to + i, &v, 8);
  }
  for (; i < n; ++i) to[i] = static_cast<char>(static_cast<std::uint8_t>(from[i]) ^ key[i & 7]);
}

}  // namespace

WsDecoded WsFrameDecoder::fail(WsDecoded& r, WsClose code, std::string reason) {
  failed_ = true;
  r.status = WsDecoded::Status::error;
  r.close = code;
  r.reason = std::move(reason);
  return std::move(r);
}

WsDecoded WsFrameDecoder::decode(std::string_view in, std::string& data) {
  WsDecoded r;
  if (failed_) return fail(r, WsClose::protocol_error, "the stream failed before");
  std::size_t pos = 0;
  while (pos < in.size()) {
    if (payload_left_ > 0) {
      // Payload of a data frame: unmasked straight into `data`, however little has come.
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(payload_left_, in.size() - pos));
      if (limits_.client_frames) {
        const std::size_t old = data.size();
        data.resize(old + n);
        unmask_into(data.data() + old, in.data() + pos, n, mask_, mask_at_);
      } else {
        data.append(in.substr(pos, n));
      }
      mask_at_ = static_cast<std::uint8_t>((mask_at_ + n) & 3);
      payload_left_ -= n;
      pos += n;
      continue;
    }
    const std::string_view rest = in.substr(pos);
    if (rest.size() < 2) break;
    const auto b0 = static_cast<std::uint8_t>(rest[0]);
    const auto b1 = static_cast<std::uint8_t>(rest[1]);
    const bool fin = (b0 & 0x80) != 0;
    const std::uint8_t opcode = b0 & 0x0F;
    if ((b0 & 0x70) != 0) return fail(r, WsClose::protocol_error, "RSV bits set, but no extension was negotiated");
    const bool masked = (b1 & 0x80) != 0;
    if (masked != limits_.client_frames) {
      return fail(r, WsClose::protocol_error,
                  masked ? "a server frame must not be masked (RFC 6455 5.1)"
                         : "a client frame must be masked (RFC 6455 5.1)");
    }
    const std::uint8_t len7 = b1 & 0x7F;
    switch (opcode) {
      case 0x0:
        if (!in_message_) return fail(r, WsClose::protocol_error, "a continuation frame with no message to continue");
        break;
      case 0x1:
      case 0x2:
        if (in_message_) return fail(r, WsClose::protocol_error, "a new message began before the last one's final frame");
        if (opcode == 0x1 && limits_.binary_only) {
          return fail(r, WsClose::unsupported_data, "text frames are not allowed on this sub-protocol: use binary frames");
        }
        break;
      case 0x8:
      case 0x9:
      case 0xA:
        if (!fin) return fail(r, WsClose::protocol_error, "a control frame must not be fragmented");
        if (len7 > kMaxControlPayload) return fail(r, WsClose::protocol_error, "a control frame carries at most 125 bytes");
        break;
      default:
        return fail(r, WsClose::protocol_error, "unknown opcode " + std::to_string(opcode));
    }
    std::size_t header = 2;
    std::uint64_t length = len7;
    if (len7 == 126) {
      if (rest.size() < 4) break;
      length = big_endian(rest.substr(2, 2));
      header = 4;
    } else if (len7 == 127) {
      if (rest.size() < 10) break;
      length = big_endian(rest.substr(2, 8));
      header = 10;
    }
    // A 64-bit length with its top bit set (2^63 and up) is past any limit too.
    if (length > limits_.max_frame_bytes) {
      return fail(r, WsClose::too_big,
                  "a frame of " + std::to_string(length) + " bytes exceeds the limit of " +
                      std::to_string(limits_.max_frame_bytes));
    }
    if (masked) {
      if (rest.size() < header + 4) break;
      for (std::size_t i = 0; i < 4; ++i) mask_[i] = static_cast<std::uint8_t>(rest[header + i]);
      header += 4;
    } else {
      std::fill(std::begin(mask_), std::end(mask_), 0);  // XOR with 0: the bytes as they are
    }
    if (is_control(opcode)) {
      if (rest.size() < header + length) break;
      r.status = WsDecoded::Status::control;
      r.opcode = static_cast<WsOpcode>(opcode);
      r.payload.resize(static_cast<std::size_t>(length));
      unmask_into(r.payload.data(), rest.data() + header, r.payload.size(), mask_, 0);
      r.consumed = pos + header + static_cast<std::size_t>(length);
      return r;
    }
    in_message_ = !fin;
    payload_left_ = length;
    mask_at_ = 0;
    pos += header;
  }
  r.consumed = pos;
  return r;
}

void ws_append_header(std::string& out, WsOpcode opcode, std::uint64_t size) {
  out.push_back(static_cast<char>(0x80 | static_cast<std::uint8_t>(opcode)));
  if (size < 126) {
    out.push_back(static_cast<char>(size));
  } else if (size <= 0xFFFF) {
    out.push_back(static_cast<char>(126));
    out.push_back(static_cast<char>(size >> 8));
    out.push_back(static_cast<char>(size & 0xFF));
  } else {
    out.push_back(static_cast<char>(127));
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((size >> shift) & 0xFF));
  }
}

void ws_append_frame(std::string& out, WsOpcode opcode, std::string_view payload) {
  ws_append_header(out, opcode, payload.size());
  out.append(payload);
}

void ws_append_close(std::string& out, WsClose code, std::string_view reason) {
  std::string payload;
  const auto c = static_cast<std::uint16_t>(code);
  payload.push_back(static_cast<char>(c >> 8));
  payload.push_back(static_cast<char>(c & 0xFF));
  payload.append(reason.substr(0, kMaxControlPayload - 2));
  ws_append_frame(out, WsOpcode::close, payload);
}

void ws_append_masked_frame(std::string& out, WsOpcode opcode, std::string_view payload, std::uint32_t mask) {
  const std::size_t at = out.size();
  ws_append_header(out, opcode, payload.size());
  out[at + 1] = static_cast<char>(static_cast<std::uint8_t>(out[at + 1]) | 0x80);
  const std::uint8_t key[4] = {static_cast<std::uint8_t>(mask >> 24), static_cast<std::uint8_t>(mask >> 16),
                               static_cast<std::uint8_t>(mask >> 8), static_cast<std::uint8_t>(mask)};
  out.append(reinterpret_cast<const char*>(key), 4);
  const std::size_t from = out.size();
  out.resize(from + payload.size());
  unmask_into(out.data() + from, payload.data(), payload.size(), key, 0);
}

}  // namespace carrier::http::codec
