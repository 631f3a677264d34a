#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mqtt/codec/reason_code.hpp"

namespace carrier::mqtt::codec {

// Why a packet could not be decoded: the reason code it implies (what an MQTT 5 server puts in
// its DISCONNECT or CONNACK), the byte offset of the problem from the start of the decoder's
// input, and a detail naming it.
struct DecodeError {
  ReasonCode reason = ReasonCode::malformed_packet;
  std::size_t offset = 0;
  std::string detail;

  std::string to_string() const;
};

// The largest values the encodings can carry.
inline constexpr std::uint32_t kMaxVariableByteInteger = 268'435'455;
inline constexpr std::size_t kMaxStringBytes = 65'535;

// UTF-8 as MQTT requires of every string (section 1.5.4): well-formed (no overlong forms, no
// code point past U+10FFFF), no surrogates (U+D800..U+DFFF) and no U+0000.
bool is_valid_utf8(std::string_view text) noexcept;

// The MQTT data representations (section 1.5) read from a packet's bytes. Each read returns
// false after recording the first error (later reads fail too); offsets are absolute, counted
// from the start of the decoder's input.
class Reader {
 public:
  Reader(std::string_view bytes, std::size_t base_offset) : bytes_(bytes), base_(base_offset) {}

  bool u8(std::uint8_t& out, std::string_view what);
  bool u16(std::uint16_t& out, std::string_view what);
  bool u32(std::uint32_t& out, std::string_view what);
  bool variable_int(std::uint32_t& out, std::string_view what);
  // A length-prefixed UTF-8 string, validated.
  bool utf8(std::string& out, std::string_view what);
  // Length-prefixed binary data.
  bool binary(std::string& out, std::string_view what);
  // The rest of the bytes (a PUBLISH payload).
  std::string_view rest();
  // A sub-reader over the next `n` bytes (a property block), consumed from this one.
  bool sub(std::size_t n, Reader& out, std::string_view what);

  std::size_t remaining() const { return bytes_.size() - pos_; }
  bool at_end() const { return pos_ == bytes_.size(); }
  std::size_t offset() const { return base_ + pos_; }

  bool fail(ReasonCode reason, std::size_t offset, std::string detail);
  bool failed() const { return error_.has_value(); }
  std::optional<DecodeError>& error() { return error_; }
  void take_error_from(Reader& other) {
    if (!error_ && other.error_) error_ = std::move(other.error_);
  }

 private:
  bool need(std::size_t n, std::string_view what);

  std::string_view bytes_;
  std::size_t base_;
  std::size_t pos_ = 0;
  std::optional<DecodeError> error_;
};

// The same representations, appended to a string.
void put_u8(std::string& out, std::uint8_t v);
void put_u16(std::string& out, std::uint16_t v);
void put_u32(std::string& out, std::uint32_t v);
void put_variable_int(std::string& out, std::uint32_t v);
// Length-prefixed string or binary data; the caller keeps it within kMaxStringBytes.
void put_string(std::string& out, std::string_view v);

std::size_t variable_int_size(std::uint32_t v) noexcept;

}  // namespace carrier::mqtt::codec
