#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

// The request targets of seed 000's relay (Listings 2 and 4), and Carrier's poll:
//   GET  /unknown-unknown?0,-1,http://HOST:PORT/EndpointService:jxta-NetGroup/uuid-…/pid
//   GET  /uuid-<peer>?0,-1,http://HOST:PORT/EndpointService:jxta-NetGroup/uuid-…/connect,<lease ms>,keep,other
//   POST /uuid-<peer>[?<wait ms>[,…]]   (a poll: the body carries zero or more requests)
// The query is "<timeout>,<lazy close>,<relay address>[/command,args]"; the address may itself
// hold commas only after the command.
namespace carrier::relay::codec {

enum class Command : std::uint8_t { pid, connect, poll };

struct RelayTarget {
  Command command = Command::poll;
  std::string peer;           // "uuid-…"; empty for "unknown-unknown"
  std::string relay_address;  // the address the client named, without "/pid" or "/connect,…"
  std::int64_t lease_ms = 0;  // connect: what the client asks for (<= 0: the relay's maximum)
  std::uint64_t wait_ms = 0;  // poll: the query's first field (how long it may wait for a message)
};

// Whether an HTTP path is the relay's (checked first thing on every request, so O(1)).
bool is_relay_path(std::string_view path);
// A peer id as the relay hands them out: "uuid-" and 2..128 hex digits.
bool is_peer_id(std::string_view id);
// `path` and `query` as split from the request target. Errc::invalid_argument with a reason.
Result<RelayTarget> parse_relay_target(std::string_view path, std::string_view query);

}  // namespace carrier::relay::codec
