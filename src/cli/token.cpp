#include "cli/token.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "auth/password_hash.hpp"
#include "auth/token_file.hpp"
#include "auth/token_table.hpp"
#include "auth/user_syntax.hpp"
#include "cli/commands.hpp"

namespace carrier::cli {

namespace {

// "30d", "12h", "90m", "3600s", "3600" (seconds); "0" or "never": no expiry.
std::optional<std::int64_t> ttl_seconds(const std::string& text) {
  if (text == "never") return 0;
  std::int64_t n = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || n < 0 || ptr == text.data()) return std::nullopt;
  const std::string_view unit(ptr, text.data() + text.size() - ptr);
  std::int64_t scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  if (unit == "m") scale = 60;
  if (unit == "h") scale = 3600;
  if (unit == "d") scale = 86400;
  if (scale == 0 || n > INT64_MAX / scale / 2) return std::nullopt;
  return n * scale;
}

int create_token(const std::string& user, const std::string& ttl, const std::string& file) {
  if (auto problem = auth::user_name_problem(user); !problem.empty()) {
    std::cerr << "carrier token: " << problem << "\n";
    return kExitUsage;
  }
  const auto seconds = ttl_seconds(ttl);
  if (!seconds) {
    std::cerr << "carrier token: --ttl takes 30d, 12h, 90m, 3600s or never, got '" << ttl << "'\n";
    return kExitUsage;
  }
  if (auto st = auth::init_sodium(); !st) {
    std::cerr << "carrier token: " << st.error().detail << "\n";
    return kExitFailure;
  }
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  std::string token = auth::new_token();
  const auth::Token entry{user, *seconds == 0 ? 0 : now + *seconds, auth::token_digest_hex(token), {}};
  const std::string line = auth::token_line(entry) + "\n";
  // Only the hash is written, but the file still says who may log in: not for everyone to read.
  const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || ::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()) || ::fsync(fd) != 0) {
    std::cerr << "carrier token: cannot append to " << file << ": " << std::strerror(errno) << "\n";
    if (fd >= 0) ::close(fd);
    return kExitFailure;
  }
  ::close(fd);
  std::printf("%s\n", token.c_str());
  auth::wipe(token);
  return kExitOk;
}

}  // namespace

void add_token_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("token", "Bearer tokens for HTTP ([auth] tokens_file)");
  cmd->require_subcommand(1);
  auto user = std::make_shared<std::string>();
  auto ttl = std::make_shared<std::string>("30d");
  auto file = std::make_shared<std::string>();
  auto* create = cmd->add_subcommand(
      "create", "Make a token for USER: appends its hash to the tokens file and prints the token (shown only once)");
  create->add_option("user", *user, "The user the token logs in as (a configured user)")->required();
  create->add_option("--file", *file, "The tokens file ([auth] tokens_file); created if missing")->required();
  create->add_option("--ttl", *ttl, "How long it works: 30d, 12h, 90m, 3600s, or never (default 30d)");
  create->callback([user, ttl, file] {
    const int code = create_token(*user, *ttl, *file);
    std::fflush(stdout);
    std::exit(code);
  });
}

}  // namespace carrier::cli
