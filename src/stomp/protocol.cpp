#include "stomp/protocol.hpp"

#include "protocol/session_per_connection.hpp"
#include "stomp/session.hpp"

namespace carrier::stomp {

std::unique_ptr<protocol::Protocol> make_protocol(const protocol::Context& context, net::ListenerOptions listener,
                                                  Options options) {
  return std::make_unique<protocol::SessionPerConnection<Session, Options>>("stomp", context, std::move(listener),
                                                                            std::move(options));
}

}  // namespace carrier::stomp
