#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/message.hpp"

namespace carrier::stomp {

// STOMP destination spellings onto the core's model: "/queue/a.b" and "/amq/queue/a.b" (RabbitMQ)
// are queue "a.b", "/topic/a.b" is topic "a.b", "/temp-queue/x" a temporary queue; a name with
// no prefix is a queue, as ActiveMQ reads it. nullopt for an empty name.
std::optional<core::Destination> parse_destination(std::string_view text);
// The canonical spelling for MESSAGE frames: "/queue/a.b", "/topic/a.b".
std::string format_destination(const core::Destination& d);

}  // namespace carrier::stomp
