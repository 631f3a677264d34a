#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <string>
#include <vector>

#include "core/executor.hpp"
#include "relay/codec/relay_target.hpp"
#include "relay/directory.hpp"
#include "model/message.hpp"
#include "relay/options.hpp"

namespace carrier::auth {
class Authenticator;
}
namespace carrier::core {
class Broker;
}

namespace carrier::relay {

class Gateway;
struct GatewayRecovered;

// One relay request as the HTTP listener hands it over.
struct RelayCall {
  codec::RelayTarget target;
  std::string body;       // zero or more JXME messages (a poll's requests)
  std::uint32_t max = 1;  // messages the response may carry (Carrier-Relay-Max)
  std::string user;       // who the HTTP request authenticated as; empty: anonymous
  // Carrier-Relay-Ack: the last answer batch the peer received (nullopt: a seed client, whose
  // poll acknowledges everything handed out before).
  std::optional<std::uint64_t> received;
};

// What the HTTP listener answers: 200 with JXME bytes (possibly none), or an error status with
// a reason (400 malformed, 404 unknown peer, 413, 429 mailbox full, 503 too many peers).
struct RelayAnswer {
  int status = 200;
  std::string body;    // JXME messages back to back (status 200)
  std::string reason;  // status != 200
  std::uint64_t batch = 0;  // a poll's answer holding messages: its number (Carrier-Relay-Batch)
};

// The seed-000 relay (docs/relay.md): a Gateway per shard, each holding the peers whose ids
// hash to it; requests from any HTTP connection go to the peer's shard and their answer comes
// back to the connection's. The directory of pipes and groups lives on shard 0.
// Lifecycle: made with the HTTP protocol (before the shards run), destroyed after them.
// Runs on: handle() on any shard (the caller's); everything else on the shard it names.
class RelayService {
 public:
  using Reply = std::function<void(RelayAnswer)>;

  RelayService(core::Executor& executor, std::vector<core::Broker*> brokers, auth::Authenticator& authenticator,
               Options options);
  ~RelayService();
  RelayService(const RelayService&) = delete;
  RelayService& operator=(const RelayService&) = delete;

  const Options& options() const { return options_; }
  // On shard `from`: decodes `call`'s body (a malformed one answers 400 at once), then runs it
  // on the peer's shard; `reply` runs on `from`.
  void handle(RelayCall call, model::ShardId from, Reply reply);

  // Start-up, before the shards run: takes a recovered `$relay-*` record (true).
  bool recover(std::string_view queue_key, const model::Message& message);
  // On each shard once it runs: restores the recovered peers it owns (forgets those whose lease
  // ran out meanwhile); shard 0 also drops relay subscriptions no live peer holds.
  void start(model::ShardId shard);

  // --- for the gateways ---
  core::Executor& executor() { return executor_; }
  core::Broker& broker(model::ShardId shard) { return *brokers_[shard.value()]; }
  auth::Authenticator& authenticator() { return authenticator_; }
  // Runs `fn` with the directory on shard 0, then `done` with its result back on `back`.
  template <class T>
  void with_directory(model::ShardId back, std::function<T(Directory&)> fn, std::function<void(T)> done);
  std::size_t peers_per_shard() const;
  // On shard 0: writes a new directory entry's `$relay-directory` record.
  void record_entry(const Directory::Entry& entry);

 private:
  model::ShardId owner(std::string_view peer) const;

  core::Executor& executor_;
  std::vector<core::Broker*> brokers_;
  auth::Authenticator& authenticator_;
  Options options_;
  Directory directory_;  // touched on shard 0 only (and at recovery, before the shards run)
  std::vector<std::shared_ptr<Gateway>> gateways_;  // index = shard
  // What recovery brought back, by owning shard: each shard's start() takes its own.
  std::vector<std::unique_ptr<GatewayRecovered>> recovered_;
  // Recovered peers' lease deadlines (epoch ms); read-only once the shards run.
  std::unordered_map<std::string, std::int64_t> recovered_deadlines_;
};

template <class T>
void RelayService::with_directory(model::ShardId back, std::function<T(Directory&)> fn, std::function<void(T)> done) {
  executor_.post(model::ShardId(0), [this, back, fn = std::move(fn), done = std::move(done)]() mutable {
    auto result = fn(directory_);
    executor_.post(back, [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
  });
}

}  // namespace carrier::relay
