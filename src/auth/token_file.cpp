#include "auth/token_file.hpp"

#include <fmt/format.h>

#include <charconv>
#include <optional>

#include "auth/bounded_file.hpp"
#include "auth/entry_lines.hpp"
#include "auth/user_syntax.hpp"

namespace carrier::auth {

namespace {

bool is_digest_hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

Result<std::vector<Token>> parse_token_file(std::string_view text, std::string_view source_name) {
  std::vector<Token> tokens;
  auto error = for_each_entry_line(text, source_name, [&](std::string_view line, std::size_t,
                                                          const std::string& where) -> std::optional<std::string> {
    // The user name may not hold ':' (user_name_problem), so the last two colons split the line.
    const auto second = line.rfind(':');
    const auto colon = second == std::string_view::npos || second == 0 ? std::string_view::npos : line.rfind(':', second - 1);
    if (colon == std::string_view::npos) return fmt::format("expected USER:EXPIRES:SHA256 in {}", where);
    const auto user = line.substr(0, colon);
    const auto expires = line.substr(colon + 1, second - colon - 1);
    const auto digest = line.substr(second + 1);
    if (auto problem = user_name_problem(user); !problem.empty()) return fmt::format("{} in {}", problem, where);
    Token t{std::string(user), 0, std::string(digest), where};
    const auto [ptr, ec] = std::from_chars(expires.data(), expires.data() + expires.size(), t.expires_s);
    if (ec != std::errc() || ptr != expires.data() + expires.size() || expires.empty() || t.expires_s < 0) {
      return fmt::format("the expiry of a token of user \"{}\" is not epoch seconds (or 0) in {}", printable_name(user),
                         where);
    }
    if (!is_digest_hex(digest)) {
      return fmt::format("a token of user \"{}\" is not a SHA-256 in 64 lower-case hex digits in {} "
                         "(`carrier token create` writes the line)",
                         printable_name(user), where);
    }
    tokens.push_back(std::move(t));
    return std::nullopt;
  });
  if (error) return unexpected(std::move(*error));
  return tokens;
}

std::string token_line(const Token& token) {
  return fmt::format("{}:{}:{}", token.user, token.expires_s, token.digest_hex);
}

Result<std::vector<Token>> read_token_file(const std::filesystem::path& path) {
  auto text = read_bounded_file(path, "tokens file", kMaxTokenFileBytes);
  if (!text) return unexpected(std::move(text).error());
  return parse_token_file(*text, path.string());
}

}  // namespace carrier::auth
