#include "core/queue_maintenance.hpp"

#include <fmt/format.h>

#include "core/broker.hpp"

namespace carrier::core {

namespace {

template <class T>
using Reply = std::function<void(Result<T>)>;

// Runs `work` on the owner of `key`, and its result through `done` on `here`'s shard.
template <class T>
void on_owner(Broker& here, const std::string& key, std::function<void(Broker&, Reply<T>)> work, Reply<T> done) {
  const model::ShardId home = here.shard();
  ShardContext& ctx = here.context();
  ctx.post_to(ctx.owner_of(key), [home, work = std::move(work), done = std::move(done)](Broker& owner) mutable {
    ShardContext* owner_ctx = &owner.context();
    work(owner, [home, owner_ctx, done = std::move(done)](Result<T> r) mutable {
      owner_ctx->post_to(home, [done = std::move(done), r = std::move(r)](Broker&) mutable { done(std::move(r)); });
    });
  });
}

Unexpected no_queue(const std::string& key) { return unexpected(Errc::not_found, fmt::format("no queue '{}'", key)); }

// Up to `limit` ready messages `which` accepts (all when empty), taken out oldest first within
// each priority; the others go back in their order. O(ready messages): an operator's request.
// A paged entry (one that could not be read back) is taken only by an unfiltered purge, which
// needs no message: `need_message` keeps it.
std::vector<Queue::Entry> take_ready(Queue& queue, const MessageFilter& which, std::size_t limit,
                                     bool need_message = false) {
  std::vector<Queue::Entry> taken;
  std::vector<Queue::Entry> kept;
  Queue::Entry e;
  while (taken.size() < limit && queue.take_oldest(e)) {
    if (e.is_paged() && (which || need_message)) {
      kept.push_back(std::move(e));
    } else if (!which || which(*e.message)) {
      taken.push_back(std::move(e));
    } else {
      kept.push_back(std::move(e));
    }
  }
  for (auto& k : kept) queue.requeue(std::move(k));
  return taken;
}

// A browse's window past the messages in memory: read from the cold tails, highest priority
// first, each message once (those in memory skipped), `skip` of them passed over first.
struct ColdBrowse {
  std::string key;
  std::vector<std::pair<std::size_t, store::Location>> lanes;  // still to read, last first
  std::size_t skip = 0;
  std::size_t want = 0;
  std::shared_ptr<std::vector<BrowsedMessage>> out;
  std::function<void()> done;
};

constexpr std::size_t kBrowseScan = 512;

void browse_cold(Broker& owner, std::shared_ptr<ColdBrowse> b) {
  if (b->lanes.empty() || b->want == 0) return b->done();
  auto [lane, from] = b->lanes.back();
  auto& ctx = owner.context();
  Broker* at = &owner;
  ctx.store.scan(b->key, static_cast<std::uint8_t>(lane), from, kBrowseScan, [at, &ctx, b](Result<store::ScanResult> r) {
    ctx.executor.post(ctx.self, [at, b, r = std::move(r)]() mutable {
      if (!r) return b->done();  // unreadable or closing: what was found so far
      auto* oq = at->owned_queues().find(b->key);
      for (auto& sm : r->messages) {
        if (b->want == 0) break;
        if (!sm.message || (oq != nullptr && oq->locations && oq->locations->contains(sm.message->id))) continue;
        if (b->skip > 0) {
          --b->skip;
          continue;
        }
        b->out->push_back(BrowsedMessage{sm.message, sm.delivery_count, sm.delivery_count > 0});
        --b->want;
      }
      if (r->exhausted) {
        b->lanes.pop_back();
      } else {
        b->lanes.back().second = r->next;
      }
      browse_cold(*at, b);
    });
  });
}

}  // namespace

void browse_queue(Broker& here, std::string key, std::size_t offset, std::size_t limit,
                  std::function<void(Result<std::vector<BrowsedMessage>>)> done) {
  using Out = std::vector<BrowsedMessage>;
  on_owner<Out>(
      here, key,
      [key, offset, limit](Broker& owner, Reply<Out> reply) {
        auto& queues = owner.owned_queues();
        auto* oq = queues.find(key);
        if (oq == nullptr) return reply(no_queue(key));
        // Copies of the entries in range; paged ones are read back (only these, not the backlog).
        std::vector<Queue::Entry> window;
        std::size_t seen = 0;
        oq->queue->for_each([&](const Queue::Entry& e) {
          if (seen++ < offset || window.size() >= limit) return;
          window.push_back(e);
        });
        auto out = std::make_shared<Out>();
        // Past what is in memory: the cold tails, read for the browse and not kept.
        if (window.size() < limit && oq->queue->cold() != 0) {
          auto cold = std::make_shared<ColdBrowse>();
          cold->key = key;
          for (std::size_t p = 0; p < 10; ++p) {
            const auto* t = oq->queue->cold_tail(p);
            if (t != nullptr && t->count != 0) cold->lanes.emplace_back(p, t->from);
          }
          cold->skip = offset > seen ? offset - seen : 0;
          cold->want = limit - window.size();
          cold->out = std::make_shared<Out>();
          Broker* at = &owner;
          auto rest = cold->out;
          // The window in memory first (its paged entries read back), then the cold part.
          auto memory_part = std::make_shared<Reply<Out>>(std::move(reply));
          cold->done = [memory_part, rest, out]() mutable {
            for (auto& m : *rest) out->push_back(std::move(m));
            (*memory_part)(std::move(*out));
          };
          reply = [at, cold, out](Result<Out> mem) mutable {
            if (mem) *out = std::move(*mem);
            browse_cold(*at, cold);
          };
          out = std::make_shared<Out>();
        }
        std::vector<store::ReadItem> items;
        std::vector<std::size_t> at;  // where each read's answer goes in `out`
        for (auto& e : window) {
          if (e.is_paged()) {
            at.push_back(out->size());
            items.push_back(store::ReadItem{e.paged->summary.id, e.paged->location});
          }
          out->push_back(BrowsedMessage{e.message, e.delivery_count, e.redelivered});
        }
        if (items.empty()) return reply(std::move(*out));
        // A browse leaves messages where they are: what is read back is only shown, not kept.
        auto& ctx = owner.context();
        ctx.store.read(key, std::move(items),
                       [&ctx, out, at = std::move(at), reply = std::move(reply)](
                           std::vector<Result<model::MessagePtr>> answers) mutable {
                         ctx.executor.post(ctx.self, [out, at = std::move(at), answers = std::move(answers),
                                                      reply = std::move(reply)]() mutable {
                           for (std::size_t i = 0; i < at.size() && i < answers.size(); ++i) {
                             if (answers[i]) (*out)[at[i]].message = std::move(*answers[i]);
                           }
                           // Gone or unreadable meanwhile: not shown.
                           std::erase_if(*out, [](const BrowsedMessage& m) { return !m.message; });
                           reply(std::move(*out));
                         });
                       });
      },
      std::move(done));
}

void purge_queue(Broker& here, std::string key, MessageFilter which, std::size_t limit,
                 std::function<void(Result<std::size_t>)> done) {
  on_owner<std::size_t>(
      here, key,
      [key, which = std::move(which), limit](Broker& owner, Reply<std::size_t> reply) {
        auto& queues = owner.owned_queues();
        if (queues.find(key) == nullptr) return reply(no_queue(key));
        Broker* self = &owner;
        auto purge = [self, key, which, limit, reply = std::move(reply)]() mutable {
          auto& queues = self->owned_queues();
          auto* oq = queues.find(key);
          if (oq == nullptr) return reply(no_queue(key));
          // Unfiltered, cold tails go first, whole: owed as drops, acked as a scan reads them.
          const std::size_t cold = which ? 0 : static_cast<std::size_t>(oq->queue->drop_cold(limit));
          auto gone = take_ready(*oq->queue, which, limit - cold);
          const std::size_t n = gone.size() + cold;
          store::Batch batch;
          queues.release_entries(key, oq->stored, std::move(gone), batch);
          if (cold != 0) queues.dispatch(key, *oq->queue, oq->stored);
          queues.collect_if_empty(key);
          if (batch.empty()) return reply(n);
          self->context().store.append(std::move(batch), [reply = std::move(reply), n](Status st) mutable {
            if (!st) return reply(unexpected(st.error()));
            reply(n);
          });
        };
        // A filter looks at messages: paged ones are read back first. Purging all needs none.
        if (which) {
          queues.page_in_all(key, std::move(purge));
        } else {
          purge();
        }
      },
      std::move(done));
}

void move_messages(Broker& here, std::string key, model::Destination to, MessageFilter which, std::size_t limit,
                   bool remove, std::function<void(Result<std::size_t>)> done) {
  on_owner<std::size_t>(
      here, key,
      [key, to = std::move(to), which = std::move(which), limit, remove](Broker& owner, Reply<std::size_t> reply) {
        if (owner.owned_queues().find(key) == nullptr) return reply(no_queue(key));
        // Copies need bodies: paged messages are read back first.
        Broker* at = &owner;
        owner.owned_queues().page_in_all(key, [at, key, to, which, limit, remove, reply = std::move(reply)]() mutable {
        Broker& owner = *at;
        auto* oq = owner.owned_queues().find(key);
        if (oq == nullptr) return reply(no_queue(key));
        auto taken = std::make_shared<std::vector<Queue::Entry>>(take_ready(*oq->queue, which, limit, true));
        if (taken->empty()) return reply(std::size_t{0});
        std::vector<model::MessagePtr> copies;
        for (const auto& e : *taken) {
          auto copy = std::make_shared<model::Message>(*e.message);
          copy->id = owner.next_message_id();
          copy->destination = to;
          copy->deliver_at_ms = 0;
          copies.push_back(std::move(copy));
        }
        // Runs on the owner (the send's completion comes back to the shard that sent).
        Broker* self = &owner;
        owner.send(std::move(copies), [self, key, taken, remove, reply = std::move(reply)](Status st) mutable {
          auto& queues = self->owned_queues();
          const bool keep = !st || !remove;
          auto& oq = queues.open(key);  // collected while they were out: it comes back
          if (keep) {
            for (auto& e : *taken) oq.queue->requeue(std::move(e));
            queues.dispatch(key, *oq.queue, oq.stored);
            if (!st) return reply(unexpected(st.error()));
            return reply(taken->size());
          }
          std::vector<model::MessagePtr> gone;
          for (auto& e : *taken) gone.push_back(std::move(e.message));
          store::Batch batch;
          queues.release(key, oq.stored, gone, batch);
          const std::size_t n = gone.size();
          queues.collect_if_empty(key);
          if (batch.empty()) return reply(n);
          self->context().store.append(std::move(batch), [reply = std::move(reply), n](Status st2) mutable {
            if (!st2) return reply(unexpected(st2.error()));
            reply(n);
          });
        });
        });
      },
      std::move(done));
}

}  // namespace carrier::core
