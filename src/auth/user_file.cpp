#include "auth/user_file.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <unordered_map>

#include "auth/bounded_file.hpp"
#include "auth/entry_lines.hpp"
#include "auth/user_syntax.hpp"

namespace carrier::auth {

Result<std::vector<User>> parse_user_file(std::string_view text, std::string_view source_name) {
  std::vector<User> users;
  std::unordered_map<std::string_view, std::size_t> line_of;  // name -> line, for duplicates
  auto error = for_each_entry_line(text, source_name, [&](std::string_view line, std::size_t line_number,
                                                          const std::string& where) -> std::optional<std::string> {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return fmt::format("expected NAME:HASH in {}", where);
    const auto name = line.substr(0, colon);
    const auto hash = line.substr(colon + 1);
    if (auto problem = user_name_problem(name); !problem.empty()) return fmt::format("{} in {}", problem, where);
    if (auto problem = password_hash_problem(hash); !problem.empty()) {
      return fmt::format("the hash of user \"{}\" {} in {}", printable_name(name), problem, where);
    }
    if (auto [it, fresh] = line_of.emplace(name, line_number); !fresh) {
      return fmt::format("user \"{}\" is defined twice, in {}:{} and {}", printable_name(name), source_name, it->second,
                         where);
    }
    users.push_back(User{std::string(name), std::string(hash), where});
    return std::nullopt;
  });
  if (error) return unexpected(std::move(*error));
  return users;
}

Result<std::vector<User>> read_user_file(const std::filesystem::path& path) {
  auto text = read_bounded_file(path, "users file", kMaxUserFileBytes);
  if (!text) return unexpected(std::move(text).error());
  return parse_user_file(*text, path.string());
}

}  // namespace carrier::auth
