#include "mqtt/protocol.hpp"

#include "mqtt/service.hpp"

namespace carrier::mqtt {

namespace {

class MqttProtocol final : public protocol::Protocol {
 public:
  MqttProtocol(const protocol::Context& context, net::ListenerOptions listener, Options options)
      : Protocol("mqtt", std::move(listener)),
        service_(context.executor, context.brokers, std::move(options), context.authenticator, context.connecting) {}

  void start_session(std::shared_ptr<net::Connection> connection) override { service_.accept(std::move(connection)); }
  std::shared_ptr<net::TransportHandler> start_session(std::shared_ptr<net::Transport> transport,
                                                       model::ShardId shard) override {
    return service_.accept(std::move(transport), shard);
  }
  std::size_t max_frame_bytes() const override { return service_.options().max_packet_size; }
  bool recover(std::string_view queue_key, const model::Message& message) override {
    return service_.recover(queue_key, message);
  }
  void start(model::ShardId shard) override { service_.start(shard); }
  bool idle() const override { return service_.idle(); }

 private:
  Service service_;
};

}  // namespace

std::unique_ptr<protocol::Protocol> make_protocol(const protocol::Context& context, net::ListenerOptions listener,
                                                  Options options) {
  return std::make_unique<MqttProtocol>(context, std::move(listener), std::move(options));
}

}  // namespace carrier::mqtt
