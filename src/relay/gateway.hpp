#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/consumer.hpp"
#include "model/message.hpp"
#include "relay/codec/jxme_message.hpp"
#include "relay/mailbox.hpp"
#include "relay/relay_service.hpp"

namespace carrier::relay {

// The relay peers whose ids hash to one shard: their leases, mailboxes, joined group and the
// pipes they listen on (a queue consumer for a JxtaUnicast pipe, a durable subscription for a
// JxtaPropagate one), and the exchanges of seed 000 (pid, connect, create, search, join,
// listen, send, poll).
// Lifecycle: made by RelayService before the shards run; a peer lives from its connect until
// its lease runs out (then its listens are undone and its mailbox dropped).
// Runs on: its shard, only.
class Gateway : public std::enable_shared_from_this<Gateway> {
 public:
  Gateway(RelayService& service, model::ShardId shard, std::size_t max_peers);

  RelayAnswer pid(const codec::RelayTarget& target);
  void connect(const codec::RelayTarget& target, RelayService::Reply reply);
  void poll(const codec::RelayTarget& target, std::vector<codec::Message> requests, std::uint32_t max,
            RelayService::Reply reply);
  void deliver(const std::string& peer, core::ConsumerId consumer, std::vector<core::Delivery> batch);

 private:
  struct Listen {
    core::ConsumerId consumer;
    std::string subscription;  // a propagate pipe's durable subscription ("relay:<peer>:<topic>")
    std::string request_id;    // the listen request's, carried by every message it brings
    std::string pipe_id;
  };
  struct WaitingPoll {
    RelayService::Reply reply;
    std::uint32_t max = 1;
    std::uint64_t seq = 0;
    bool until_answered = false;  // waits only for its own requests' responses
  };
  struct Peer {
    std::string id;
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
    std::size_t in_progress = 0;  // requests whose response is still being worked out
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

  RelayService& service_;
  model::ShardId shard_;
  core::Broker& broker_;
  std::size_t max_peers_;
  std::unordered_map<std::string, std::unique_ptr<Peer>> peers_;
  std::mt19937_64 random_;
};

}  // namespace carrier::relay
