#include "mqtt/codec/data_types.hpp"

#include <fmt/format.h>

#include "base/assert.hpp"

namespace carrier::mqtt::codec {

std::string DecodeError::to_string() const {
  return fmt::format("{} (0x{:02x}) at offset {}: {}", codec::to_string(reason), value(reason), offset, detail);
}

bool is_valid_utf8(std::string_view text) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      if (c == 0) return false;
      ++p;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;  // a continuation byte first, or 0xF8..0xFF
    }
    if (static_cast<std::size_t>(end - p) < len) return false;
    for (std::size_t i = 1; i < len; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    // Overlong forms, surrogates, past the last code point.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;
    if (cp >= 0xD800 && cp <= 0xDFFF) return false;
    if (cp > 0x10FFFF) return false;
    p += len;
  }
  return true;
}

bool Reader::fail(ReasonCode reason, std::size_t offset, std::string detail) {
  if (!error_) error_ = DecodeError{reason, offset, std::move(detail)};
  return false;
}

bool Reader::need(std::size_t n, std::string_view what) {
  if (error_) return false;
  if (remaining() < n) {
    return fail(ReasonCode::malformed_packet, offset(),
                fmt::format("{} needs {} byte(s), {} left in the packet", what, n, remaining()));
  }
  return true;
}

bool Reader::u8(std::uint8_t& out, std::string_view what) {
  if (!need(1, what)) return false;
  out = static_cast<std::uint8_t>(bytes_[pos_]);
  pos_ += 1;
  return true;
}

bool Reader::u16(std::uint16_t& out, std::string_view what) {
  if (!need(2, what)) return false;
  out = static_cast<std::uint16_t>((static_cast<std::uint8_t>(bytes_[pos_]) << 8) |
                                   static_cast<std::uint8_t>(bytes_[pos_ + 1]));
  pos_ += 2;
  return true;
}

bool Reader::u32(std::uint32_t& out, std::string_view what) {
  if (!need(4, what)) return false;
  out = 0;
  for (int i = 0; i < 4; ++i) out = (out << 8) | static_cast<std::uint8_t>(bytes_[pos_ + i]);
  pos_ += 4;
  return true;
}

bool Reader::variable_int(std::uint32_t& out, std::string_view what) {
  if (error_) return false;
  const std::size_t start = offset();
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    std::uint8_t byte = 0;
    if (!need(1, what)) return false;
    byte = static_cast<std::uint8_t>(bytes_[pos_++]);
    value |= static_cast<std::uint32_t>(byte & 0x7F) << (7 * i);
    if ((byte & 0x80) == 0) {
      // The spec requires the shortest encoding: a trailing zero byte is not one.
      if (i > 0 && byte == 0) {
        return fail(ReasonCode::malformed_packet, start, fmt::format("{} is not minimally encoded", what));
      }
      out = value;
      return true;
    }
  }
  return fail(ReasonCode::malformed_packet, start, fmt::format("{} is longer than 4 bytes", what));
}

bool Reader::utf8(std::string& out, std::string_view what) {
  const std::size_t start = offset();
  std::uint16_t len = 0;
  if (!u16(len, what)) return false;
  if (!need(len, what)) return false;
  std::string_view text = bytes_.substr(pos_, len);
  if (!is_valid_utf8(text)) {
    return fail(ReasonCode::malformed_packet, start, fmt::format("{} is not valid UTF-8 (or contains U+0000)", what));
  }
  out.assign(text);
  pos_ += len;
  return true;
}

bool Reader::binary(std::string& out, std::string_view what) {
  std::uint16_t len = 0;
  if (!u16(len, what)) return false;
  if (!need(len, what)) return false;
  out.assign(bytes_.substr(pos_, len));
  pos_ += len;
  return true;
}

std::string_view Reader::rest() {
  auto r = bytes_.substr(pos_);
  pos_ = bytes_.size();
  return r;
}

bool Reader::sub(std::size_t n, Reader& out, std::string_view what) {
  if (!need(n, what)) return false;
  out = Reader(bytes_.substr(pos_, n), offset());
  pos_ += n;
  return true;
}

void put_u8(std::string& out, std::uint8_t v) { out.push_back(static_cast<char>(v)); }

void put_u16(std::string& out, std::uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xFF));
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

void put_variable_int(std::string& out, std::uint32_t v) {
  CARRIER_DASSERT(v <= kMaxVariableByteInteger, "variable byte integer {} too large", v);
  do {
    std::uint8_t byte = v & 0x7F;
    v >>= 7;
    if (v != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (v != 0);
}

void put_string(std::string& out, std::string_view v) {
  CARRIER_DASSERT(v.size() <= kMaxStringBytes, "string of {} bytes too long for MQTT", v.size());
  put_u16(out, static_cast<std::uint16_t>(v.size()));
  out.append(v);
}

std::size_t variable_int_size(std::uint32_t v) noexcept {
  if (v < 128) return 1;
  if (v < 16'384) return 2;
  if (v < 2'097'152) return 3;
  return 4;
}

}  // namespace carrier::mqtt::codec
