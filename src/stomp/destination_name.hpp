#pragma once

#include <string>
#include <string_view>

#include "base/result.hpp"
#include "model/message.hpp"

namespace carrier::stomp {

// STOMP destination spellings onto the core's model: "/queue/a.b" and "/amq/queue/a.b" (RabbitMQ)
// are queue "a.b", "/topic/a.b" is topic "a.b", "/temp-queue/x" a temporary queue; a name with
// no prefix is a queue, as ActiveMQ reads it. Any other leading "/..." is an unknown prefix and an
// empty name ("/queue", "/topic") names nothing: both are errors, as in RabbitMQ.
//
// RabbitMQ's built-in exchanges map onto topics: "/exchange/amq.topic/KEY" is topic KEY (the
// same as "/topic/KEY", as in RabbitMQ), "/exchange/amq.fanout[/KEY]" the topic
// "$exchange.amq.fanout" (the key is ignored), "/exchange/amq.direct/KEY" the topic
// "$exchange.amq.direct.KEY" (exact keys only). Any other exchange is Errc::not_found.
// `for_subscribe`: the text is a binding, and RabbitMQ's `#` in a topic binding key becomes `>`.
Result<model::Destination> parse_destination(std::string_view text, bool for_subscribe);
// The spelling for MESSAGE frames, as ActiveMQ and RabbitMQ write it: "/queue/a.b", "/topic/a.b",
// "/exchange/amq.fanout", "/exchange/amq.direct/KEY".
std::string format_destination(const model::Destination& d);

}  // namespace carrier::stomp
