#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.hpp"
#include "federation/codec/id128.hpp"
#include "federation/codec/limits.hpp"

// Binds `var` to the value of a Result-returning `expr`, or returns its error from the
// enclosing function. The structure decoders are chains of reads; this keeps each a line.
#define CARRIER_FED_TRY(var, expr)                                                    \
  auto var##_result = (expr);                                                         \
  if (!var##_result) return ::carrier::unexpected(std::move(var##_result).error());   \
  auto var = std::move(*var##_result)

// JPPP's byte expression: 32-bit big-endian integers, 128-bit ids as 16 raw bytes, PStrings
// (bytes up to a NUL) and return strings (bytes up to CR LF).
namespace carrier::federation::codec {

void put_u32(std::string& out, std::uint32_t v);
inline void put_i32(std::string& out, std::int32_t v) { put_u32(out, static_cast<std::uint32_t>(v)); }
void put_id(std::string& out, const Id128& id);
// Appends `s` and its NUL. A PString cannot hold a NUL: Errc::invalid_argument naming `what`,
// and `out` is left as it was.
Status put_pstring(std::string& out, std::string_view s, std::string_view what);
// Bytes of `s` as a PString (its NUL included).
inline std::size_t pstring_size(std::string_view s) { return s.size() + 1; }

// Reads the primitives from a byte range without ever reading past it. Errors are
// Errc::protocol_error (truncated, missing NUL, bad value) or Errc::limit_exceeded, with a
// detail naming the field and its byte offset from the start of the range.
class WireReader {
 public:
  // `base`: where `bytes` starts in the enclosing input, so that offsets in errors from a
  // reader over a sub-range still count from the start of the whole structure or frame.
  explicit WireReader(std::string_view bytes, std::size_t base = 0) : bytes_(bytes), base_(base) {}

  Result<std::uint32_t> u32(std::string_view what);
  Result<std::int32_t> i32(std::string_view what);
  // A u32 count or length that may not exceed `limit` (Errc::limit_exceeded, naming `unit`:
  // "bytes", "entries").
  Result<std::uint32_t> count(std::string_view what, std::size_t limit, std::string_view unit);
  Result<Id128> id(std::string_view what);
  // `n` raw bytes (checked against what is left first).
  Result<std::string_view> bytes(std::size_t n, std::string_view what);
  // A PString of at most `max_bytes` (NUL excluded); the NUL is consumed, not returned.
  Result<std::string_view> pstring(std::size_t max_bytes, std::string_view what);

  std::size_t offset() const { return at_; }
  std::size_t base() const { return base_; }
  std::size_t remaining() const { return bytes_.size() - at_; }
  bool at_end() const { return at_ == bytes_.size(); }
  // An error about `what` at byte `offset` of this reader's range (reported plus `base`).
  Unexpected fail(Errc code, std::string_view what, std::string_view problem, std::size_t offset) const;
  // Errc::protocol_error unless every byte was read.
  Status expect_end(std::string_view what) const;

 private:
  std::string_view bytes_;
  std::size_t base_ = 0;
  std::size_t at_ = 0;
};

// Decodes exactly one structure with `read` (read_basic_message, read_forwarder...) from all
// of `bytes`: trailing bytes are Errc::protocol_error naming `what`.
template <class Read>
auto decode_exactly(std::string_view bytes, const Limits& limits, std::string_view what, Read read)
    -> decltype(read(std::declval<WireReader&>(), limits)) {
  WireReader in(bytes);
  auto value = read(in, limits);
  if (!value) return value;
  if (auto end = in.expect_end(what); !end) return unexpected(end.error());
  return value;
}

}  // namespace carrier::federation::codec
