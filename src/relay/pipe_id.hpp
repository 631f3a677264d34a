#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/message.hpp"

// Ids of pipes and groups in the seed's form ("urn:jxta:uuid-" and hex). Carrier's ids carry
// what they name, so any shard (and the broker after a restart) reads a destination from an
// id without a lookup: the hex of a kind letter and the name, then JXTA's id type (04 pipe,
// 02 group). 'Q' a queue (JxtaUnicast), 'T' a topic (JxtaPropagate), 'G' a group.
namespace carrier::relay {

std::string pipe_id(const model::Destination& destination);
// nullopt: not a pipe id of this relay.
std::optional<model::Destination> pipe_destination(std::string_view id);
std::string group_id(std::string_view group);
std::optional<std::string> group_name(std::string_view id);

}  // namespace carrier::relay
