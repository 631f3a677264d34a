#pragma once

#include <memory>

#include "mqtt/options.hpp"
#include "net/options.hpp"
#include "protocol/protocol.hpp"

namespace carrier::mqtt {

// MQTT as `carrier serve` runs it: its Service (client registries, sessions per connection)
// with the records of `$mqtt-sessions`, `$mqtt-subscriptions`, `$mqtt-qos2` and `$mqtt-wills`
// handed back at start-up, the registries' timers re-armed on each shard, and shutdown waiting
// until the departing sessions' records and wills are with the store.
std::unique_ptr<protocol::Protocol> make_protocol(const protocol::Context& context, net::ListenerOptions listener,
                                                  Options options);

}  // namespace carrier::mqtt
