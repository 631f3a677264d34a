#include "admin/queue_work.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "base/logging.hpp"
#include "core/broker.hpp"

namespace carrier::admin {

namespace {

std::shared_ptr<spdlog::logger> log() {
  static auto logger = logging::get("admin");
  return logger;
}

// One purge or move under way: how far it is, and the next chunk to ask for.
struct Work : std::enable_shared_from_this<Work> {
  using Chunk = std::function<void(core::Broker&, std::size_t, std::function<void(Result<std::size_t>)>)>;
  core::Broker& here;
  std::string what;  // "purge of queue:orders"
  Chunk run_chunk;
  std::size_t limit;
  std::size_t chunk;
  bool one_piece;
  std::function<void(Result<std::size_t>)> done;
  std::size_t so_far = 0;
  std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_progress = began;

  Work(core::Broker& h, std::string w, Chunk c, std::size_t l, std::size_t ch, bool one,
       std::function<void(Result<std::size_t>)> d)
      : here(h), what(std::move(w)), run_chunk(std::move(c)), limit(l), chunk(ch), one_piece(one), done(std::move(d)) {}

  void next() {
    const std::size_t ask = one_piece ? limit - so_far : std::min(chunk, limit - so_far);
    run_chunk(here, ask, [self = shared_from_this(), ask](Result<std::size_t> n) { self->on_chunk(ask, n); });
  }

  void on_chunk(std::size_t asked, Result<std::size_t> n) {
    // An emptied queue goes away: emptied by the last chunk, it is not there for the next.
    const bool gone = !n && n.error().code == Errc::not_found && so_far > 0;
    if (!n && !gone) {
      if (so_far > 0) log()->warn("{}: stopped after {} message(s): {}", what, so_far, n.error().detail);
      return done(unexpected(n.error()));
    }
    const std::size_t got = gone ? 0 : *n;
    so_far += got;
    const auto now = std::chrono::steady_clock::now();
    const bool finished = one_piece || got < asked || so_far >= limit;
    if (finished) {
      const double seconds = std::chrono::duration<double>(now - began).count();
      if (so_far > 0) log()->info("{}: {} message(s) in {:.2f} s", what, so_far, seconds);
      return done(so_far);
    }
    if (now - last_progress >= std::chrono::seconds(1)) {
      last_progress = now;
      log()->info("{}: {} message(s) so far", what, so_far);
    }
    next();
  }
};

}  // namespace

void purge_in_chunks(core::Broker& here, std::string key, core::MessageFilter which, std::size_t limit,
                     std::function<void(Result<std::size_t>)> done, std::size_t chunk) {
  auto what = "purge of " + key;
  auto run = [key = std::move(key), which = std::move(which)](core::Broker& b, std::size_t n,
                                                               std::function<void(Result<std::size_t>)> d) {
    core::purge_queue(b, key, which, n, std::move(d));
  };
  std::make_shared<Work>(here, std::move(what), std::move(run), limit, std::max<std::size_t>(chunk, 1), false,
                         std::move(done))
      ->next();
}

void move_in_chunks(core::Broker& here, std::string key, model::Destination to, core::MessageFilter which,
                    std::size_t limit, bool remove, std::function<void(Result<std::size_t>)> done,
                    std::size_t chunk) {
  auto what = (remove ? "move of " : "copy of ") + key + " to " + to.key();
  auto run = [key = std::move(key), to = std::move(to), which = std::move(which), remove](
                 core::Broker& b, std::size_t n, std::function<void(Result<std::size_t>)> d) {
    core::move_messages(b, key, to, which, n, remove, std::move(d));
  };
  std::make_shared<Work>(here, std::move(what), std::move(run), limit, std::max<std::size_t>(chunk, 1), !remove,
                         std::move(done))
      ->next();
}

}  // namespace carrier::admin
