#include "http/protocol.hpp"

#include "http/session.hpp"
#include "protocol/session_per_connection.hpp"
#include "relay/relay_service.hpp"

namespace carrier::http {

std::unique_ptr<protocol::Protocol> make_protocol(const protocol::Context& context, net::ListenerOptions listener,
                                                  Options options) {
  options.relay_service =
      std::make_shared<relay::RelayService>(context.executor, context.brokers, context.authenticator, options.relay);
  return std::make_unique<protocol::SessionPerConnection<Session, Options>>("http", context, std::move(listener),
                                                                            std::move(options));
}

}  // namespace carrier::http
