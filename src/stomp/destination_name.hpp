#pragma once

#include <string>
#include <string_view>

#include "base/result.hpp"
#include "core/message.hpp"

namespace carrier::stomp {

// STOMP destination spellings onto the core's model: "/queue/a.b" and "/amq/queue/a.b" (RabbitMQ)
// are queue "a.b", "/topic/a.b" is topic "a.b", "/temp-queue/x" a temporary queue; a name with
// no prefix is a queue, as ActiveMQ reads it. Any other leading "/..." is an unknown prefix and an
// empty name ("/queue", "/topic") names nothing: both are errors, as in RabbitMQ.
// `for_subscribe`: the text names what to subscribe to.
Result<core::Destination> parse_destination(std::string_view text, bool for_subscribe);
// The canonical spelling for MESSAGE frames, as ActiveMQ and RabbitMQ write it: "/queue/a.b",
// "/topic/a.b".
std::string format_destination(const core::Destination& d);

}  // namespace carrier::stomp
