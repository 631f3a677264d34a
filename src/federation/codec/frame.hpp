#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "base/result.hpp"
#include "federation/codec/basic_message.hpp"
#include "federation/codec/forwarder.hpp"
#include "federation/codec/id128.hpp"
#include "federation/codec/negotiator.hpp"
#include "federation/codec/remote_node.hpp"

// A link is one persistent byte stream (TCP; TLS later, which changes nothing here) carrying
// length-prefixed frames both ways. Every frame starts with a 12-byte header:
//   length u32 (bytes after the header), operation u32, request id u32   (big-endian)
// A request carries the id its sender chose; its answer is a result frame with the same id.
// The layouts of the bodies are in docs/federation.md ("Frames").
namespace carrier::federation::codec {

inline constexpr std::size_t kFrameHeaderBytes = 12;
// Sent in negotiate; a peer answers a version it does not speak with an error result.
inline constexpr std::uint32_t kProtocolVersion = 1;

enum class Operation : std::uint32_t {
  negotiate = 1,
  establish = 2,
  push = 3,
  sendback = 4,
  stop_forwarding = 5,
  restart_forwarding = 6,
  set_max_rate = 7,
  // Answers: the high bit set, so a request and a result can never be confused.
  result = 0x8000'0000,            // a return string
  negotiate_result = 0x8000'0001,  // the agreed Negotiator
  establish_result = 0x8000'0002,  // the answering RemoteNode
};

// The seed's method name ("stopForwarding"), or nullptr for a number that names no operation.
const char* operation_name(std::uint32_t operation) noexcept;

// negotiate(NegotiatorImpl hope): the protocol version, then the hope.
struct NegotiateRequest {
  static constexpr Operation kOperation = Operation::negotiate;
  std::uint32_t version = kProtocolVersion;
  Negotiator hope;
  bool operator==(const NegotiateRequest&) const = default;
};

// establish(RemoteNode from, int id): the asking node and the session id it proposes.
struct EstablishRequest {
  static constexpr Operation kOperation = Operation::establish;
  RemoteNode from;
  std::int32_t session = 0;
  bool operator==(const EstablishRequest&) const = default;
};

// push(BasicMessage msg, ForwarderImpl condition, int session).
struct PushRequest {
  static constexpr Operation kOperation = Operation::push;
  BasicMessage message;
  Forwarder condition;
  std::int32_t session = 0;
  bool operator==(const PushRequest&) const = default;
};

// sendback(BasicMessage msg, int session): a reply travelling back along the stack.
struct SendbackRequest {
  static constexpr Operation kOperation = Operation::sendback;
  BasicMessage message;
  std::int32_t session = 0;
  bool operator==(const SendbackRequest&) const = default;
};

// stopForwarding(Node target, String selectorName) and restartForwarding(Node target, String
// selectorName), laid out alike. The target is named by its node id: its properties play no
// part in the request, so they are not sent.
template <Operation Op>
struct ForwardingControl {
  static constexpr Operation kOperation = Op;
  Id128 target;
  std::string selector;
  bool operator==(const ForwardingControl&) const = default;
};
using StopForwardingRequest = ForwardingControl<Operation::stop_forwarding>;
using RestartForwardingRequest = ForwardingControl<Operation::restart_forwarding>;

enum class RateUnit : std::uint32_t { bits_per_second = 0, messages_per_second = 1 };

// setMaxRate(int bitPerSec), and the same in messages per second: rate u32, unit u32.
// A rate of 0 lifts the limit.
struct SetMaxRateRequest {
  static constexpr Operation kOperation = Operation::set_max_rate;
  std::uint32_t rate = 0;
  RateUnit unit = RateUnit::bits_per_second;
  bool operator==(const SetMaxRateRequest&) const = default;
};

// The seed's String return value: `text` on the wire followed by CR LF. `text` holds no CR, LF
// or NUL.
struct StringResult {
  static constexpr Operation kOperation = Operation::result;
  std::string text;
  bool operator==(const StringResult&) const = default;
};

// negotiate's return value: the Negotiator both sides now hold.
struct NegotiateResult {
  static constexpr Operation kOperation = Operation::negotiate_result;
  Negotiator agreed;
  bool operator==(const NegotiateResult&) const = default;
};

// establish's return value: the answering node.
struct EstablishResult {
  static constexpr Operation kOperation = Operation::establish_result;
  RemoteNode node;
  bool operator==(const EstablishResult&) const = default;
};

using FrameBody =
    std::variant<NegotiateRequest, EstablishRequest, PushRequest, SendbackRequest,
                 StopForwardingRequest, RestartForwardingRequest, SetMaxRateRequest,
                 StringResult, NegotiateResult, EstablishResult>;

struct Frame {
  std::uint32_t request_id = 0;
  FrameBody body;

  Operation operation() const;
  bool operator==(const Frame&) const = default;
};

// Appends the whole frame, header included. Errc::invalid_argument (and `out` unchanged) for
// a string the wire cannot carry (a NUL in a PString; CR, LF or NUL in a result) or a body
// over 2^32-1 bytes. Limits are the receiver's to apply.
Status encode_frame(const Frame& frame, std::string& out);

// Decodes the body of a frame whose header named `operation` (a known one) from all of
// `body`; offsets in errors count from the start of the frame.
Result<FrameBody> decode_frame_body(Operation operation, std::string_view body, const Limits& limits);

}  // namespace carrier::federation::codec
