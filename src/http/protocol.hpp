#pragma once

#include <memory>

#include "http/options.hpp"
#include "net/options.hpp"
#include "protocol/protocol.hpp"

namespace carrier::http {

// HTTP as `carrier serve` runs it: a Session per accepted connection, on that connection's
// shard's Broker, counted among those connecting until its first complete request. Long polls
// and sends live and die with their connection, so it recovers nothing.
std::unique_ptr<protocol::Protocol> make_protocol(const protocol::Context& context, net::ListenerOptions listener,
                                                  Options options);

}  // namespace carrier::http
