#include "core/router.hpp"

#include <algorithm>

#include "core/broker.hpp"
#include "core/deadline.hpp"
#include "core/topic_routing.hpp"

namespace carrier::core {

using model::DestinationKind;
using model::Message;
using model::MessagePtr;
using model::owner_shard;
using model::ShardId;

void Router::plan(const std::vector<MessagePtr>& messages, std::vector<Routed>& to_queues, ToPrivate& to_private,
                  std::vector<MessagePtr>& retained, store::Batch& batch, std::vector<bool>* unmatched) {
  std::vector<TopicSubscriber> matched;
  const std::string* matched_for = nullptr;  // the topic `matched` is for: a batch's messages share theirs
  if (unmatched != nullptr) unmatched->assign(messages.size(), false);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    if (m->destination.kind == DestinationKind::topic) {
      if (m->retain) retained.push_back(m);
      if (matched_for == nullptr || *matched_for != m->destination.name) {
        matched.clear();
        topics_.match(m->destination.name, matched);
        matched_for = &m->destination.name;
      }
      // Room for this message's subscribers and those of the ones right after it to the same
      // topic (not the whole rest of the batch: one wide topic among narrow ones would reserve
      // its width for every message).
      if (to_private.capacity() - to_private.size() < matched.size()) {
        std::size_t run = 1;
        while (i + run < messages.size() && messages[i + run]->destination == m->destination) ++run;
        to_private.reserve(to_private.size() + matched.size() * run);
      }
      bool taken = false;
      for (const auto& s : matched) {
        if (!topics_.selected(s, *m)) continue;
        taken = true;
        if (s.queue_key.empty()) {
          to_private.push_back(PrivateDelivery{s.id, s.home, m});
        } else {
          if (m->persistent && s.durable) batch.push_back(store::Record::added(s.queue_key, m));
          to_queues.push_back(Routed{s.queue_key, m});
        }
      }
      if (unmatched != nullptr) (*unmatched)[i] = !taken;
    } else {
      auto key = m->destination.key();
      if (m->persistent && m->destination.kind == DestinationKind::queue) batch.push_back(store::Record::added(key, m));
      to_queues.push_back(Routed{std::move(key), m});
    }
  }
}

namespace {
constexpr std::size_t kDestinationMargin = 64;
}  // namespace

bool Router::needs_verdict(const std::vector<Routed>& to_queues) const {
  // A destination that may refuse (full with overflow = reject, or a temporary queue whose
  // connection is gone) must answer before the producer is told the message is accepted.
  // Near [limits] max_destinations any queue may be refused as a new one: every send then waits
  // for its owner's answer. The margin covers sends already on their way (a few per shard).
  const auto* budget = shard_.destinations;
  const bool budget_tight = budget != nullptr && budget->count() + kDestinationMargin >= budget->max();
  for (const auto& r : to_queues) {
    if (budget_tight && r.message->destination.kind == DestinationKind::queue) return true;
    if (r.message->destination.kind == DestinationKind::temp_queue) return true;
    const auto& p = shard_.policy_for(r.message->destination);
    // `block` refuses nothing on a queue; elsewhere it is `reject`.
    const bool refuses = p.overflow == OverflowPolicy::reject ||
                         (p.overflow == OverflowPolicy::block && r.message->destination.kind != DestinationKind::queue);
    if ((p.max_messages != 0 || p.max_bytes != 0) && refuses) return true;
  }
  return false;
}

std::vector<MessagePtr> Router::admit(std::vector<MessagePtr> messages, std::vector<MessagePtr>& later,
                                      store::Batch& batch, std::vector<std::size_t>* ready_at) {
  const auto now = shard_.now_ms();
  std::vector<MessagePtr> ready;
  ready.reserve(messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto& m = messages[i];
    if (m->spilled) {
      // A copy of a spilled message sent anew (moved, forwarded by federation) is a new message:
      // its queue's owner decides whether it is spilled, and stores it then.
      auto copy = std::make_shared<Message>(*m);
      copy->spilled = false;
      m = std::move(copy);
    }
    const auto& policy = shard_.policy_for(m->destination);
    if (policy.ttl_ms != 0 && m->expires_ms == 0) {
      auto copy = std::make_shared<Message>(*m);
      // The timestamp may be the client's: saturate, and keep a result below 1 meaning "expired".
      const std::int64_t base = m->timestamp_ms != 0 ? m->timestamp_ms : now;
      copy->expires_ms = std::max<std::int64_t>(1, deadline_after(base, policy.ttl_ms));
      m = std::move(copy);
    }
    if (m->destination.kind == DestinationKind::topic && m->deliver_at_ms > now) {
      // Topic subscribers are those present when it is due: it is matched then. Until then a
      // persistent one waits in the store, so its receipt holds across a restart.
      if (m->persistent) batch.push_back(store::Record::added(TopicRouting::scheduled_topic_key(*m), m));
      later.push_back(std::move(m));
      continue;
    }
    if (ready_at != nullptr) ready_at->push_back(i);
    ready.push_back(std::move(m));
  }
  return ready;
}

void Router::route(std::vector<Routed> to_queues, ToPrivate to_private, Completion verdict) {
  const std::size_t n = shard_.shard_count();
  std::vector<std::vector<Routed>> by_owner(n);
  for (auto& r : to_queues) by_owner[owner_shard(r.key, n).value()].push_back(std::move(r));
  std::size_t owners = 0;
  for (const auto& v : by_owner) owners += v.empty() ? 0 : 1;
  std::shared_ptr<FanIn> fan;
  if (verdict) {
    if (owners == 0) {
      verdict(ok());
    } else {
      fan = std::make_shared<FanIn>(FanIn{owners, ok(), std::move(verdict)});
    }
  }
  const ShardId home = shard_.self;
  for (std::size_t s = 0; s < n; ++s) {
    if (by_owner[s].empty()) continue;
    Completion part;
    if (fan) {
      part = [this, fan, home](Status st) {
        shard_.complete_on(home, [fan](Status x) { fan->part(std::move(x)); }, std::move(st));
      };
    }
    if (s == shard_.self.value()) {
      queues_.enqueue(std::move(by_owner[s]), std::move(part));
    } else {
      shard_.post_to(ShardId(static_cast<std::uint32_t>(s)),
                     [batch = std::move(by_owner[s]), part = std::move(part)](Broker& b) mutable {
                       b.owned_queues().enqueue(std::move(batch), std::move(part));
                     });
    }
  }
  std::vector<std::vector<std::pair<ConsumerId, MessagePtr>>> by_home(n);
  if (!to_private.empty()) {
    std::vector<std::size_t> per_home(n, 0);
    for (const auto& d : to_private) ++per_home[d.home.value()];
    for (std::size_t s = 0; s < n; ++s) by_home[s].reserve(per_home[s]);
  }
  for (auto& d : to_private) by_home[d.home.value()].emplace_back(d.id, std::move(d.message));
  for (std::size_t s = 0; s < n; ++s) {
    if (by_home[s].empty()) continue;
    if (s == shard_.self.value()) {
      topics_.enqueue(std::move(by_home[s]));
    } else {
      shard_.post_to(ShardId(static_cast<std::uint32_t>(s)),
                     [batch = std::move(by_home[s])](Broker& b) mutable { b.topics().enqueue(std::move(batch)); });
    }
  }
}

}  // namespace carrier::core
