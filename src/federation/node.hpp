#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/consumer.hpp"
#include "core/demand_observer.hpp"
#include "federation/codec/frame.hpp"
#include "federation/dedup_window.hpp"
#include "federation/demand_table.hpp"
#include "federation/options.hpp"
#include "federation/reconnect_backoff.hpp"
#include "net/asio.hpp"
#include "net/shard_pool.hpp"

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
  Node(Options options, codec::Id128 id, net::ShardPool& pool, core::Broker& broker, auth::Authenticator& auth);
  ~Node() override;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // On shard 0 once it runs: dials every configured link.
  void start();
  // On shard 0: an accepted connection becomes a link.
  void accept(net::tcp::socket socket);
  // Start-up, before the shards run: a message the store holds counts as seen (DedupWindow).
  void remember(const model::MessageId& id) { dedup_.insert(id, HopInfo{options_.ttl, 0, id_, id_, {}}); }
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
  // stopForwarding / restartForwarding: pauses (or resumes) forwarding of `selector` (a
  // destination key as advertised, "queue:orders", or "*" for every one) to node `target`.
  // Paused queue messages wait in their queue; nothing is dropped.
  void set_paused(const codec::Id128& target, const std::string& selector, bool paused);

 private:
  struct Dialer {
    LinkOptions options;
    ReconnectBackoff backoff;
    std::unique_ptr<net::asio::steady_timer> timer;
  };
  struct Forwarding {
    std::shared_ptr<ForwardingConsumer> consumer;
    core::ConsumerId id;
  };
  using ForwardingKey = std::pair<std::uint64_t, std::string>;  // link id, destination key

  void dial(std::size_t index);
  void redial(std::size_t index);
  void start_link(net::tcp::socket socket, const LinkOptions* outbound);
  void local_demand(const model::Destination& destination, bool added);
  // Re-advertises to every link whose advertisement changed, and refreshes forwarding.
  void demand_changed();
  void refresh_forwarding();
  void forward(std::uint64_t link_id, core::ConsumerId consumer, core::Delivery delivery);
  void settle(core::ConsumerId consumer, std::uint64_t tag, bool delivered);

  Options options_;
  codec::Id128 id_;
  net::ShardPool& pool_;
  core::Broker& broker_;
  auth::Authenticator& auth_;
  std::atomic<bool> stopping_{false};
  std::vector<Dialer> dialers_;  // one per configured link; never resized after construction
  std::unordered_map<std::uint64_t, std::shared_ptr<Link>> links_;  // open links, by id
  std::unordered_map<std::uint64_t, Demand> advertised_;           // what each link was told
  std::map<ForwardingKey, Forwarding> forwarding_;
  std::set<std::pair<codec::Id128, std::string>> paused_;  // target node, selector
  DemandTable demand_;
  DedupWindow dedup_;
  std::uint64_t next_link_ = 1;
  std::int32_t next_session_ = 1;
};

}  // namespace carrier::federation
