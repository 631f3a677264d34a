#include "relay/relay_service.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/logging.hpp"
#include "core/broker.hpp"
#include "model/queue_key.hpp"
#include "relay/gateway.hpp"
#include "relay/relay_record.hpp"
#include "relay/log.hpp"

namespace carrier::relay {

RelayService::RelayService(core::Executor& executor, std::vector<core::Broker*> brokers,
                           auth::Authenticator& authenticator, Options options)
    : executor_(executor),
      brokers_(std::move(brokers)),
      authenticator_(authenticator),
      options_(options),
      directory_(options.max_directory_entries) {
  for (std::size_t i = 0; i < brokers_.size(); ++i) {
    gateways_.push_back(
        std::make_shared<Gateway>(*this, model::ShardId(static_cast<std::uint32_t>(i)), peers_per_shard()));
    recovered_.push_back(std::make_unique<GatewayRecovered>());
  }
}

bool RelayService::recover(std::string_view queue_key, const model::Message& message) {
  const auto key = model::QueueKey::parse(queue_key);
  if (!key || key->kind() != model::QueueKind::queue) return false;
  const std::string_view name = key->name();
  const bool ours = name == kPeersQueue || name == kListensQueue || name == kMailQueue || name == kDirectoryQueue;
  if (!ours) return false;
  auto bad = [&] { log()->warn("relay: a {} record ({}) does not decode; kept, skipped", name, message.id.to_string()); };
  if (name == kPeersQueue) {
    auto rec = decode_peer(message);
    if (!rec) return bad(), true;
    recovered_deadlines_[rec->peer] = std::max(recovered_deadlines_[rec->peer], rec->expires_ms);
    recovered_[owner(rec->peer).value()]->peers.emplace_back(std::move(*rec), message.id);
  } else if (name == kListensQueue) {
    auto rec = decode_listen(message);
    if (!rec) return bad(), true;
    recovered_[owner(rec->peer).value()]->listens.emplace_back(std::move(*rec), message.id);
  } else if (name == kMailQueue) {
    auto rec = decode_mail(message);
    if (!rec) return bad(), true;
    recovered_[owner(rec->peer).value()]->mail.emplace_back(std::move(*rec), message.id);
  } else {
    auto entry = decode_entry(message);
    if (!entry) return bad(), true;
    if (auto added = directory_.add(std::move(*entry)); !added) {
      log()->warn("relay: directory entry {} not restored: {}", message.id.to_string(), added.error().detail);
    }
  }
  return true;
}

void RelayService::start(model::ShardId shard) {
  auto& mine = recovered_[shard.value()];
  // Records come back in the order they were written; a peer recorded again (its lease
  // renewed) keeps only its newest record, the older ones are removed.
  auto& peers = mine->peers;
  std::stable_sort(peers.begin(), peers.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::unordered_map<std::string, std::size_t> newest;
  for (std::size_t i = 0; i < peers.size(); ++i) newest[peers[i].first.peer] = i;
  GatewayRecovered kept;
  std::vector<core::StateRecord> stale;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    if (newest[peers[i].first.peer] == i) {
      kept.peers.push_back(std::move(peers[i]));
    } else {
      stale.push_back({std::string(kPeersQueue), nullptr, peers[i].second});
    }
  }
  std::stable_sort(mine->mail.begin(), mine->mail.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  kept.listens = std::move(mine->listens);
  kept.mail = std::move(mine->mail);
  mine.reset();
  auto& b = broker(shard);
  if (!stale.empty()) b.write_state(std::move(stale), nullptr);
  gateways_[shard.value()]->restore(std::move(kept));
  if (shard.value() != 0) return;
  // A relay subscription whose peer did not come back live would be kept forever.
  const std::int64_t now = b.now_ms();
  for (const auto& sub : b.named_subscriptions("relay:")) {
    const std::string_view rest = std::string_view(sub.name).substr(6);
    const std::string peer(rest.substr(0, rest.find(':')));
    auto it = recovered_deadlines_.find(peer);
    if (it != recovered_deadlines_.end() && it->second > now) continue;
    b.remove_subscription(sub.name, nullptr);
  }
}

void RelayService::record_entry(const Directory::Entry& entry) {
  auto& b = broker(model::ShardId(0));
  b.write_state({{std::string(kDirectoryQueue), encode_entry(entry, b.next_message_id(), b.now_ms()), {}}}, nullptr);
}

RelayService::~RelayService() = default;

std::size_t RelayService::peers_per_shard() const {
  return std::max<std::size_t>(1, options_.max_peers / std::max<std::size_t>(1, brokers_.size()));
}

model::ShardId RelayService::owner(std::string_view peer) const {
  return model::ShardId(static_cast<std::uint32_t>(std::hash<std::string_view>{}(peer) % gateways_.size()));
}

void RelayService::handle(RelayCall call, model::ShardId from, Reply reply) {
  using codec::Command;
  if (call.target.command == Command::pid) {
    reply(gateways_[from.value()]->pid(call.target));
    return;
  }
  if (call.body.size() > options_.max_request_bytes) {
    reply(RelayAnswer{413, {}, fmt::format("the relay request has {} bytes, more than relay.max_request_bytes ({})",
                                           call.body.size(), options_.max_request_bytes)});
    return;
  }
  std::vector<codec::Message> requests;
  if (call.target.command == Command::poll) {
    auto decoded = codec::decode_all(call.body, codec::Limits{.max_message_bytes = options_.max_request_bytes});
    if (!decoded) {
      reply(RelayAnswer{decoded.error().code == Errc::limit_exceeded ? 413 : 400, {}, decoded.error().detail});
      return;
    }
    requests = std::move(*decoded);
  }
  // The answer hops back to the connection's shard.
  Reply back = [this, from, reply = std::move(reply)](RelayAnswer answer) mutable {
    executor_.post(from, [reply = std::move(reply), answer = std::move(answer)]() mutable { reply(std::move(answer)); });
  };
  const auto shard = owner(call.target.peer);
  executor_.post(shard, [gateway = gateways_[shard.value()], call = std::move(call), requests = std::move(requests),
                         back = std::move(back)]() mutable {
    if (call.target.command == codec::Command::connect) {
      gateway->connect(call, std::move(back));
    } else {
      gateway->poll(call, std::move(requests), std::move(back));
    }
  });
}

}  // namespace carrier::relay
