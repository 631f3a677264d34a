#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "auth/options.hpp"
#include "base/result.hpp"

namespace carrier::auth {

// The tokens file: one `USER:EXPIRES:SHA256` line per bearer token, EXPIRES in epoch seconds
// (0: never), SHA256 the token's digest in hex, as `carrier token create` appends it. Blank
// lines and lines starting with `#` are skipped; CRLF and trailing spaces are tolerated. A bad
// line is an Errc::invalid_argument naming SOURCE:LINE. Pure (no I/O).
Result<std::vector<Token>> parse_token_file(std::string_view text, std::string_view source_name);

// The line for `token` (without its line end).
std::string token_line(const Token& token);

inline constexpr std::size_t kMaxTokenFileBytes = 16u << 20;

// Reads and parses `path` (errors as read_user_file's).
Result<std::vector<Token>> read_token_file(const std::filesystem::path& path);

}  // namespace carrier::auth
