#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace carrier::auth {

class Acl;

// One user who may log in: a name and a libsodium crypto_pwhash_str (argon2id) hash. Never a
// plaintext password.
struct User {
  std::string name;
  std::string password_hash;
  std::string source;  // where it was defined ("users.txt:3", "carrier.toml:12:1"), for errors
};

// A bearer token (HTTP `Authorization: Bearer`) for a user: never the token itself, only its
// SHA-256 (the token is 256 random bits, so a fast hash is as safe as a slow one) and when it
// stops working. `carrier token create` makes one (docs/auth.md).
struct Token {
  std::string user;
  std::int64_t expires_s = 0;  // epoch seconds; 0: never
  std::string digest_hex;      // SHA-256 of the token, 64 lower-case hex digits
  std::string source;          // "tokens.txt:3", for errors
};

// The [auth] section. With no users, every client is let in as today (zero-config `make run`).
struct Options {
  // Clients that send no credentials: let in (as nobody) or refused. Unset: true when no users
  // are configured, false when some are. `allow_anonymous` (Mosquitto's name) sets the same. A
  // listener on a non-loopback address with no users needs it set to true explicitly.
  std::optional<bool> anonymous;
  // A file of `name:hash` lines, read once at start-up (its users are added to `users`).
  std::filesystem::path users_file;
  std::vector<User> users;  // [[auth.user]] entries, then the users file's
  // A file of `USER:EXPIRES:SHA256` lines (`carrier token create` appends them), read once at
  // start-up; its tokens authenticate HTTP requests as their user.
  std::filesystem::path tokens_file;
  std::vector<Token> tokens;
  // Who may do what where (docs/auth.md, "Authorization"): read at start-up and on SIGHUP. Empty:
  // no ACL, every client that may connect may do everything (today's behaviour).
  std::filesystem::path acl_file;
  std::shared_ptr<const Acl> acl;  // acl_file parsed by config::load
  // A failed login is answered after this long: slows a client guessing passwords one by one.
  std::uint32_t failure_delay_ms = 1000;
  // ... doubled for each failure the source address has on record (they decay as the budget
  // refills), up to this: a guesser waits longer and longer, a typo costs a second.
  std::uint32_t failure_delay_max_ms = 10'000;
  // Threads that verify passwords (each argon2id verification holds the hash's memory, 64 MiB
  // at libsodium's interactive limits).
  unsigned verify_threads = 1;
  // Logins waiting for a verifier in the first lane (sources with no recent failure, one login
  // each at a time); past this a login is refused at once as "busy".
  std::size_t max_pending = 256;
  // Logins waiting in the second lane: sources that failed recently, and a source's logins
  // beyond its one in the first lane. It gets one check in four while the first lane is busy.
  std::size_t max_pending_suspect = 32;
  // Failed password checks one source address may have before its logins are refused at once
  // without a check ("too many failed logins"); it regains one every window / limit.
  std::uint32_t source_failure_limit = 10;
  std::uint32_t failure_window_ms = 60'000;
  // Failed checks of all sources together (same window): past it, only sources without a
  // recent failure are checked.
  std::uint32_t total_failure_limit = 100;
  // Source addresses remembered for the above; the least recently seen is forgotten first.
  std::size_t max_sources = 10'000;

  bool allows_anonymous() const { return anonymous.value_or(users.empty()); }
};

}  // namespace carrier::auth
