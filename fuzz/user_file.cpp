// libFuzzer target for the users file (auth::parse_user_file), the tokens file
// (auth::parse_token_file, the same line shape) and the user name and password hash syntax
// checks they share with [[auth.user]] in the config file.
//
// The whole input is a users file. Whatever it holds, parsing must return (never crash); an
// error must be an invalid_argument naming the file; every accepted user must pass the syntax
// checks, appear once, and read back the same when written out as NAME:HASH lines again.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "auth/token_file.hpp"
#include "auth/user_file.hpp"
#include "auth/user_syntax.hpp"

namespace {

using namespace carrier;

constexpr std::string_view kSource = "fuzz-users.txt";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  auto users = auth::parse_user_file(text, kSource);
  if (!users) {
    FUZZ_CHECK(users.error().code == Errc::invalid_argument);
    FUZZ_CHECK(users.error().detail.find(kSource) != std::string::npos);
  } else {
    std::set<std::string> names;
    std::string again;
    for (const auto& u : *users) {
      FUZZ_CHECK(auth::user_name_problem(u.name).empty());
      FUZZ_CHECK(auth::password_hash_problem(u.password_hash).empty());
      FUZZ_CHECK(u.source.starts_with(std::string(kSource) + ":"));
      FUZZ_CHECK(names.insert(u.name).second);
      again += u.name + ":" + u.password_hash + "\n";
    }
    auto reread = auth::parse_user_file(again, kSource);
    FUZZ_CHECK(reread.has_value());
    FUZZ_CHECK(reread->size() == users->size());
    for (std::size_t i = 0; i < users->size(); ++i) {
      FUZZ_CHECK((*reread)[i].name == (*users)[i].name);
      FUZZ_CHECK((*reread)[i].password_hash == (*users)[i].password_hash);
    }
  }

  // The same bytes as a tokens file: accepted lines read back the same from token_line().
  auto tokens = auth::parse_token_file(text, kSource);
  if (!tokens) {
    FUZZ_CHECK(tokens.error().code == Errc::invalid_argument);
    FUZZ_CHECK(tokens.error().detail.find(kSource) != std::string::npos);
  } else {
    std::string again;
    for (const auto& t : *tokens) {
      FUZZ_CHECK(auth::user_name_problem(t.user).empty());
      FUZZ_CHECK(t.expires_s >= 0 && t.digest_hex.size() == 64);
      again += auth::token_line(t) + "\n";
    }
    auto reread = auth::parse_token_file(again, kSource);
    FUZZ_CHECK(reread.has_value() && reread->size() == tokens->size());
    for (std::size_t i = 0; i < tokens->size(); ++i) {
      FUZZ_CHECK((*reread)[i].user == (*tokens)[i].user);
      FUZZ_CHECK((*reread)[i].expires_s == (*tokens)[i].expires_s);
      FUZZ_CHECK((*reread)[i].digest_hex == (*tokens)[i].digest_hex);
    }
  }

  // The checks alone, on the raw bytes (as a name from a CONNECT, a hash from the config file).
  (void)auth::user_name_problem(text);
  (void)auth::password_hash_problem(text);
  FUZZ_CHECK(auth::printable_name(text).size() <= 4 * 64 + 3);
  return 0;
}
