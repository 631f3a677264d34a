#include "stomp/ack_request.hpp"

#include <charconv>

namespace carrier::stomp {

std::optional<AckToken> parse_ack_token(std::string_view text) {
  auto dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  AckToken token;
  const char* end = text.data() + text.size();
  auto r1 = std::from_chars(text.data(), text.data() + dot, token.subscription);
  auto r2 = std::from_chars(text.data() + dot + 1, end, token.delivery);
  if (r1.ec != std::errc() || r1.ptr != text.data() + dot || r2.ec != std::errc() || r2.ptr != end) {
    return std::nullopt;
  }
  return token;
}

std::variant<AckRequest, Refused> read_ack(const codec::Frame& frame, codec::Version version) {
  const bool is_ack = frame.command == codec::Command::ack;
  if (!is_ack && version == codec::Version::v1_0) return Refused{Refusal::unknown_command, "NACK does not exist in STOMP 1.0"};
  AckRequest request;
  if (version == codec::Version::v1_2) {
    const auto* id = frame.header("id");
    if (id == nullptr) return Refused{Refusal::missing_header, "id"};
    request.named = *id;
    request.token = parse_ack_token(*id);
  } else {
    const auto* message_id = frame.header("message-id");
    if (message_id == nullptr) return Refused{Refusal::missing_header, "message-id"};
    request.named = *message_id;
    if (const auto* sub = frame.header("subscription")) request.subscription = *sub;
  }
  if (!is_ack) {
    const auto* requeue = frame.header("requeue");
    request.requeue = requeue == nullptr || *requeue != "false";
  }
  return request;
}

}  // namespace carrier::stomp
