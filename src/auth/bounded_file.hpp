#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace carrier::auth {

// The whole of a small file [auth] names (the users file, the tokens file), refused past
// `max_bytes` so a mistake (a log file named instead) fails clearly. Missing: Errc::not_found;
// unreadable: Errc::io_error; too large: Errc::limit_exceeded; each names `what` and the path.
Result<std::string> read_bounded_file(const std::filesystem::path& path, std::string_view what, std::size_t max_bytes);

}  // namespace carrier::auth
