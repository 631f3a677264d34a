#include "auth/authenticator.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include "auth/password_hash.hpp"
#include "auth/user_syntax.hpp"
#include "base/logging.hpp"

namespace carrier::auth {

namespace {

std::shared_ptr<spdlog::logger> log() {
  static auto logger = logging::get("auth");
  return logger;
}

bool present(const std::optional<std::string>& value) { return value && !value->empty(); }

std::shared_ptr<const std::unordered_map<std::string, std::string>> by_name(const std::vector<User>& users) {
  auto map = std::make_shared<std::unordered_map<std::string, std::string>>();
  for (const auto& u : users) map->emplace(u.name, u.password_hash);
  return map;
}

// Every user's name and hash usable, no name twice; `seen` gets the names.
Status check_users(const std::vector<User>& users, std::unordered_map<std::string, const User*>& seen) {
  for (const auto& u : users) {
    const auto at = u.source.empty() ? std::string() : " in " + u.source;
    if (auto problem = user_name_problem(u.name); !problem.empty()) {
      return unexpected(Errc::invalid_argument, problem + at);
    }
    if (!password_hash_problem(u.password_hash).empty() || !is_usable_hash(u.password_hash)) {
      return unexpected(Errc::invalid_argument,
                        fmt::format("the hash of user \"{}\" {}{}", printable_name(u.name),
                                    "is not an argon2id hash libsodium can read (`carrier passwd` makes one)", at));
    }
    if (auto [it, fresh] = seen.emplace(u.name, &u); !fresh) {
      return unexpected(Errc::invalid_argument, fmt::format("user \"{}\" is defined twice{} and in {}",
                                                            printable_name(u.name), at, it->second->source));
    }
  }
  return ok();
}

}  // namespace

Result<std::unique_ptr<Authenticator>> Authenticator::create(const Options& options, core::Executor& executor,
                                                             Clock clock) {
  if (auto st = init_sodium(); !st) return unexpected(st.error());
  std::unordered_map<std::string, const User*> seen;
  if (auto st = check_users(options.users, seen); !st) return unexpected(st.error());
  if (!options.allows_anonymous() && options.users.empty()) {
    return unexpected(Errc::invalid_argument,
                      "auth.anonymous is false but no user is configured: no client could connect");
  }
  for (const auto& t : options.tokens) {
    if (!seen.contains(t.user)) {
      return unexpected(Errc::invalid_argument, fmt::format("a token of user \"{}\" in {}: no such user is configured",
                                                            printable_name(t.user), t.source));
    }
  }
  std::unique_ptr<Authenticator> a(new Authenticator(options, executor, std::move(clock)));
  if (a->has_users()) {
    const unsigned threads = std::max(1u, options.verify_threads);
    for (unsigned i = 0; i < threads; ++i) a->verifiers_.emplace_back([p = a.get()] { p->run_verifier(); });
  }
  return a;
}

Authenticator::Authenticator(const Options& options, core::Executor& executor, Clock clock)
    : executor_(executor),
      anonymous_(options.allows_anonymous()),
      failure_delay_ms_(options.failure_delay_ms),
      failure_delay_max_ms_(std::max(options.failure_delay_ms, options.failure_delay_max_ms)),
      max_pending_(std::max<std::size_t>(1, options.max_pending)),
      max_pending_suspect_(options.max_pending_suspect),
      clock_(std::move(clock)),
      users_(by_name(options.users)),
      tokens_(options.tokens),
      access_(executor, options.acl),
      ledger_(FailureLimits{options.source_failure_limit, options.total_failure_limit,
                            std::chrono::milliseconds(options.failure_window_ms), options.max_sources}) {}

Authenticator::~Authenticator() { stop(); }

Status Authenticator::replace_users(const std::vector<User>& users) {
  std::unordered_map<std::string, const User*> seen;
  if (auto st = check_users(users, seen); !st) return st;
  // Verifier threads run only when users were configured at start, and "no users" means "no
  // checks": switching authentication on or off takes a restart.
  if (!has_users() || users.empty()) {
    return unexpected(Errc::invalid_argument, "turning authentication on or off (users or none) needs a restart");
  }
  users_.store(by_name(users));
  return ok();
}

void Authenticator::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& check : queue_) wipe(check.password);
    for (auto& check : suspect_queue_) wipe(check.password);
    queue_.clear();
    suspect_queue_.clear();
  }
  wake_.notify_all();
  for (auto& t : verifiers_) {
    if (t.joinable()) t.join();
  }
}

std::optional<Outcome> Authenticator::authenticate(Credentials credentials, model::ShardId shard, Done done) {
  if (credentials.identity && !credentials.identity->empty()) {
    // The TLS layer verified a client certificate naming the user: it is the proof, whatever
    // login or password the client also sent (which are not checked).
    if (credentials.password) wipe(*credentials.password);
    return Outcome{Verdict::accepted, std::move(*credentials.identity)};
  }
  const bool has_name = present(credentials.username);
  const bool has_password = present(credentials.password);
  if (!has_name && !has_password) {
    return Outcome{anonymous_ ? Verdict::accepted : Verdict::rejected, {}};
  }
  if (users_.load()->empty()) {
    // No users configured: credentials are not checked (anonymous is then always allowed).
    if (credentials.password) wipe(*credentials.password);
    return Outcome{Verdict::accepted, {}};
  }
  Check check{has_name ? std::move(*credentials.username) : std::string(),
              credentials.password ? std::move(*credentials.password) : std::string(),
              shard,
              std::move(done),
              std::move(credentials.source)};
  if (credentials.password) wipe(*credentials.password);
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      wipe(check.password);
      return Outcome{Verdict::busy, {}};
    }
    const auto now = clock_();
    const Standing standing = ledger_.standing(check.source, now);
    if (standing == Standing::barred) {
      wipe(check.password);
      warn_refusing("logins from sources that failed too often");
      return Outcome{Verdict::throttled, {}};
    }
    check.first_lane = standing == Standing::clean;
    auto& lane = check.first_lane ? queue_ : suspect_queue_;
    if (lane.size() >= (check.first_lane ? max_pending_ : max_pending_suspect_)) {
      wipe(check.password);
      warn_refusing(check.first_lane ? "logins: too many waiting for a password check"
                                     : "logins of recently failed sources: too many waiting for a password check");
      return Outcome{Verdict::busy, {}};
    }
    if (check.first_lane) ledger_.begin_check(check.source, now);
    lane.push_back(std::move(check));
  }
  wake_.notify_one();
  return std::nullopt;
}

std::optional<Outcome> Authenticator::authenticate_token(std::string_view token, std::string_view source,
                                                        model::ShardId shard, Done done) {
  const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  std::uint32_t delay = 0;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return Outcome{Verdict::busy, {}};
    const auto now = clock_();
    if (ledger_.standing(source, now) == Standing::barred) {
      warn_refusing("logins from sources that failed too often");
      return Outcome{Verdict::throttled, {}};
    }
    if (auto user = tokens_.user_of(token, now_s)) return Outcome{Verdict::accepted, std::move(*user)};
    ledger_.record_failure(source, now);
    delay = failure_delay(source, now);
  }
  reply(shard, Outcome{Verdict::rejected, {}}, std::move(done), delay);
  return std::nullopt;
}

void Authenticator::warn_refusing(const char* what) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_busy_warning_ > std::chrono::seconds(10)) {  // a flood must not flood the log too
    last_busy_warning_ = now;
    log()->warn("refusing {} ({} + {} waiting)", what, queue_.size(), suspect_queue_.size());
  }
}

Authenticator::Check Authenticator::take_next() {
  // The second lane gets every fourth turn while both have work, all of them while the first
  // is empty: a flood of failing sources keeps a quarter of the verifier at most.
  const bool suspect_turn = !suspect_queue_.empty() && (queue_.empty() || ++turn_ % 4 == 0);
  auto& lane = suspect_turn ? suspect_queue_ : queue_;
  Check check = std::move(lane.front());
  lane.pop_front();
  return check;
}

void Authenticator::run_verifier() {
  std::call_once(decoy_once_, [this] {
    // A hash of a random password nobody knows, with the same cost as real ones.
    unsigned char random[32];
    randombytes_buf(random, sizeof random);
    auto hash = hash_password(std::string_view(reinterpret_cast<const char*>(random), sizeof random));
    sodium_memzero(random, sizeof random);
    decoy_hash_ = hash ? *hash : std::string();
  });
  for (;;) {
    Check check;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty() || !suspect_queue_.empty(); });
      if (stopping_) return;
      check = take_next();
    }
    auto outcome = verify(check);
    wipe(check.password);
    std::uint32_t delay = 0;
    {
      std::lock_guard lock(mutex_);
      const auto now = clock_();
      if (check.first_lane) ledger_.end_check(check.source, now);
      if (outcome.verdict == Verdict::rejected) {
        ledger_.record_failure(check.source, now);
        delay = failure_delay(check.source, now);
      }
    }
    reply(check.shard, std::move(outcome), std::move(check.done), delay);
  }
}

Outcome Authenticator::verify(Check& check) {
  const auto users = users_.load();
  const auto it = check.username.empty() ? users->end() : users->find(check.username);
  if (it == users->end()) {
    // Same work as for a real user, so the answer's timing does not say the name is unknown.
    if (!decoy_hash_.empty()) (void)verify_password(decoy_hash_, check.password);
    return Outcome{Verdict::rejected, {}};
  }
  if (!verify_password(it->second, check.password)) return Outcome{Verdict::rejected, {}};
  return Outcome{Verdict::accepted, it->first};
}

std::uint32_t Authenticator::failure_delay(std::string_view source, std::chrono::steady_clock::time_point now) {
  const auto delay = ledger_.failure_delay(source, now, std::chrono::milliseconds(failure_delay_ms_),
                                           std::chrono::milliseconds(failure_delay_max_ms_));
  return static_cast<std::uint32_t>(delay.count());
}

void Authenticator::reply(model::ShardId shard, Outcome outcome, Done done, std::uint32_t delay_ms) {
  if (outcome.verdict == Verdict::accepted || delay_ms == 0) {
    executor_.post(shard, [outcome = std::move(outcome), done = std::move(done)]() mutable { done(std::move(outcome)); });
    return;
  }
  // The timer is made on the shard itself: post_after belongs to the shard's thread.
  auto& executor = executor_;
  const auto delay = delay_ms;
  executor_.post(shard, [&executor, shard, delay, outcome = std::move(outcome), done = std::move(done)]() mutable {
    executor.post_after(shard, delay,
                        [outcome = std::move(outcome), done = std::move(done)]() mutable { done(std::move(outcome)); });
  });
}

}  // namespace carrier::auth
