#pragma once

#include <memory>
#include <string>
#include <utility>

#include "net/connection.hpp"
#include "net/handshake_limit.hpp"
#include "protocol/protocol.hpp"

namespace carrier::protocol {

// A protocol whose every accepted connection is one `Session` on the accepting shard's Broker
// (STOMP, HTTP): a net::Connection (TCP or TLS) carries Session(transport, broker, options,
// authenticator, handshake slot); the connection starts with it, then begin(). Without a handshake slot the session refuses the client itself, in its
// own protocol's words. Protocols with state across connections (MQTT's client registry) write
// their own.
template <class Session, class Options>
class SessionPerConnection final : public Protocol {
 public:
  SessionPerConnection(std::string name, const Context& context, net::ListenerOptions listener, Options options)
      : Protocol(std::move(name), std::move(listener)), context_(context), options_(std::move(options)) {}

  void start_session(std::shared_ptr<net::Connection> connection) override {
    auto session = std::make_shared<Session>(connection, *context_.brokers[connection->shard().value()], options_,
                                             context_.authenticator,
                                             context_.connecting.try_acquire(connection->admission().refusal()));
    connection->start(session);
    session->begin();
  }

  std::shared_ptr<net::TransportHandler> start_session(std::shared_ptr<net::Transport> transport,
                                                       model::ShardId shard) override {
    auto session = std::make_shared<Session>(std::move(transport), *context_.brokers[shard.value()], options_,
                                             context_.authenticator, context_.connecting.try_acquire());
    session->begin();
    return session;
  }

  std::size_t max_frame_bytes() const override {
    if constexpr (requires { options_.max_frame_bytes; }) {
      return options_.max_frame_bytes;
    } else {
      return 0;
    }
  }

 private:
  Context context_;
  Options options_;
};

}  // namespace carrier::protocol
