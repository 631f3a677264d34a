#pragma once

#include <memory>

#include "net/options.hpp"
#include "protocol/protocol.hpp"
#include "stomp/options.hpp"

namespace carrier::stomp {

// STOMP as `carrier serve` runs it: a Session per accepted connection, on that connection's
// shard's Broker. STOMP keeps no state across connections, so it recovers nothing.
std::unique_ptr<protocol::Protocol> make_protocol(const protocol::Context& context, net::ListenerOptions listener,
                                                  Options options);

}  // namespace carrier::stomp
