#include "relay/relay_service.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "relay/gateway.hpp"

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
  }
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
      gateway->connect(call.target, std::move(back));
    } else {
      gateway->poll(call.target, std::move(requests), call.max, std::move(back));
    }
  });
}

}  // namespace carrier::relay
