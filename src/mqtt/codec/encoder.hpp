#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "mqtt/codec/packet.hpp"

namespace carrier::mqtt::codec {

// Appends one packet to `out` as `version` spells it: before MQTT 5, properties and (except in
// CONNACK and SUBACK) reason codes are left out; in MQTT 5 an acknowledgement's success reason
// code and empty properties are omitted, as the spec allows. Strings must fit the protocol's
// limits (64 KiB each, UTF-8 where the spec says so): callers check what they did not decode.
void encode(const Packet& packet, Version version, std::string& out);
void encode(const Connect& p, std::string& out);  // the version is p.version
void encode(const Connack& p, Version version, std::string& out);
void encode(const Publish& p, Version version, std::string& out);
// As encode(Publish), with the payload given apart (p.payload is not read): a broker fanning one
// message out encodes from the shared body without copying it into each Publish.
void encode_publish(const Publish& p, std::string_view payload, Version version, std::string& out);
void encode(const Puback& p, Version version, std::string& out);
void encode(const Pubrec& p, Version version, std::string& out);
void encode(const Pubrel& p, Version version, std::string& out);
void encode(const Pubcomp& p, Version version, std::string& out);
void encode(const Subscribe& p, Version version, std::string& out);
void encode(const Suback& p, Version version, std::string& out);
void encode(const Unsubscribe& p, Version version, std::string& out);
void encode(const Unsuback& p, Version version, std::string& out);
void encode(const Pingreq& p, Version version, std::string& out);
void encode(const Pingresp& p, Version version, std::string& out);
void encode(const Disconnect& p, Version version, std::string& out);
void encode(const Auth& p, Version version, std::string& out);

}  // namespace carrier::mqtt::codec
