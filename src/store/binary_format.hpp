#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "base/result.hpp"

// Binds `var` to the value of a Result-returning `expr`, or returns its error from the
// enclosing function (which must return a Result). The decoders are long chains of reads;
// this keeps each one a line.
#define CARRIER_STORE_TRY(var, expr)                                      \
  auto var##_result = (expr);                                             \
  if (!var##_result) return ::carrier::unexpected(std::move(var##_result).error()); \
  auto var = std::move(*var##_result)

// Little-endian integers, LEB128 varints and length-prefixed strings: the primitives of the
// message codec and the journal's record codec. Header-only because both are hot paths
// (encoding runs once per record on the appending shard).
namespace carrier::store::binary {

inline void put_u8(std::string& out, std::uint8_t v) { out.push_back(static_cast<char>(v)); }

inline void put_u32(std::string& out, std::uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out.append(b, 4);
}

inline void put_u64(std::string& out, std::uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out.append(b, 8);
}

// Writes into a fixed buffer (frame headers are patched in place after the payload is known).
inline void store_u32(char* at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<char>(v >> (8 * i));
}
inline void store_u64(char* at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<char>(v >> (8 * i));
}
inline std::uint32_t load_u32(const char* at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t(static_cast<unsigned char>(at[i])) << (8 * i);
  return v;
}
inline std::uint64_t load_u64(const char* at) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t(static_cast<unsigned char>(at[i])) << (8 * i);
  return v;
}

inline std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline void put_varint(std::string& out, std::uint64_t v) {
  char b[10];
  std::size_t n = 0;
  while (v >= 0x80) {
    b[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  b[n++] = static_cast<char>(v);
  out.append(b, n);
}

inline std::size_t string_size(std::string_view s) { return varint_size(s.size()) + s.size(); }

inline void put_string(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s.data(), s.size());
}

// Reads from a span it never leaves. Every read checks what is left first; a failure is
// Errc::corrupt_data naming `what` and the offset (relative to `base_offset`, so a record
// decoder can report offsets within its batch).
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes, std::size_t base_offset = 0)
      : bytes_(bytes), base_offset_(base_offset) {}

  std::size_t offset() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  bool at_end() const { return pos_ == bytes_.size(); }

  Result<std::uint8_t> u8(const char* what) {
    if (remaining() < 1) return truncated(what);
    return static_cast<std::uint8_t>(bytes_[pos_++]);
  }
  Result<std::uint32_t> u32(const char* what) {
    if (remaining() < 4) return truncated(what);
    auto v = load_u32(bytes_.data() + pos_);
    pos_ += 4;
    return v;
  }
  Result<std::uint64_t> u64(const char* what) {
    if (remaining() < 8) return truncated(what);
    auto v = load_u64(bytes_.data() + pos_);
    pos_ += 8;
    return v;
  }
  Result<std::uint64_t> varint(const char* what) {
    std::uint64_t v = 0;
    const std::size_t start = pos_;
    for (int shift = 0; shift < 64; shift += 7) {
      if (remaining() < 1) return truncated(what);
      auto b = static_cast<std::uint8_t>(bytes_[pos_++]);
      // The tenth byte may only carry the top bit of a 64-bit value.
      if (shift == 63 && b > 1) return fail(what, "varint overflows 64 bits", start);
      v |= std::uint64_t(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    return fail(what, "varint longer than 10 bytes", start);
  }
  // A length-prefixed byte string, viewed in place (no copy until the caller decides).
  Result<std::string_view> bytes(const char* what) {
    const std::size_t start = pos_;
    auto len = varint(what);
    if (!len) return unexpected(std::move(len).error());
    if (*len > remaining()) {
      return fail(what, "length " + std::to_string(*len) + " exceeds the " +
                            std::to_string(remaining()) + " bytes left", start);
    }
    std::string_view v = bytes_.substr(pos_, static_cast<std::size_t>(*len));
    pos_ += static_cast<std::size_t>(*len);
    return v;
  }
  Result<std::string_view> raw(std::size_t n, const char* what) {
    if (n > remaining()) return truncated(what);
    std::string_view v = bytes_.substr(pos_, n);
    pos_ += n;
    return v;
  }

  Unexpected fail(const char* what, const std::string& why, std::size_t at) const {
    return unexpected(Errc::corrupt_data, std::string(what) + ": " + why + " at offset " +
                                              std::to_string(base_offset_ + at));
  }

 private:
  Unexpected truncated(const char* what) const { return fail(what, "truncated", pos_); }

  std::string_view bytes_;
  std::size_t pos_ = 0;
  std::size_t base_offset_;
};

}  // namespace carrier::store::binary
