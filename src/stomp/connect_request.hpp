#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "stomp/codec/frame.hpp"
#include "stomp/errors.hpp"

namespace carrier::stomp {

// What a CONNECT (or STOMP) frame asks for, read from its headers alone.
struct ConnectRequest {
  codec::Version version = codec::Version::v1_0;
  // The heart-beats the broker will keep, each way; 0: none that way.
  std::uint32_t send_ms = 0;
  std::uint32_t receive_ms = 0;
  std::string client_id;               // ActiveMQ's, to name durable subscriptions; may be empty
  std::optional<std::string> login;    // as sent, even empty
  std::optional<std::string> passcode;
};

// The broker's side of heart-beat negotiation ([stomp] heartbeat_ms, heartbeat_min_ms).
struct HeartBeatPolicy {
  std::uint32_t heartbeat_ms = 10000;  // 0: heart-beats off altogether
  std::uint32_t floor_ms = 100;        // the client's wishes are raised to at least this
};

// The highest version both sides speak: none listed is 1.0 (as the specification says), a list
// naming none we speak is nullopt.
std::optional<codec::Version> negotiate_version(const std::string* accept_version);

// "<cx>,<cy>" (what the client sends, what it wants) as two 32-bit integers; absent is "0,0".
// nullopt for anything else: signs, spaces, more than 2^32-1, a missing part.
std::optional<std::pair<std::uint32_t, std::uint32_t>> parse_heart_beat(const std::string* text);

// CONNECT's headers as the session uses them: unsupported_version or invalid_heart_beat if it
// cannot. STOMP 1.0 has no heart-beats: its header is ignored.
std::variant<ConnectRequest, Refused> read_connect(const codec::Frame& frame, const HeartBeatPolicy& policy);

// The CONNECTED `version` header's value.
const char* version_text(codec::Version version) noexcept;

}  // namespace carrier::stomp
