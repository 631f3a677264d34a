#include "auth/user_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>

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
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) {
    const int err = errno;
    return unexpected(err == ENOENT ? Errc::not_found : Errc::io_error,
                      fmt::format("cannot read users file {}: {}", path.string(), std::strerror(err)));
  }
  std::string text;
  char buffer[8192];
  while (true) {
    const std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
    text.append(buffer, n);
    if (text.size() > kMaxUserFileBytes) {
      return unexpected(Errc::limit_exceeded,
                        fmt::format("users file {} is larger than {} bytes", path.string(), kMaxUserFileBytes));
    }
    if (n < sizeof buffer) break;
  }
  if (std::ferror(file.get())) {
    const int err = errno;
    return unexpected(Errc::io_error, fmt::format("cannot read users file {}: {}", path.string(), std::strerror(err)));
  }
  return parse_user_file(text, path.string());
}

}  // namespace carrier::auth
