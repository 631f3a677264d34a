#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace carrier::stomp::codec {

enum class Version { v1_0, v1_1, v1_2 };

enum class Command {
  // client frames
  connect, stomp, send, subscribe, unsubscribe, ack, nack, begin, commit, abort, disconnect,
  // server frames
  connected, message, receipt, error,
};

// The wire spelling ("SEND") and its inverse; nullopt for an unknown command.
std::string_view to_string(Command c);
std::optional<Command> parse_command(std::string_view text);

// Headers in wire order. A repeated header keeps every occurrence; the first one wins.
using Headers = std::vector<std::pair<std::string, std::string>>;

struct Frame {
  Command command = Command::send;
  Headers headers;
  std::string body;

  // The first value of `name`, or nullptr.
  const std::string* header(std::string_view name) const;

  // Same command, headers in the same order, same body (tests and the fuzz target compare).
  friend bool operator==(const Frame&, const Frame&) = default;
};

}  // namespace carrier::stomp::codec
