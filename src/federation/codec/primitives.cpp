#include "federation/codec/primitives.hpp"

#include <cstring>

namespace carrier::federation::codec {

void put_u32(std::string& out, std::uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
  out.append(b, 4);
}

void put_id(std::string& out, const Id128& id) {
  out.append(reinterpret_cast<const char*>(id.bytes.data()), id.bytes.size());
}

Status put_pstring(std::string& out, std::string_view s, std::string_view what) {
  if (s.find('\0') != std::string_view::npos) {
    return unexpected(Errc::invalid_argument,
                      std::string(what) + ": a PString cannot contain a NUL byte");
  }
  out.append(s.data(), s.size());
  out.push_back('\0');
  return ok();
}

Unexpected WireReader::fail(Errc code, std::string_view what, std::string_view problem,
                            std::size_t offset) const {
  return unexpected(code, std::string(what) + ": " + std::string(problem) + " at byte " +
                              std::to_string(base_ + offset));
}

Result<std::uint32_t> WireReader::u32(std::string_view what) {
  if (remaining() < 4) return fail(Errc::protocol_error, what, "truncated 32-bit integer", at_);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data() + at_);
  at_ += 4;
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) |
         std::uint32_t(p[3]);
}

Result<std::int32_t> WireReader::i32(std::string_view what) {
  CARRIER_FED_TRY(v, u32(what));
  return static_cast<std::int32_t>(v);
}

Result<std::uint32_t> WireReader::count(std::string_view what, std::size_t limit,
                                        std::string_view unit) {
  const std::size_t at = at_;
  CARRIER_FED_TRY(v, u32(what));
  if (v > limit) {
    return fail(Errc::limit_exceeded, what,
                std::to_string(v) + " " + std::string(unit) + " is over the limit of " + std::to_string(limit), at);
  }
  return v;
}

Result<Id128> WireReader::id(std::string_view what) {
  if (remaining() < 16) return fail(Errc::protocol_error, what, "truncated 128-bit id", at_);
  Id128 id;
  std::memcpy(id.bytes.data(), bytes_.data() + at_, 16);
  at_ += 16;
  return id;
}

Result<std::string_view> WireReader::bytes(std::size_t n, std::string_view what) {
  if (remaining() < n) {
    return fail(Errc::protocol_error, what,
                "truncated: " + std::to_string(n) + " bytes announced, " +
                    std::to_string(remaining()) + " present",
                at_);
  }
  const std::string_view v = bytes_.substr(at_, n);
  at_ += n;
  return v;
}

Result<std::string_view> WireReader::pstring(std::size_t max_bytes, std::string_view what) {
  // Scan no further than the limit allows, so a long run of non-NUL bytes costs at most
  // max_bytes + 1 bytes of scanning.
  const std::size_t window = max_bytes < remaining() ? max_bytes + 1 : remaining();
  const void* nul = std::memchr(bytes_.data() + at_, '\0', window);
  if (nul == nullptr) {
    if (window > max_bytes) {
      return fail(Errc::limit_exceeded, what,
                  "PString longer than " + std::to_string(max_bytes) + " bytes", at_);
    }
    return fail(Errc::protocol_error, what, "missing NUL (truncated PString)", at_);
  }
  const std::size_t n = static_cast<const char*>(nul) - (bytes_.data() + at_);
  const std::string_view v = bytes_.substr(at_, n);
  at_ += n + 1;
  return v;
}

Status WireReader::expect_end(std::string_view what) const {
  if (at_end()) return ok();
  return fail(Errc::protocol_error, what, std::to_string(remaining()) + " trailing bytes", at_);
}

}  // namespace carrier::federation::codec
