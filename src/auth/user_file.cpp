#include "auth/user_file.hpp"

#include <fmt/format.h>

#include <string>
#include <unordered_map>

#include "auth/text_file.hpp"
#include "auth/user_syntax.hpp"

namespace carrier::auth {

Result<std::vector<User>> parse_user_file(std::string_view text, std::string_view source_name) {
  std::vector<User> users;
  std::unordered_map<std::string_view, std::size_t> line_of;  // name -> line, for duplicates
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;

    const auto where = fmt::format("{}:{}", source_name, line_number);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      return unexpected(Errc::invalid_argument, fmt::format("expected NAME:HASH in {}", where));
    }
    const auto name = line.substr(0, colon);
    const auto hash = line.substr(colon + 1);
    if (auto problem = user_name_problem(name); !problem.empty()) {
      return unexpected(Errc::invalid_argument, fmt::format("{} in {}", problem, where));
    }
    if (auto problem = password_hash_problem(hash); !problem.empty()) {
      return unexpected(Errc::invalid_argument,
                        fmt::format("the hash of user \"{}\" {} in {}", printable_name(name), problem, where));
    }
    if (auto [it, fresh] = line_of.emplace(name, line_number); !fresh) {
      return unexpected(Errc::invalid_argument, fmt::format("user \"{}\" is defined twice, in {}:{} and {}",
                                                            printable_name(name), source_name, it->second, where));
    }
    users.push_back(User{std::string(name), std::string(hash), where});
  }
  return users;
}

Result<std::vector<User>> read_user_file(const std::filesystem::path& path) {
  auto text = read_text_file(path, kMaxUserFileBytes, "users file");
  if (!text) return unexpected(text.error());
  return parse_user_file(*text, path.string());
}

}  // namespace carrier::auth
