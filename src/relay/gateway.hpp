#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "auth/permissions.hpp"
#include "core/broker_types.hpp"
#include "core/consumer.hpp"
#include "model/message.hpp"
#include "relay/codec/jxme_message.hpp"
#include "relay/mailbox.hpp"
#include "relay/relay_record.hpp"
#include "relay/relay_service.hpp"

namespace carrier::relay {

// What a restart brought back for the peers one shard owns (gateway_recovery.cpp).
struct GatewayRecovered {
  std::vector<std::pair<PeerRecord, model::MessageId>> peers;
  std::vector<std::pair<ListenRecord, model::MessageId>> listens;
  std::vector<std::pair<MailRecord, model::MessageId>> mail;
};

// The relay peers whose ids hash to one shard: their leases, mailboxes, joined group and the
// pipes they listen on (a queue consumer for a JxtaUnicast pipe, a durable subscription for a
// JxtaPropagate one), and the exchanges of seed 000 (pid, connect, create, search, join,
// listen, send, poll).
// Every operation is checked against the ACL for the user the HTTP request authenticated as;
// a peer belongs to the user that connected it. Peers, listens and waiting responses are kept
// in the store (relay_record.hpp) and restored by restore() after a restart.
// Lifecycle: made by RelayService before the shards run; a peer lives from its connect until
// its lease runs out (then its listens are undone and its mailbox dropped).
// Runs on: its shard, only.
class Gateway : public std::enable_shared_from_this<Gateway> {
 public:
  Gateway(RelayService& service, model::ShardId shard, std::size_t max_peers);

  RelayAnswer pid(const codec::RelayTarget& target);
  void connect(const RelayCall& call, RelayService::Reply reply);
  void poll(const RelayCall& call, std::vector<codec::Message> requests, RelayService::Reply reply);
  void deliver(const std::string& peer, core::ConsumerId consumer, std::vector<core::Delivery> batch);

  // On this shard once it runs: live peers come back with their lease, listens and mail; a
  // peer whose lease ran out while the broker was down is forgotten with its records.
  void restore(GatewayRecovered recovered);

 private:
  struct Listen {
    core::ConsumerId consumer;
    std::string subscription;  // a propagate pipe's durable subscription ("relay:<peer>:<topic>")
    std::string request_id;    // the listen request's, carried by every message it brings
    std::string pipe_id;
    model::MessageId record{};  // its `$relay-listens` record
  };
  struct WaitingPoll {
    RelayService::Reply reply;
    std::uint32_t max = 1;
    std::uint64_t seq = 0;
    bool until_answered = false;  // waits only for its own requests' responses
  };
  struct Peer {
    Peer(std::string peer, std::string owner, auth::Permissions& acl)
        : id(std::move(peer)), user(std::move(owner)), permissions(&acl) {}
    std::string id;
    std::string user;  // who connected it (empty: anonymous); only they may use it
    auth::Permissions* permissions;  // the ACL as it applies to `user` (permissions_)
    std::string relay_address;
    std::int64_t lease_ms = 0;
    std::int64_t expires_ms = 0;
    bool lease_timer = false;
    bool redeliver_timer = false;
    Mailbox mailbox;
    std::string group;
    std::map<std::string, Listen> listens;  // by pipe id
    std::unordered_map<std::uint64_t, std::string> pipe_of;  // consumer id -> pipe id
    std::optional<WaitingPoll> waiting;
    std::uint64_t poll_seq = 0;
    std::uint64_t batch_seq = 0;  // numbers the answers that hand messages out
    std::size_t in_progress = 0;  // requests whose response is still being worked out
    model::MessageId record{};    // its `$relay-peers` record
    std::int64_t recorded_expires_ms = 0;
  };

  void handle_request(Peer& peer, const codec::Message& request);
  void create(Peer& peer, const codec::Message& request, const std::string& request_id);
  void search(Peer& peer, const codec::Message& request, const std::string& request_id);
  void join(Peer& peer, const codec::Message& request, const std::string& request_id);
  void listen(Peer& peer, const codec::Message& request, const std::string& request_id);
  void send(Peer& peer, const codec::Message& request, const std::string& request_id);

  // A response in the proxy namespace: response=<kind>, requestId, then `fields`.
  void respond(Peer& peer, std::string_view kind, const std::string& request_id,
               std::vector<std::pair<std::string, std::string>> fields = {});
  void respond_error(Peer& peer, const std::string& request_id, std::string reason);
  // Appends JXME bytes for the peer (adds the endpoint addresses) and wakes a waiting poll.
  void push(Peer& peer, codec::Message message, Mailbox::Item item = {});
  // Runs `fn` with the peer if it is still connected once an asynchronous step comes back.
  void later(const std::string& peer, std::function<void(Peer&)> fn);
  void finished(Peer& peer);

  void answer_waiting(Peer& peer);
  // Runs `check` for `peer` on this shard once the epoch ms `due_ms` has passed (if the gateway
  // still runs).
  void check_at(std::int64_t due_ms, const std::string& peer, void (Gateway::*check)(const std::string&));
  void arm_lease(Peer& peer);
  void lease_check(const std::string& peer);
  void arm_redeliver(Peer& peer);
  void redeliver_check(const std::string& peer);
  void forget(Peer& peer);
  Peer* find(const std::string& id);
  Peer* add_peer(const std::string& id, const std::string& user);

  // The ACL for the peer's user: on a pipe's destination, or on a group's pipes (`<group>.>`
  // as queues or topics).
  bool may(Peer& peer, auth::Right right, const model::Destination& destination);
  bool may_use_group(Peer& peer, const std::string& group);
  bool may_see(Peer& peer, const Directory::Entry& entry);  // a search shows it
  std::string denied(const Peer& peer, std::string_view action, const model::Destination& destination) const;

  // --- the store (gateway_recovery.cpp) ---
  void record_peer(Peer& peer);  // writes (or replaces) its `$relay-peers` record
  void renew_record(Peer& peer);  // record_peer once a quarter lease has gone by
  model::MessageId record_listen(const Peer& peer, const Listen& listen);
  model::MessageId record_mail(const Peer& peer, const std::string& bytes);
  void remove_records(std::vector<core::StateRecord> removals);
  // Subscribes `peer` to the pipe `pipe` (listen, and restore); the consumer id or the error.
  Result<core::ConsumerId> subscribe_pipe(Peer& peer, const std::string& pipe, const model::Destination& destination,
                                          core::Completion done);

  RelayService& service_;
  model::ShardId shard_;
  core::Broker& broker_;
  std::size_t max_peers_;
  std::unordered_map<std::string, std::unique_ptr<Peer>> peers_;
  // One ACL view per user (not per peer: its answer cache is bounded per view, and users are
  // as many as the users file holds).
  std::unordered_map<std::string, std::unique_ptr<auth::Permissions>> permissions_;
  std::mt19937_64 random_;
};

}  // namespace carrier::relay
