#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace carrier::auth {

// The whole of a small configuration file (users file, ACL file). Missing: Errc::not_found;
// unreadable: Errc::io_error; larger than `max_bytes`: Errc::limit_exceeded. Each error says
// "cannot read WHAT PATH: reason" or names the limit.
Result<std::string> read_text_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what);

}  // namespace carrier::auth
