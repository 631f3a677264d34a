#include "auth/token_table.hpp"

#include <sodium.h>

#include <cstring>

namespace carrier::auth {

namespace {

std::array<unsigned char, 32> digest_of(std::string_view token) {
  std::array<unsigned char, crypto_hash_sha256_BYTES> d{};
  crypto_hash_sha256(d.data(), reinterpret_cast<const unsigned char*>(token.data()), token.size());
  return d;
}

std::uint64_t prefix_of(const std::array<unsigned char, 32>& d) {
  std::uint64_t p = 0;
  std::memcpy(&p, d.data(), sizeof p);
  return p;
}

}  // namespace

std::string new_token() {
  unsigned char bytes[32];
  randombytes_buf(bytes, sizeof bytes);
  char text[sodium_base64_ENCODED_LEN(sizeof bytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
  sodium_bin2base64(text, sizeof text, bytes, sizeof bytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  sodium_memzero(bytes, sizeof bytes);
  std::string token = "carrier_";
  token += text;
  sodium_memzero(text, sizeof text);
  return token;
}

std::string token_digest_hex(std::string_view token) {
  const auto d = digest_of(token);
  char hex[crypto_hash_sha256_BYTES * 2 + 1];
  sodium_bin2hex(hex, sizeof hex, d.data(), d.size());
  return std::string(hex, crypto_hash_sha256_BYTES * 2);
}

TokenTable::TokenTable(const std::vector<Token>& tokens) {
  for (const auto& t : tokens) {
    Entry e{{}, t.user, t.expires_s};
    std::size_t n = 0;
    if (sodium_hex2bin(e.digest.data(), e.digest.size(), t.digest_hex.data(), t.digest_hex.size(), nullptr, &n,
                       nullptr) != 0 ||
        n != e.digest.size()) {
      continue;  // parse_token_file let only 64 hex digits through
    }
    by_prefix_.emplace(prefix_of(e.digest), std::move(e));
  }
}

std::optional<std::string> TokenTable::user_of(std::string_view token, std::int64_t now_s) const {
  if (by_prefix_.empty()) return std::nullopt;
  const auto d = digest_of(token);
  const auto [first, last] = by_prefix_.equal_range(prefix_of(d));
  for (auto it = first; it != last; ++it) {
    const Entry& e = it->second;
    if (sodium_memcmp(e.digest.data(), d.data(), d.size()) != 0) continue;
    if (e.expires_s != 0 && now_s >= e.expires_s) return std::nullopt;
    return e.user;
  }
  return std::nullopt;
}

}  // namespace carrier::auth
