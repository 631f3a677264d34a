#include "stomp/protocol.hpp"

#include "stomp/session.hpp"

namespace carrier::stomp {

namespace {

class StompProtocol final : public protocol::Protocol {
 public:
  StompProtocol(const protocol::Context& context, net::ListenerOptions listener, Options options)
      : Protocol("stomp", std::move(listener)), context_(context), options_(std::move(options)) {}

  void start_session(net::tcp::socket socket, core::ShardId shard) override {
    // Without a handshake slot the session refuses the client itself (begin()), with an ERROR.
    auto session = std::make_shared<Session>(std::move(socket), shard, *context_.brokers[shard.value()], options_,
                                             context_.authenticator, context_.connecting.try_acquire());
    session->start();
    session->begin();
  }

 private:
  protocol::Context context_;
  Options options_;
};

}  // namespace

std::unique_ptr<protocol::Protocol> make_protocol(const protocol::Context& context, net::ListenerOptions listener,
                                                  Options options) {
  return std::make_unique<StompProtocol>(context, std::move(listener), std::move(options));
}

}  // namespace carrier::stomp
