#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/broker_types.hpp"
#include "core/consumer.hpp"
#include "core/demand_observer.hpp"
#include "federation/codec/frame.hpp"
#include "federation/dedup_window.hpp"
#include "federation/demand_table.hpp"
#include "federation/options.hpp"
#include "federation/reconnect_backoff.hpp"
#include "federation/reply_routes.hpp"
#include "net/asio.hpp"
#include "net/shard_pool.hpp"
#include "net/tls_context.hpp"
#include "protocol/federation_links.hpp"

namespace carrier::auth {
class Authenticator;
}
namespace carrier::core {
class Broker;
}

namespace carrier::federation {

class Link;
class ForwardingConsumer;

// This broker as a node of a federation: its id, its links (dialled and accepted), the demand
// table, the dedup window, and one forwarding consumer per (link, destination) the far side
// has demand for. Forwarding rules: a topic is forwarded to every link with demand for it; a
// queue only while this node has no consumer of its own on it (messages stay near their
// consumers). A pushed message enters the far broker as an ordinary send, with its id; the
// far node remembers where it came from (DedupWindow) so it is neither taken twice nor sent
// back, and its TTL runs down hop by hop.
// Runs on: shard 0 (every member; the DemandObserver calls post there). Made and destroyed by
// the main thread.
class Node final : public core::DemandObserver {
 public:
  // `tls` set: accepted links speak TLS, each with the certificate current when it came in.
  Node(Options options, codec::Id128 id, net::ShardPool& pool, core::Broker& broker, auth::Authenticator& auth,
       std::shared_ptr<net::TlsServer> tls = nullptr);
  ~Node() override;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // On shard 0 once it runs: dials every configured link.
  void start();
  // On shard 0: an accepted connection becomes a link.
  void accept(net::tcp::socket socket);
  // Start-up, before the shards run: a message the store holds counts as seen (DedupWindow).
  void remember(const model::MessageId& id);
  // Start-up, before the shards run: a `$federation-seen` record (seen_record.hpp).
  void restore_seen(const model::Message& record);
  // Any thread: shutting down, no more dialling.
  void stop() { stopping_ = true; }

  // core::DemandObserver, on any shard.
  void consumer_added(const model::Destination& destination) override;
  void consumer_removed(const model::Destination& destination) override;

  // --- for links ---
  const codec::Id128& id() const { return id_; }
  const Options& options() const { return options_; }
  auth::Authenticator& authenticator() { return auth_; }
  // This node as `link`'s far side should see it: id and the demand advertised to it (which
  // is remembered as sent).
  codec::RemoteNode self_for(const Link& link);
  // Whether what `link` would be told now differs from what it was told last.
  bool advertisement_changed(const Link& link) const;
  void link_up(Link& link);
  void link_closed(Link& link);
  void peer_advertised(Link& link, Demand demand);
  void on_push(Link& link, std::uint32_t request_id, codec::PushRequest request);
  // True while the broker holds its producers back (memory over [core] memory_limit_bytes, or the
  // store's disk under [journal] disk_free_limit_bytes): links leave pushes and sendbacks unread
  // until the relief resumes them, as STOMP and MQTT sessions leave SENDs and PUBLISHes.
  bool holds_arrivals() const;
  // A reply travelling back (sendback.cpp): delivered here if this node is the end of its
  // stack, else passed on to the link the stack names; answered with the far end's answer.
  void on_sendback(Link& link, std::uint32_t request_id, codec::SendbackRequest request);
  // stopForwarding / restartForwarding: pauses (or resumes) forwarding of `selector` (a
  // destination key as advertised, "queue:orders", or "*" for every one) to node `target`.
  // Paused queue messages wait in their queue; nothing is dropped.
  void set_paused(const codec::Id128& target, const std::string& selector, bool paused);

  // --- links at runtime and what is reported of them (link_admin.cpp), on shard 0 ---
  protocol::FederationLinks::Report report() const;
  Status add_link(LinkOptions link);
  Status remove_link(const std::string& name);

 private:
  // One outbound link: dialled, and dialled again after a back-off whenever it drops, until
  // removed. Shared with its timers' handlers, which find it removed rather than gone.
  struct Dialer {
    LinkOptions options;
    ReconnectBackoff backoff;
    std::unique_ptr<net::asio::steady_timer> timer;
    bool removed = false;
  };
  struct Forwarding {
    std::shared_ptr<ForwardingConsumer> consumer;
    core::ConsumerId id;
  };
  using ForwardingKey = std::pair<std::uint64_t, std::string>;  // link id, destination key

  void dial(const std::shared_ptr<Dialer>& dialer);
  void redial(const std::shared_ptr<Dialer>& dialer);
  void start_link(net::tcp::socket socket, std::shared_ptr<Dialer> dialer, net::TlsAccept tls);
  std::shared_ptr<Dialer> dialer_of(const Link& link) const;
  void local_demand(const model::Destination& destination, bool added);
  // Re-advertises to every link whose advertisement changed, and refreshes forwarding.
  void demand_changed();
  void refresh_forwarding();
  // The durable subscription a topic's messages bound for node `peer` wait in.
  static std::string topic_backlog_name(const codec::Id128& peer, const std::string& filter);
  void forward(std::uint64_t link_id, core::ConsumerId consumer, core::Delivery delivery);
  void settle(core::ConsumerId consumer, std::uint64_t tag, bool delivered);
  // Acks gathered while one read's answers are handled go to the broker together, one call per
  // consumer (a message per call made every ack a post to the queue's shard of its own), once
  // the current handler returns, and before a consumer is unsubscribed.
  void flush_acks();
  // Pushes taken in while one read's frames are handled go to the broker together, one send
  // per destination (one routing step and one store batch, not one per message), each push
  // answered when its send completes. Per destination: a full queue refuses its own pushes,
  // not those of others.
  void flush_arrivals();
  // --- sendback (sendback.cpp) ---
  // `m`'s reply-to as it leaves this node: a local temporary queue gets this node's prefix
  // (`carrier-<node id>.`), so the name is the same and unique on every node it reaches.
  std::string network_reply_to(const model::Message& m) const;
  // A request taken in over a link with a network reply-to: remembers the way back and opens
  // the reply queue here, with a consumer that sends what arrives in it back.
  void learn_reply_route(const model::Message& m, const std::vector<std::int32_t>& stack);
  void send_reply(core::ConsumerId consumer, core::Delivery delivery);
  void forget_reply_routes(const std::vector<std::string>& names);
  void expire_reply_routes();
  Link* link_by_session(std::int32_t session);

  Options options_;
  codec::Id128 id_;
  net::ShardPool& pool_;
  core::Broker& broker_;
  auth::Authenticator& auth_;
  std::shared_ptr<net::TlsServer> tls_;  // the listener's certificate (null: plain TCP)
  std::atomic<bool> stopping_{false};
  std::vector<std::shared_ptr<Dialer>> dialers_;  // the outbound links, configured or added
  std::unordered_map<std::uint64_t, std::shared_ptr<Link>> links_;  // open links, by id
  std::unordered_map<std::uint64_t, Demand> advertised_;           // what each link was told
  std::map<ForwardingKey, Forwarding> forwarding_;
  std::set<std::pair<codec::Id128, std::string>> paused_;  // target node, selector
  std::vector<std::string> withdrawn_;  // topic backlogs to remove once detached
  DemandTable demand_;
  DedupWindow dedup_;
  ReplyRoutes replies_;
  std::map<std::string, Forwarding> reply_consumers_;  // by reply queue name
  std::unique_ptr<net::asio::steady_timer> reply_timer_;
  std::string reply_prefix_;  // "carrier-<node id>."
  // `$federation-seen` records to remove once the shards run (forgotten during recovery, or
  // not decodable).
  std::vector<model::MessageId> stale_seen_;
  std::vector<std::pair<core::ConsumerId, std::vector<std::uint64_t>>> acks_;  // flush_acks
  bool acks_posted_ = false;
  struct Arrival {
    std::weak_ptr<Link> link;
    std::uint32_t request_id;
    model::MessageId id;
    model::MessagePtr seen;  // its `$federation-seen` record, if persistent
  };
  struct Arrivals {
    std::vector<model::MessagePtr> messages;
    std::vector<core::StateRecord> state;
    std::vector<Arrival> answers;
  };
  std::map<std::string, Arrivals> arrivals_;  // flush_arrivals, by destination key
  bool arrivals_posted_ = false;
  std::uint64_t next_link_ = 1;
  std::int32_t next_session_ = 1;
};

}  // namespace carrier::federation
