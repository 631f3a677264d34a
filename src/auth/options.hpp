#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace carrier::auth {

// One user who may log in: a name and a libsodium crypto_pwhash_str (argon2id) hash. Never a
// plaintext password.
struct User {
  std::string name;
  std::string password_hash;
  std::string source;  // where it was defined ("users.txt:3", "carrier.toml:12:1"), for errors
};

// The [auth] section. With no users, every client is let in as today (zero-config `make run`).
struct Options {
  // Clients that send no credentials: let in (as nobody) or refused. Unset: true when no users
  // are configured, false when some are.
  std::optional<bool> anonymous;
  // A file of `name:hash` lines, read once at start-up (its users are added to `users`).
  std::filesystem::path users_file;
  std::vector<User> users;  // [[auth.user]] entries, then the users file's
  // A failed login is answered after this long: slows a client guessing passwords one by one.
  std::uint32_t failure_delay_ms = 1000;
  // Threads that verify passwords (each argon2id verification holds the hash's memory, 64 MiB
  // at libsodium's interactive limits).
  unsigned verify_threads = 1;
  // Logins waiting for a verifier; past this a login is refused at once as "busy".
  std::size_t max_pending = 256;

  bool allows_anonymous() const { return anonymous.value_or(users.empty()); }
};

}  // namespace carrier::auth
