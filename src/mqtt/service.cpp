#include "mqtt/service.hpp"

#include "mqtt/client_registry.hpp"
#include "mqtt/session.hpp"

namespace carrier::mqtt {

Service::Service(core::Executor& executor, std::vector<core::Broker*> brokers, Options options,
                 auth::Authenticator& authenticator)
    : executor_(executor), brokers_(std::move(brokers)), options_(std::move(options)), authenticator_(authenticator) {
  for (std::size_t i = 0; i < brokers_.size(); ++i) {
    registries_.push_back(
        std::make_unique<ClientRegistry>(core::ShardId(static_cast<std::uint32_t>(i)), executor_, *brokers_[i]));
  }
}

Service::~Service() = default;

void Service::accept(net::tcp::socket socket, core::ShardId shard) {
  auto session = std::make_shared<Session>(std::move(socket), shard, *brokers_[shard.value()], *this, options_);
  session->start();
  session->start_watchdog();
}

core::ShardId Service::owner(const std::string& client_id) const {
  return core::owner_shard("client:" + client_id, registries_.size());
}

void Service::claim(const std::string& client_id, const std::shared_ptr<Session>& session, bool clean_start,
                    ClaimDone done) {
  const core::ShardId home = session->shard();
  ClientRegistry::Claimant who{home, session, session->id(), clean_start};
  auto* registry = registries_[owner(client_id).value()].get();
  executor_.post(owner(client_id), [this, registry, client_id, who = std::move(who), home, done = std::move(done)]() mutable {
    registry->claim(client_id, std::move(who),
                    [this, home, done = std::move(done)](bool existed, std::optional<SessionState> state) mutable {
                      executor_.post(home, [done = std::move(done), existed, state = std::move(state)]() mutable {
                        done(existed, std::move(state));
                      });
                    });
  });
}

void Service::depart(const std::string& client_id, Departure departure) {
  auto* registry = registries_[owner(client_id).value()].get();
  executor_.post(owner(client_id), [registry, client_id, d = std::move(departure)]() mutable {
    registry->depart(client_id, std::move(d));
  });
}

}  // namespace carrier::mqtt
