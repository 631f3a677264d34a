#pragma once

#include <string>
#include <string_view>

#include "base/result.hpp"

namespace carrier::auth {

// libsodium's argon2id password hashing (crypto_pwhash_str), at its "interactive" limits:
// 2 passes over 64 MiB, about 0.1 s of one core per hash or verification. Slow on purpose: it
// is what makes a stolen users file expensive to attack, and why verification runs on the
// Authenticator's own threads, never on a shard.

// Initialises libsodium (once per process; safe to call from any thread, any number of times).
Status init_sodium();

// A new crypto_pwhash_str string for `password` (random salt). Errc::unavailable if libsodium
// could not allocate the memory.
Result<std::string> hash_password(std::string_view password);

// Whether `password` matches `hash`. False for a malformed hash too.
bool verify_password(const std::string& hash, std::string_view password);

// Whether libsodium reads `hash` as an argon2id crypto_pwhash_str string.
bool is_usable_hash(const std::string& hash);

// Overwrites `secret`'s buffer (sodium_memzero: not optimised away), then empties it.
void wipe(std::string& secret);

}  // namespace carrier::auth
