#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "auth/access_control.hpp"
#include "auth/failure_ledger.hpp"
#include "auth/options.hpp"
#include "auth/token_table.hpp"
#include "base/result.hpp"
#include "core/executor.hpp"

namespace carrier::auth {

// What a client presented at CONNECT (STOMP login/passcode, MQTT user name/password). An empty
// value counts as absent: clients that send `login:` with nothing in it mean "no login".
struct Credentials {
  std::optional<std::string> username;
  std::optional<std::string> password;  // bytes (MQTT allows binary)
  // The client's address without the port: failed logins are counted per source.
  std::string source;
  // The user a verified TLS client certificate names (tls.use_identity_as_username): already
  // authenticated, so accepted as that user without a password check.
  std::optional<std::string> identity;
};

enum class Verdict {
  accepted,  // `user` says who (empty: anonymous)
  rejected,  // wrong user or password, or none where one is required: one answer for all
  busy,      // too many logins waiting for a verifier: try again later
  throttled,  // the source has failed too often lately: refused without a check
};

struct Outcome {
  Verdict verdict = Verdict::rejected;
  std::string user;  // the authenticated user name; empty for an anonymous client
};

// The broker-wide authentication hook that the STOMP and MQTT sessions call at CONNECT.
//
// Decisions that need no password check are made at once (a verified certificate identity:
// that user; no users configured: everyone is let in; no credentials: anonymous or refused). A password check (argon2id, ~0.1 s of CPU and
// 64 MiB) runs on the authenticator's own verifier thread(s), never on a shard; the outcome is
// posted back to the asking shard, a rejection only after `failure_delay_ms`. An unknown user
// name costs the same verification (against a hash of a random password), so timing does not
// tell which names exist. Nothing is cached and no password is logged; each password copy is
// wiped once checked.
//
// A flood of wrong passwords must not lock everyone else out (issue 10): failed checks are
// counted per source address (FailureLedger). A source over its budget is refused at once
// (`throttled`); a source that failed recently, or already has a login waiting, queues in a
// second, shorter lane that gets one check in four while the first lane has work. So a login
// from an address that has not failed waits only behind other such addresses' first logins.
//
// Runs on: created and destroyed by the main thread (destroy it before the ShardPool it posts
// to); authenticate() on any shard; verification on its own threads. Its one mutex guards the
// queue of waiting checks (docs/threading.md).
class Authenticator {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // Checks every user's hash with libsodium and starts the verifier threads. `clock`: for tests.
  static Result<std::unique_ptr<Authenticator>> create(const Options& options, core::Executor& executor,
                                                       Clock clock = std::chrono::steady_clock::now);
  ~Authenticator();
  Authenticator(const Authenticator&) = delete;
  Authenticator& operator=(const Authenticator&) = delete;

  using Done = std::function<void(Outcome)>;
  // The outcome if it is known now; otherwise nullopt, and `done` runs later on `shard` (unless
  // the broker stops first). `done` is not called when an outcome is returned.
  std::optional<Outcome> authenticate(Credentials credentials, model::ShardId shard, Done done);

  // HTTP `Authorization: Bearer`: the token is checked here and now (a SHA-256, no verifier
  // thread). A source over its failure budget is `throttled` at once; an unknown or expired
  // token counts as a failure in the same ledger as a wrong password and is answered through
  // `done` after failure_delay_ms; an accepted one is returned.
  std::optional<Outcome> authenticate_token(std::string_view token, std::string_view source, model::ShardId shard,
                                            Done done);
  bool has_tokens() const { return !tokens_.empty(); }

  // Whether any user is configured (else every client is let in).
  bool has_users() const { return !users_.load()->empty(); }
  bool allows_anonymous() const { return anonymous_; }
  std::size_t user_count() const { return users_.load()->size(); }
  // The users from now on (SIGHUP): logins checked later see them; connections open stay.
  // Checked as at start-up; an error leaves the users as they were.
  Status replace_users(const std::vector<User>& users);

  // What an authenticated client may do (the ACL, [auth] acl_file): each session checks its
  // operations through an auth::Permissions made from it. Kept here so that every protocol that
  // reaches the authenticator reaches it too.
  AccessControl& access() { return access_; }
  const AccessControl& access() const { return access_; }

  // Stops the verifier threads; checks still waiting are dropped (their connections are closing).
  void stop();

 private:
  struct Check {
    std::string username;
    std::string password;
    model::ShardId shard;
    Done done;
    std::string source;
    bool first_lane = true;
  };

  Authenticator(const Options& options, core::Executor& executor, Clock clock);
  // The next check to run (the lock held), from the first lane except every fourth turn.
  Check take_next();
  void warn_refusing(const char* what);  // the lock held
  void run_verifier();
  Outcome verify(Check& check);
  // `delay_ms`: how long a rejection waits (FailureLedger::failure_delay).
  void reply(model::ShardId shard, Outcome outcome, Done done, std::uint32_t delay_ms);
  std::uint32_t failure_delay(std::string_view source, std::chrono::steady_clock::time_point now);  // the lock held

  core::Executor& executor_;
  const bool anonymous_;
  const std::uint32_t failure_delay_ms_;
  const std::uint32_t failure_delay_max_ms_;
  const std::size_t max_pending_;
  const std::size_t max_pending_suspect_;
  Clock clock_;
  // name -> hash; a table is read-only once made, replace_users swaps in another.
  std::atomic<std::shared_ptr<const std::unordered_map<std::string, std::string>>> users_;
  const TokenTable tokens_;  // read-only once made
  AccessControl access_;
  std::string decoy_hash_;  // verified for unknown names; set by each verifier before its first check

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Check> queue_;          // guarded by mutex_: the first lane
  std::deque<Check> suspect_queue_;  // guarded by mutex_: the second lane
  unsigned turn_ = 0;                // guarded by mutex_
  FailureLedger ledger_;             // guarded by mutex_
  bool stopping_ = false;            // guarded by mutex_
  std::chrono::steady_clock::time_point last_busy_warning_;  // guarded by mutex_
  std::once_flag decoy_once_;
  std::vector<std::thread> verifiers_;
};

}  // namespace carrier::auth
