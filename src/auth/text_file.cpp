#include "auth/text_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace carrier::auth {

Result<std::string> read_text_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) {
    const int err = errno;
    return unexpected(err == ENOENT ? Errc::not_found : Errc::io_error,
                      fmt::format("cannot read {} {}: {}", what, path.string(), std::strerror(err)));
  }
  std::string text;
  char buffer[8192];
  while (true) {
    const std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
    text.append(buffer, n);
    if (text.size() > max_bytes) {
      return unexpected(Errc::limit_exceeded, fmt::format("{} {} is larger than {} bytes", what, path.string(), max_bytes));
    }
    if (n < sizeof buffer) break;
  }
  if (std::ferror(file.get())) {
    const int err = errno;
    return unexpected(Errc::io_error, fmt::format("cannot read {} {}: {}", what, path.string(), std::strerror(err)));
  }
  return text;
}

}  // namespace carrier::auth
