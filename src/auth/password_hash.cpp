#include "auth/password_hash.hpp"

#include <sodium.h>

namespace carrier::auth {

Status init_sodium() {
  // 0: initialised now, 1: already was, -1: failed (no entropy source).
  if (sodium_init() < 0) return unexpected(Errc::unavailable, "libsodium could not be initialised");
  return ok();
}

Result<std::string> hash_password(std::string_view password) {
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                        crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0) {
    return unexpected(Errc::unavailable, "crypto_pwhash_str failed (out of memory?)");
  }
  return std::string(out);
}

bool verify_password(const std::string& hash, std::string_view password) {
  return crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
}

bool is_usable_hash(const std::string& hash) {
  // -1: not a hash of the default algorithm (argon2id) that libsodium can read.
  return crypto_pwhash_str_needs_rehash(hash.c_str(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                        crypto_pwhash_MEMLIMIT_INTERACTIVE) != -1;
}

void wipe(std::string& secret) {
  // Up to the capacity: a moved-from or shortened string may still hold the bytes in its
  // (small-string) buffer. resize() within the capacity does not reallocate.
  secret.resize(secret.capacity());
  if (!secret.empty()) sodium_memzero(secret.data(), secret.size());
  secret.clear();
}

}  // namespace carrier::auth
