#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "auth/options.hpp"

namespace carrier::auth {

// A new bearer token: "carrier_" and 256 random bits in unpadded base64url (libsodium's
// randombytes). Call init_sodium() first.
std::string new_token();
// SHA-256 of `token`, 64 lower-case hex digits: what the tokens file keeps.
std::string token_digest_hex(std::string_view token);

// The configured bearer tokens by digest. Looked up by the digest's first 8 bytes, then the
// whole digest compared in constant time (sodium_memcmp), so timing tells nothing about how
// much of a guess was right. Built once; read-only after (any thread).
class TokenTable {
 public:
  TokenTable() = default;
  explicit TokenTable(const std::vector<Token>& tokens);

  // The user `token` authenticates, if it is one of these and not expired at `now_s` (epoch s).
  std::optional<std::string> user_of(std::string_view token, std::int64_t now_s) const;
  bool empty() const { return by_prefix_.empty(); }

 private:
  struct Entry {
    std::array<unsigned char, 32> digest;
    std::string user;
    std::int64_t expires_s = 0;
  };
  std::unordered_multimap<std::uint64_t, Entry> by_prefix_;
};

}  // namespace carrier::auth
