#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "stomp/codec/frame.hpp"
#include "stomp/errors.hpp"

namespace carrier::stomp {

// Our STOMP 1.2 ack token, the MESSAGE `ack` header: "<subscription number>.<delivery number>".
struct AckToken {
  std::uint64_t subscription = 0;
  std::uint64_t delivery = 0;
};
std::optional<AckToken> parse_ack_token(std::string_view text);

// What an ACK or NACK names. STOMP 1.2: the `id` header, an ack token; 1.0 and 1.1: the
// `message-id`, and the `subscription` if given (else every subscription is searched).
struct AckRequest {
  std::string named;                 // the id or message-id as written: the ERROR quotes it
  std::optional<AckToken> token;     // 1.2 only; nullopt if `named` is no token of ours
  std::optional<std::string> subscription;  // 1.0/1.1
  bool requeue = true;               // RabbitMQ: NACK with requeue:false dead-letters instead
};

// unknown_command for NACK on STOMP 1.0, missing_header without the header naming the delivery.
std::variant<AckRequest, Refused> read_ack(const codec::Frame& frame, codec::Version version);

}  // namespace carrier::stomp
