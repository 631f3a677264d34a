#include "http/protocol.hpp"

#include "http/session.hpp"
#include "net/connection.hpp"
#include "relay/relay_service.hpp"

namespace carrier::http {

namespace {

// A Session per connection, like protocol::SessionPerConnection, that also knows the broker's
// other protocols: GET /ws hands its connection to a STOMP or MQTT session.
class HttpProtocol final : public protocol::Protocol {
 public:
  HttpProtocol(const protocol::Context& context, net::ListenerOptions listener, Options options)
      : Protocol("http", std::move(listener)), context_(context), options_(std::move(options)) {}

  void start_session(std::shared_ptr<net::Connection> connection) override {
    auto session = std::make_shared<Session>(connection, *context_.brokers[connection->shard().value()], options_,
                                             context_.authenticator, context_.connecting.try_acquire(connection->admission().refusal()),
                                             context_.protocols);
    connection->start(session);
    session->begin();
  }
  // The relay's peers, listens and mailboxes (docs/relay.md).
  bool recover(std::string_view queue_key, const model::Message& message) override {
    return options_.relay_service && options_.relay_service->recover(queue_key, message);
  }
  void start(model::ShardId shard) override {
    if (options_.relay_service) options_.relay_service->start(shard);
  }

 private:
  protocol::Context context_;
  Options options_;
};

}  // namespace

std::unique_ptr<protocol::Protocol> make_protocol(const protocol::Context& context, net::ListenerOptions listener,
                                                  Options options) {
  options.relay_service =
      std::make_shared<relay::RelayService>(context.executor, context.brokers, context.authenticator, options.relay);
  return std::make_unique<HttpProtocol>(context, std::move(listener), std::move(options));
}

}  // namespace carrier::http
