#include "relay/codec/relay_target.hpp"

#include <charconv>

#include <fmt/format.h>

namespace carrier::relay::codec {

namespace {

constexpr std::string_view kUnknownPeer = "/unknown-unknown";
constexpr std::string_view kPeerPrefix = "uuid-";
constexpr std::size_t kMaxPeerHexDigits = 128;

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f'); }

template <class Int>
bool parse_int(std::string_view text, Int& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

Unexpected bad(std::string detail) { return unexpected(Errc::invalid_argument, "relay request: " + std::move(detail)); }

}  // namespace

bool is_relay_path(std::string_view path) {
  return path.starts_with(kUnknownPeer) || path.starts_with("/uuid-");
}

bool is_peer_id(std::string_view id) {
  if (!id.starts_with(kPeerPrefix)) return false;
  id.remove_prefix(kPeerPrefix.size());
  if (id.size() < 2 || id.size() > kMaxPeerHexDigits) return false;
  for (char c : id) {
    if (!is_hex(c)) return false;
  }
  return true;
}

Result<RelayTarget> parse_relay_target(std::string_view path, std::string_view query) {
  RelayTarget t;
  if (path != kUnknownPeer) {
    path.remove_prefix(1);
    if (!is_peer_id(path)) {
      return bad(fmt::format("'{}' is not a peer id (uuid- and 2 to {} hex digits)", path.substr(0, 64),
                             kMaxPeerHexDigits));
    }
    t.peer = std::string(path);
  }
  // <timeout>,<lazy close>,<address>
  const auto c1 = query.find(',');
  const auto timeout = query.substr(0, c1);
  if (!timeout.empty() && !parse_int(timeout, t.wait_ms)) {
    return bad(fmt::format("the timeout '{}' is not a number of milliseconds", timeout.substr(0, 32)));
  }
  if (c1 == std::string_view::npos) {
    if (t.peer.empty()) return bad("unknown-unknown asks for a peer id: the query must end in /pid");
    return t;
  }
  const auto c2 = query.find(',', c1 + 1);
  std::string_view address = c2 == std::string_view::npos ? std::string_view() : query.substr(c2 + 1);
  // The command is the address's last path segment, with its arguments after commas.
  const auto args_at = address.find(',');
  const auto head = address.substr(0, args_at);
  const auto slash = head.rfind('/');
  const auto command = slash == std::string_view::npos ? std::string_view() : head.substr(slash + 1);
  if (command == "pid" && args_at == std::string_view::npos) {
    t.command = Command::pid;
    t.relay_address = std::string(head.substr(0, slash));
    return t;
  }
  if (command == "connect") {
    if (t.peer.empty()) return bad("connect needs a peer id in the path (ask for one with /pid first)");
    t.command = Command::connect;
    t.relay_address = std::string(head.substr(0, slash));
    if (args_at != std::string_view::npos) {
      auto args = address.substr(args_at + 1);
      const auto lease = args.substr(0, args.find(','));
      if (!parse_int(lease, t.lease_ms)) {
        return bad(fmt::format("the lease '{}' is not a number of milliseconds", lease.substr(0, 32)));
      }
    }
    return t;
  }
  if (t.peer.empty()) return bad("unknown-unknown asks for a peer id: the query must end in /pid");
  t.relay_address = std::string(address);
  return t;
}

}  // namespace carrier::relay::codec
