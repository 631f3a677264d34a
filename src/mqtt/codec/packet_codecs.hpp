#pragma once

// Internal to the codec: the per-packet body decoders the dispatcher in decoder.cpp calls, and
// helpers shared by the encoders. Each decode_* reads the bytes after the fixed header (the
// reader spans exactly the remaining length) and records its first error in the reader.

#include <string>

#include "mqtt/codec/data_types.hpp"
#include "mqtt/codec/fixed_header.hpp"
#include "mqtt/codec/packet.hpp"

namespace carrier::mqtt::codec::detail {

// connect.cpp
// `flags`: the fixed header's; 0 is required from 3.1.1 on, 3.1 does not look at them.
bool decode_connect(Reader& in, std::uint8_t flags, Connect& out, std::optional<Version>& declared);
bool decode_connack(Reader& in, Version version, Connack& out);

// publish.cpp
bool decode_publish(Reader& in, std::uint8_t flags, Version version, Publish& out);
bool decode_publish_response(Reader& in, PacketType type, Version version, std::uint16_t& packet_id,
                             ReasonCode& reason, Properties& properties);

// subscribe.cpp
bool decode_subscribe(Reader& in, Version version, Subscribe& out);
bool decode_suback(Reader& in, Version version, Suback& out);
bool decode_unsubscribe(Reader& in, Version version, Unsubscribe& out);
bool decode_unsuback(Reader& in, Version version, Unsuback& out);

// control.cpp: PINGREQ, PINGRESP, DISCONNECT, AUTH
bool decode_empty(Reader& in, PacketType type);
bool decode_disconnect(Reader& in, Version version, Disconnect& out);
bool decode_auth(Reader& in, Auth& out);

// A packet id that must not be 0.
bool read_packet_id(Reader& in, std::uint16_t& out);

// Writes the fixed header for `body` then the body.
void finish(std::string& out, PacketType type, std::uint8_t flags, const std::string& body);

}  // namespace carrier::mqtt::codec::detail
