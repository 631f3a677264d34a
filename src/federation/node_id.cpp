#include "federation/node_id.hpp"

#include <fmt/format.h>

#include <fstream>
#include <random>
#include <system_error>

namespace carrier::federation {

namespace {
constexpr const char* kFileName = "federation-node-id";
}

std::string to_hex(const codec::Id128& id) {
  std::string out;
  for (auto b : id.bytes) out += fmt::format("{:02x}", b);
  return out;
}

Result<codec::Id128> from_hex(std::string_view text) {
  if (text.size() != 32) return unexpected(Errc::invalid_argument, "a node id is 32 hex digits");
  codec::Id128 id;
  for (std::size_t i = 0; i < 16; ++i) {
    unsigned value = 0;
    for (std::size_t k = 0; k < 2; ++k) {
      const char c = text[2 * i + k];
      unsigned v = 0;
      if (c >= '0' && c <= '9') {
        v = static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v = static_cast<unsigned>(c - 'a' + 10);
      } else {
        return unexpected(Errc::invalid_argument, "a node id is 32 lower-case hex digits");
      }
      value = value * 16 + v;
    }
    id.bytes[i] = static_cast<std::uint8_t>(value);
  }
  return id;
}

Result<codec::Id128> load_or_create_node_id(const std::filesystem::path& data_dir) {
  const auto path = data_dir / kFileName;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    std::ifstream in(path);
    std::string text;
    in >> text;
    auto id = from_hex(text);
    if (!id) return unexpected(Errc::invalid_argument, fmt::format("{}: {}", path.string(), id.error().detail));
    return id;
  }
  std::filesystem::create_directories(data_dir, ec);
  std::random_device random;
  codec::Id128 id;
  for (auto& b : id.bytes) b = static_cast<std::uint8_t>(random());
  // Written beside, then renamed: a crash never leaves half an id that would stop start-up.
  const auto temp = data_dir / (std::string(kFileName) + ".tmp");
  {
    std::ofstream out(temp, std::ios::trunc);
    out << to_hex(id) << "\n";
    out.flush();
    if (!out) return unexpected(Errc::io_error, fmt::format("cannot write {}", temp.string()));
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) return unexpected(Errc::io_error, fmt::format("cannot write {}: {}", path.string(), ec.message()));
  return id;
}

}  // namespace carrier::federation
