#pragma once

#include <string>
#include <string_view>

namespace carrier::auth {

// What a user name and a stored password hash must look like, wherever they are written (the
// users file, [[auth.user]]). Each returns why `text` is not acceptable, or "" when it is.
// Pure: no libsodium (the fuzz build links this alone); auth::Authenticator has libsodium check
// each hash once more before it is used.

// 1 to kMaxUserNameBytes bytes of UTF-8, no control characters, no ':' (the users file's
// separator), no space at either end.
inline constexpr std::size_t kMaxUserNameBytes = 256;
std::string user_name_problem(std::string_view name);

// The string libsodium's crypto_pwhash_str makes with argon2id:
// $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt, base64>$<hash, base64>.
std::string password_hash_problem(std::string_view hash);

// `text` for an error message: escaped and cut short (it came from a file or a peer).
std::string printable_name(std::string_view text);

}  // namespace carrier::auth
