#include "federation/protocol.hpp"

#include "core/broker.hpp"
#include "federation/node.hpp"
#include "federation/node_id.hpp"
#include "federation/seen_record.hpp"
#include "net/connection.hpp"

namespace carrier::federation {

namespace {

constexpr model::ShardId kHome{0};

class FederationProtocol final : public protocol::Protocol, public protocol::FederationLinks {
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
  // `$federation-seen` records are federation's own (seen_record.hpp).
  bool recover(std::string_view queue_key, const model::Message& message) override {
    if (queue_key == seen_queue_key_) {
      node_->restore_seen(message);
      return true;
    }
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

  // protocol::FederationLinks: the node's state lives on shard 0; answers go back to the caller.
  void report(model::ShardId reply_on, std::function<void(Report)> done) override {
    pool_.post(kHome, [this, reply_on, done = std::move(done)]() mutable {
      pool_.post(reply_on, [done = std::move(done), r = node_->report()]() mutable { done(std::move(r)); });
    });
  }
  void add_link(NewLink link, model::ShardId reply_on, std::function<void(Status)> done) override {
    pool_.post(kHome, [this, link = std::move(link), reply_on, done = std::move(done)]() mutable {
      net::TlsClientOptions tls{link.tls, link.ca_file, link.cert_file, link.key_file, link.server_name};
      LinkOptions options{link.name, link.host, link.port, link.username, link.password, link.cost, std::move(tls)};
      pool_.post(reply_on, [done = std::move(done), st = node_->add_link(std::move(options))]() { done(st); });
    });
  }
  void remove_link(std::string name, model::ShardId reply_on, std::function<void(Status)> done) override {
    pool_.post(kHome, [this, name = std::move(name), reply_on, done = std::move(done)]() mutable {
      pool_.post(reply_on, [done = std::move(done), st = node_->remove_link(name)]() { done(st); });
    });
  }

 private:
  net::ShardPool& pool_;
  std::unique_ptr<Node> node_;
  const std::string seen_queue_key_ =
      model::Destination{model::DestinationKind::queue, std::string(kSeenQueue)}.key();
};

}  // namespace

Result<std::unique_ptr<protocol::Protocol>> make_protocol(const protocol::Context& context, net::ShardPool& pool,
                                                          net::ListenerOptions listener, Options options,
                                                          const std::filesystem::path& data_dir,
                                                          std::shared_ptr<net::TlsServer> tls) {
  if (!listener.enabled && options.links.empty()) return std::unique_ptr<protocol::Protocol>();
  auto id = load_or_create_node_id(data_dir);
  if (!id) return unexpected(id.error());
  auto node = std::make_unique<Node>(std::move(options), *id, pool, *context.brokers[kHome.value()],
                                     context.authenticator, std::move(tls));
  return std::unique_ptr<protocol::Protocol>(
      std::make_unique<FederationProtocol>(context, pool, std::move(listener), std::move(node)));
}

}  // namespace carrier::federation
