#include "auth/user_syntax.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace carrier::auth {
namespace {

// Bytes of the UTF-8 sequence starting at text[i], or 0 if it is not a valid one (overlong
// forms, surrogates and values past U+10FFFF included).
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto d = static_cast<unsigned char>(text[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  static constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool is_digits(std::string_view s) {
  if (s.empty() || s.size() > 10) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool is_base64(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
    if (!ok) return false;
  }
  return true;
}

// Removes `prefix` from the front of `s`; false if it is not there.
bool eat(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// Takes the text up to `stop` (which is consumed too); false if `stop` does not follow.
bool take_until(std::string_view& s, char stop, std::string_view& field) {
  const auto at = s.find(stop);
  if (at == std::string_view::npos) return false;
  field = s.substr(0, at);
  s.remove_prefix(at + 1);
  return true;
}

}  // namespace

std::string user_name_problem(std::string_view name) {
  if (name.empty()) return "a user name must not be empty";
  if (name.size() > kMaxUserNameBytes) return fmt::format("a user name is at most {} bytes", kMaxUserNameBytes);
  if (name.front() == ' ' || name.back() == ' ') return "a user name must not begin or end with a space";
  for (std::size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) return "a user name must not contain control characters";
    if (c == ':') return "a user name must not contain ':'";
    const std::size_t n = utf8_sequence(name, i);
    if (n == 0) return "a user name must be UTF-8";
    i += n;
  }
  return {};
}

std::string password_hash_problem(std::string_view hash) {
  // Never echoed: a plaintext password written where the hash goes must not reach a log.
  constexpr std::string_view kExpected =
      "must be an argon2id hash as libsodium's crypto_pwhash_str writes it "
      "($argon2id$v=19$m=...,t=...,p=...$SALT$HASH; `carrier passwd` makes one)";
  std::string_view s = hash;
  std::string_view m, t, p, salt;
  if (hash.size() >= 128) return std::string(kExpected);  // crypto_pwhash_STRBYTES, NUL included
  if (!eat(s, "$argon2id$v=19$m=") || !take_until(s, ',', m) || !is_digits(m) || !eat(s, "t=") ||
      !take_until(s, ',', t) || !is_digits(t) || !eat(s, "p=") || !take_until(s, '$', p) || !is_digits(p) ||
      !take_until(s, '$', salt) || !is_base64(salt) || !is_base64(s)) {
    return std::string(kExpected);
  }
  return {};
}

std::string printable_name(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == 64) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace carrier::auth
