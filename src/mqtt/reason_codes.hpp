#pragma once

#include "base/error.hpp"
#include "mqtt/codec/reason_code.hpp"

namespace carrier::mqtt {

// What the broker was asked to do when an Errc came back: the same Errc means different reason
// codes for a PUBLISH, a SUBSCRIBE or a whole connection.
enum class Operation { connect, publish, subscribe, unsubscribe, connection };

// The one place an Errc becomes an MQTT 5 reason code: an exhaustive switch, so a new Errc does
// not compile until MQTT has decided what it means.
codec::ReasonCode reason_for(Errc code, Operation operation) noexcept;

// MQTT 3.x CONNACK return code for an MQTT 5 CONNACK reason code.
codec::ConnectReturnCode to_return_code(codec::ReasonCode connack_reason) noexcept;

}  // namespace carrier::mqtt
