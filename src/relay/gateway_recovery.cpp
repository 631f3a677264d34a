// The Gateway's state in the store, and its restoration after a restart (relay_record.hpp).
#include <fmt/format.h>

#include "base/logging.hpp"
#include "core/broker.hpp"
#include "relay/gateway.hpp"
#include "relay/pipe_id.hpp"
#include "relay/log.hpp"

namespace carrier::relay {

namespace {

core::StateRecord removal(std::string_view queue, model::MessageId id) {
  return core::StateRecord{std::string(queue), nullptr, id};
}

}  // namespace

void Gateway::record_peer(Peer& peer) {
  const auto id = broker_.next_message_id();
  std::vector<core::StateRecord> state{
      {std::string(kPeersQueue),
       encode_peer(PeerRecord{peer.id, peer.user, peer.relay_address, peer.lease_ms, peer.expires_ms, peer.group}, id,
                   broker_.now_ms()),
       peer.record}};
  peer.record = id;
  peer.recorded_expires_ms = peer.expires_ms;
  broker_.write_state(std::move(state), nullptr);
}

void Gateway::renew_record(Peer& peer) {
  // Not a store write per poll: after a restart the lease ends at most a quarter lease early.
  if (peer.expires_ms - peer.recorded_expires_ms >= std::max<std::int64_t>(peer.lease_ms / 4, 1)) record_peer(peer);
}

model::MessageId Gateway::record_listen(const Peer& peer, const Listen& listen) {
  const auto id = broker_.next_message_id();
  broker_.write_state({{std::string(kListensQueue),
                        encode_listen(ListenRecord{peer.id, listen.pipe_id, listen.request_id}, id, broker_.now_ms()),
                        {}}},
                      nullptr);
  return id;
}

model::MessageId Gateway::record_mail(const Peer& peer, const std::string& bytes) {
  const auto id = broker_.next_message_id();
  broker_.write_state({{std::string(kMailQueue), encode_mail(MailRecord{peer.id, bytes}, id, broker_.now_ms()), {}}},
                      nullptr);
  return id;
}

void Gateway::remove_records(std::vector<core::StateRecord> removals) {
  if (!removals.empty()) broker_.write_state(std::move(removals), nullptr);
}

void Gateway::restore(GatewayRecovered recovered) {
  const std::int64_t now = broker_.now_ms();
  std::vector<core::StateRecord> removals;
  for (auto& [rec, id] : recovered.peers) {
    if (find(rec.peer) != nullptr) {  // recorded twice: RelayService::start keeps the newest only
      removals.push_back(removal(kPeersQueue, id));
      continue;
    }
    if (rec.expires_ms <= now || peers_.size() >= max_peers_) {
      // Its lease ran out while the broker was down: forgotten, its mail with it.
      log()->info("relay peer {}: {}, forgotten", rec.peer.substr(0, 80),
                  rec.expires_ms <= now ? "lease ended while the broker was down" : "past relay.max_peers");
      removals.push_back(removal(kPeersQueue, id));
      continue;
    }
    Peer* peer = add_peer(rec.peer, rec.user);
    peer->relay_address = rec.relay_address;
    peer->lease_ms = rec.lease_ms;
    peer->expires_ms = rec.expires_ms;
    peer->recorded_expires_ms = rec.expires_ms;
    peer->group = rec.group;
    peer->record = id;
    arm_lease(*peer);
  }
  for (auto& [rec, id] : recovered.listens) {
    Peer* peer = find(rec.peer);
    auto destination = pipe_destination(rec.pipe_id);
    if (peer == nullptr || !destination || peer->listens.contains(rec.pipe_id)) {
      removals.push_back(removal(kListensQueue, id));
      if (destination && destination->kind == model::DestinationKind::topic && peer == nullptr) {
        broker_.remove_subscription(fmt::format("relay:{}:{}", rec.peer, destination->name), nullptr);
      }
      continue;
    }
    // The pipe's messages waited in the broker: its queue, or the durable subscription, which
    // this attaches to again; what was handed out unacked comes again.
    const std::string pipe = rec.pipe_id;
    auto consumer = subscribe_pipe(*peer, pipe, *destination, [pipe](Status st) {
      if (!st) log()->warn("relay: listening again on {} failed: {}", pipe.substr(0, 80), st.error().detail);
    });
    if (!consumer) {
      log()->warn("relay: listening again on {} failed: {}", pipe.substr(0, 80), consumer.error().detail);
      removals.push_back(removal(kListensQueue, id));
      continue;
    }
    Listen& listen = peer->listens[pipe];
    listen.request_id = rec.request_id;
    listen.record = id;
  }
  for (auto& [rec, id] : recovered.mail) {
    Peer* peer = find(rec.peer);
    if (peer == nullptr) {
      removals.push_back(removal(kMailQueue, id));
      continue;
    }
    peer->mailbox.push(Mailbox::Item{std::move(rec.bytes), {}, 0, false, id});
  }
  remove_records(std::move(removals));
}

}  // namespace carrier::relay
