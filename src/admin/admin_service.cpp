#include "admin/admin_service.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "admin/metrics_report.hpp"
#include "net/transport.hpp"

namespace carrier::admin {

Readiness Service::readiness() const {
  Readiness r;
  if (!recovered_.load()) r.reasons.emplace_back("recovering");
  if (!listening_.load()) r.reasons.emplace_back("listeners not up");
  if (stopping_.load()) r.reasons.emplace_back("shutting down");
  const auto store = store_health();
  if (store.closed) {
    r.reasons.emplace_back("store closed");
  } else if (!store.last_ok) {
    r.reasons.emplace_back("store failing: its last batch was not written");
  }
  r.ready = r.reasons.empty();
  return r;
}

double Service::uptime_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - info_.started).count();
}

void Service::metrics(core::Broker& here, std::function<void(std::string)> done) const {
  const bool per_destination = !metrics_.destinations.empty();
  const auto* budget = here.context().destinations;
  collect(here, SnapshotScope{.queues = per_destination},
          [this, budget, done = std::move(done)](std::vector<ShardSnapshot> s) {
            const auto broker = merge(std::move(s));
            const auto store = store_health();
            MetricsInput in{info_, uptime_seconds(), broker, store, memory_used(), memory_limit(), net::refusal_counts(),
                            0, 0, disk_};
            if (budget != nullptr) {
              in.refusals[static_cast<std::size_t>(net::Refusal::destinations)] += budget->refused();
              in.destinations = budget->count();
              in.max_destinations = budget->max();
            }
            done(render_metrics(in, metrics_));
          });
}

void Service::totals(core::Broker& here, std::function<void(const ShardSnapshot&)> done) const {
  snapshots_.get(here, SnapshotScope{}, [done = std::move(done)](std::shared_ptr<const Snapshot> s) { done(s->merged); });
}

void Service::destinations(core::Broker& here, std::string kind, PageRequest request,
                           std::function<void(Result<Page<DestinationRow>>)> done) const {
  snapshots_.get(here, SnapshotScope{.queues = true},
                 [kind = std::move(kind), request = std::move(request), done = std::move(done)](
                     std::shared_ptr<const Snapshot> s) { done(list_destinations(s->destinations, kind, request)); });
}

void Service::connections(core::Broker& here, PageRequest request,
                          std::function<void(Result<Page<ConnectionRow>>)> done) const {
  snapshots_.get(here, SnapshotScope{.connections = true},
                 [request = std::move(request), done = std::move(done)](std::shared_ptr<const Snapshot> s) {
                   done(list_connections(s->merged.connections, request));
                 });
}

void Service::topics(core::Broker& here, PageRequest request,
                     std::function<void(Result<Page<TopicRow>>)> done) const {
  snapshots_.get(here, SnapshotScope{.topics = true},
                 [request = std::move(request), done = std::move(done)](std::shared_ptr<const Snapshot> s) {
                   done(list_topics(s->merged.topics, request));
                 });
}

void Service::close_connection(core::Broker& here, std::uint64_t id, std::string reason,
                               std::function<void(bool)> done) const {
  // Only the shard holding it finds it: a flag per shard, read once all have looked.
  auto found = std::make_shared<std::vector<char>>(here.context().shard_count(), 0);
  here.context().broadcast(
      [found, id, reason = std::move(reason)](core::Broker& b) {
        for (auto* t : net::Transport::on_this_shard()) {
          if (t->id() != id) continue;
          (*found)[b.shard().value()] = 1;
          t->close_by_admin(reason);
          break;
        }
      },
      [found, done = std::move(done)](Status) {
        done(std::any_of(found->begin(), found->end(), [](char f) { return f != 0; }));
      });
}

}  // namespace carrier::admin
