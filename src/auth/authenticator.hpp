#pragma once

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

#include "auth/options.hpp"
#include "base/result.hpp"
#include "core/executor.hpp"

namespace carrier::auth {

// What a client presented at CONNECT (STOMP login/passcode, MQTT user name/password). An empty
// value counts as absent: clients that send `login:` with nothing in it mean "no login".
struct Credentials {
  std::optional<std::string> username;
  std::optional<std::string> password;  // bytes (MQTT allows binary)
};

enum class Verdict {
  accepted,  // `user` says who (empty: anonymous)
  rejected,  // wrong user or password, or none where one is required: one answer for all
  busy,      // too many logins waiting for a verifier: try again later
};

struct Outcome {
  Verdict verdict = Verdict::rejected;
  std::string user;  // the authenticated user name; empty for an anonymous client
};

// The broker-wide authentication hook that the STOMP and MQTT sessions call at CONNECT.
//
// Decisions that need no password check are made at once (no users configured: everyone is
// let in; no credentials: anonymous or refused). A password check (argon2id, ~0.1 s of CPU and
// 64 MiB) runs on the authenticator's own verifier thread(s), never on a shard; the outcome is
// posted back to the asking shard, a rejection only after `failure_delay_ms`. An unknown user
// name costs the same verification (against a hash of a random password), so timing does not
// tell which names exist. Nothing is cached and no password is logged; each password copy is
// wiped once checked.
//
// Runs on: created and destroyed by the main thread (destroy it before the ShardPool it posts
// to); authenticate() on any shard; verification on its own threads. Its one mutex guards the
// queue of waiting checks (docs/threading.md).
class Authenticator {
 public:
  // Checks every user's hash with libsodium and starts the verifier threads.
  static Result<std::unique_ptr<Authenticator>> create(const Options& options, core::Executor& executor);
  ~Authenticator();
  Authenticator(const Authenticator&) = delete;
  Authenticator& operator=(const Authenticator&) = delete;

  using Done = std::function<void(Outcome)>;
  // The outcome if it is known now; otherwise nullopt, and `done` runs later on `shard` (unless
  // the broker stops first). `done` is not called when an outcome is returned.
  std::optional<Outcome> authenticate(Credentials credentials, core::ShardId shard, Done done);

  // Whether any user is configured (else every client is let in).
  bool has_users() const { return !users_.empty(); }
  bool allows_anonymous() const { return anonymous_; }
  std::size_t user_count() const { return users_.size(); }

  // Stops the verifier threads; checks still waiting are dropped (their connections are closing).
  void stop();

 private:
  struct Check {
    std::string username;
    std::string password;
    core::ShardId shard;
    Done done;
  };

  Authenticator(const Options& options, core::Executor& executor);
  void run_verifier();
  Outcome verify(Check& check);
  void reply(core::ShardId shard, Outcome outcome, Done done);

  core::Executor& executor_;
  const bool anonymous_;
  const std::uint32_t failure_delay_ms_;
  const std::size_t max_pending_;
  const std::unordered_map<std::string, std::string> users_;  // name -> hash; read-only once made
  std::string decoy_hash_;  // verified for unknown names; set by each verifier before its first check

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Check> queue_;  // guarded by mutex_
  bool stopping_ = false;    // guarded by mutex_
  std::chrono::steady_clock::time_point last_busy_warning_;  // guarded by mutex_
  std::once_flag decoy_once_;
  std::vector<std::thread> verifiers_;
};

}  // namespace carrier::auth
