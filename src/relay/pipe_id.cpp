#include "relay/pipe_id.hpp"

namespace carrier::relay {

namespace {

constexpr std::string_view kPrefix = "urn:jxta:uuid-";
constexpr std::string_view kPipeType = "04";
constexpr std::string_view kGroupType = "02";

std::string make_id(char kind, std::string_view name, std::string_view type) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out(kPrefix);
  out.reserve(kPrefix.size() + 2 * (name.size() + 1) + type.size());
  auto put = [&out](unsigned char c) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  };
  put(static_cast<unsigned char>(kind));
  for (char c : name) put(static_cast<unsigned char>(c));
  out.append(type);
  return out;
}

int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The kind letter and name an id of `type` holds, or nullopt.
std::optional<std::string> read_id(std::string_view id, std::string_view type) {
  if (!id.starts_with(kPrefix) || !id.ends_with(type)) return std::nullopt;
  id = id.substr(kPrefix.size(), id.size() - kPrefix.size() - type.size());
  if (id.size() < 4 || id.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(id.size() / 2);
  for (std::size_t i = 0; i < id.size(); i += 2) {
    const int hi = nibble(id[i]);
    const int lo = nibble(id[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

}  // namespace

std::string pipe_id(const model::Destination& destination) {
  return make_id(destination.kind == model::DestinationKind::topic ? 'T' : 'Q', destination.name, kPipeType);
}

std::optional<model::Destination> pipe_destination(std::string_view id) {
  auto raw = read_id(id, kPipeType);
  if (!raw || (raw->front() != 'Q' && raw->front() != 'T')) return std::nullopt;
  return model::Destination{raw->front() == 'T' ? model::DestinationKind::topic : model::DestinationKind::queue,
                            raw->substr(1)};
}

std::string group_id(std::string_view group) { return make_id('G', group, kGroupType); }

std::optional<std::string> group_name(std::string_view id) {
  auto raw = read_id(id, kGroupType);
  if (!raw || raw->front() != 'G') return std::nullopt;
  return raw->substr(1);
}

}  // namespace carrier::relay
