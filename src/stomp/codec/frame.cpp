#include "stomp/codec/frame.hpp"

namespace carrier::stomp::codec {

std::string_view to_string(Command c) {
  switch (c) {
    case Command::connect: return "CONNECT";
    case Command::stomp: return "STOMP";
    case Command::send: return "SEND";
    case Command::subscribe: return "SUBSCRIBE";
    case Command::unsubscribe: return "UNSUBSCRIBE";
    case Command::ack: return "ACK";
    case Command::nack: return "NACK";
    case Command::begin: return "BEGIN";
    case Command::commit: return "COMMIT";
    case Command::abort: return "ABORT";
    case Command::disconnect: return "DISCONNECT";
    case Command::connected: return "CONNECTED";
    case Command::message: return "MESSAGE";
    case Command::receipt: return "RECEIPT";
    case Command::error: return "ERROR";
  }
  return "UNKNOWN";
}

std::optional<Command> parse_command(std::string_view text) {
  // Dispatch on the first letter so a frame costs at most three comparisons, not fifteen.
  if (text.empty()) return std::nullopt;
  auto is = [&](std::string_view spelling, Command c) -> std::optional<Command> {
    if (text == spelling) return c;
    return std::nullopt;
  };
  switch (text[0]) {
    case 'A':
      if (auto c = is("ACK", Command::ack)) return c;
      return is("ABORT", Command::abort);
    case 'B': return is("BEGIN", Command::begin);
    case 'C':
      if (auto c = is("CONNECT", Command::connect)) return c;
      if (auto c = is("COMMIT", Command::commit)) return c;
      return is("CONNECTED", Command::connected);
    case 'D': return is("DISCONNECT", Command::disconnect);
    case 'E': return is("ERROR", Command::error);
    case 'M': return is("MESSAGE", Command::message);
    case 'N': return is("NACK", Command::nack);
    case 'R': return is("RECEIPT", Command::receipt);
    case 'S':
      if (auto c = is("SEND", Command::send)) return c;
      if (auto c = is("SUBSCRIBE", Command::subscribe)) return c;
      return is("STOMP", Command::stomp);
    case 'U': return is("UNSUBSCRIBE", Command::unsubscribe);
    default: return std::nullopt;
  }
}

const std::string* Frame::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

}  // namespace carrier::stomp::codec
