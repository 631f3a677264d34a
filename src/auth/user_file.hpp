#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "auth/options.hpp"
#include "base/result.hpp"

namespace carrier::auth {

// The users file: one `NAME:HASH` line per user, HASH as `carrier passwd` prints it (libsodium
// crypto_pwhash_str, argon2id). Blank lines and lines starting with `#` are skipped; CRLF line
// ends and trailing spaces are tolerated. A bad line is an Errc::invalid_argument naming
// SOURCE:LINE and the problem; a hash is never echoed (it might be a misplaced password).
// Pure (no I/O): fuzzed by fuzz/user_file.cpp.
Result<std::vector<User>> parse_user_file(std::string_view text, std::string_view source_name);

// The largest users file read: a mistake (a log file named as users file) fails clearly.
inline constexpr std::size_t kMaxUserFileBytes = 16u << 20;

// Reads and parses `path`. Missing: Errc::not_found; unreadable or too large: Errc::io_error /
// limit_exceeded; all name the path.
Result<std::vector<User>> read_user_file(const std::filesystem::path& path);

}  // namespace carrier::auth
