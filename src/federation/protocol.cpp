#include "federation/protocol.hpp"

#include "core/broker.hpp"
#include "federation/node.hpp"
#include "federation/node_id.hpp"
#include "net/connection.hpp"

namespace carrier::federation {

namespace {

constexpr model::ShardId kHome{0};

class FederationProtocol final : public protocol::Protocol {
 public:
  FederationProtocol(const protocol::Context& context, net::ShardPool& pool, net::ListenerOptions listener,
                     std::unique_ptr<Node> node)
      : Protocol("federation", std::move(listener)), pool_(pool), node_(std::move(node)) {
    for (auto* broker : context.brokers) broker->set_demand_observer(node_.get());
  }

  // Links run on their own connections, not a session's net::Connection (accept() below).
  void start_session(std::shared_ptr<net::Connection> connection) override { connection->close(); }

  void accept(net::tcp::socket socket, model::ShardId shard, net::Admission admission) override {
    // Past a per-source limit (logged and counted by the listener): closed unanswered. An
    // admitted link is not counted while it runs (links are few and configured).
    if (admission.refusal()) return;
    if (shard == kHome) {
      node_->accept(std::move(socket));
      return;
    }
    // Every link lives on shard 0 with the node's state: the socket moves there.
    boost::system::error_code ec;
    const auto protocol = socket.local_endpoint(ec).protocol();
    const int fd = socket.release(ec);
    if (ec) return;
    pool_.post(kHome, [this, protocol, fd] {
      net::tcp::socket moved(pool_.context(kHome));
      boost::system::error_code error;
      moved.assign(protocol, fd, error);
      if (!error) node_->accept(std::move(moved));
    });
  }

  // Sees every record no other protocol took, and takes none: a message this node holds after
  // a restart counts as seen, so a push of it repeated after the restart (the previous hop
  // never got the answer) is a duplicate rather than a second copy.
  bool recover(std::string_view /*queue_key*/, const model::Message& message) override {
    node_->remember(message.id);
    return false;
  }

  void start(model::ShardId shard) override {
    if (shard == kHome) node_->start();
  }

  bool idle() const override {
    node_->stop();
    return true;
  }

 private:
  net::ShardPool& pool_;
  std::unique_ptr<Node> node_;
};

}  // namespace

Result<std::unique_ptr<protocol::Protocol>> make_protocol(const protocol::Context& context, net::ShardPool& pool,
                                                          net::ListenerOptions listener, Options options,
                                                          const std::filesystem::path& data_dir) {
  if (!listener.enabled && options.links.empty()) return std::unique_ptr<protocol::Protocol>();
  auto id = load_or_create_node_id(data_dir);
  if (!id) return unexpected(id.error());
  auto node = std::make_unique<Node>(std::move(options), *id, pool, *context.brokers[kHome.value()],
                                     context.authenticator);
  return std::unique_ptr<protocol::Protocol>(
      std::make_unique<FederationProtocol>(context, pool, std::move(listener), std::move(node)));
}

}  // namespace carrier::federation
