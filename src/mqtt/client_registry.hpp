#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/broker.hpp"
#include "mqtt/session_record.hpp"
#include "mqtt/session_state.hpp"

namespace carrier::mqtt {

class Session;

// Which connection holds each client id, and the sessions whose clients are away, for the
// client ids one shard owns. A CONNECT claims its id here; a connection already holding it is
// taken over (asked on its own shard to say DISCONNECT 0x8E, detach and hand its state back)
// before the claim is granted; claims for one id are served one at a time, in order. An away
// persistent session keeps its state here until its expiry, when its subscriptions are deleted
// from the core; a delayed will waits here too. No locks: every call runs on the owning shard,
// other shards reach it by posted functions (Service).
// Persistence: the registry writes its sessions' `$mqtt-sessions` records (at CONNECT and at
// departure), one `$mqtt-subscriptions` record per subscription (as each changes) and their
// delayed wills' `$mqtt-wills` records, and deletes them, with the session's `$mqtt-qos2`
// records, when the session ends. At start-up it gets them
// back (restore_*, before the shards run) and start() re-arms expiry and will timers, ending
// the sessions whose expiry passed while the broker was down.
// Runs on: its shard.
class ClientRegistry {
 public:
  using Reply = std::function<void(bool existed, std::optional<SessionState> state)>;

  struct Claimant {
    model::ShardId shard;
    std::weak_ptr<Session> session;
    std::uint64_t connection = 0;
    bool clean_start = true;
    std::uint32_t expiry_seconds = 0;  // the new connection's session expiry; 0: not persistent
    std::uint8_t protocol_level = 4;
    std::string user;  // the authenticated user; empty: anonymous
  };

  ClientRegistry(model::ShardId self, core::Executor& executor, core::Broker& broker);

  // `refused` instead of `reply` when the id belongs to another user (issue 16): the user of
  // the connection holding it or of the away session keeping it, or after a restart the owner
  // of the session's durable subscriptions. Anonymous clients own nothing.
  void claim(const std::string& client_id, Claimant who, Reply reply, std::function<void()> refused);
  void depart(const std::string& client_id, Departure departure);
  // The connected session's subscriptions changed (persistent sessions only are recorded): the
  // records of the changed ones are written, nothing else. `done` once they are durable (at
  // once when there is nothing to record).
  void update(const std::string& client_id, std::uint64_t connection, std::vector<SubscriptionChange> changes,
              std::function<void()> done);

  // --- start-up: records recovered from the store, before the shard runs; then start() on it.
  void restore_session(SessionRecord record, model::MessageId id);
  void restore_subscription(SubscriptionRecord record, model::MessageId id);
  void restore_will(WillRecord record);
  void restore_qos2(const Qos2Record& record, model::MessageId id);
  void restore_bad(std::string queue, model::MessageId id);
  void start();

  std::size_t size() const { return entries_.size(); }

 private:
  struct Waiting {
    Claimant who;
    Reply reply;
    std::function<void()> refused;
  };
  struct Entry {
    std::uint64_t connection = 0;  // the connection holding the id; 0: nobody
    std::string owner;             // the user whose claim was last granted; empty: anonymous
    model::ShardId shard;
    std::weak_ptr<Session> session;
    bool taking_over = false;
    std::deque<Waiting> waiting;
    std::optional<SessionState> stored;  // an away persistent session
    model::MessagePtr will;               // its delayed will
    std::uint64_t generation = 0;        // bumped to disarm pending timers
    // What the store holds for it (nil ids: nothing).
    model::MessageId record;              // its `$mqtt-sessions` record
    model::MessageId will_record;         // its will's `$mqtt-wills` record
    std::unordered_map<std::string, model::MessageId> subscription_records;  // by filter
    std::uint32_t expiry_seconds = 0;    // of the current or last connection
    std::uint8_t protocol_level = 4;
    // Recovered at start-up, until start() has dealt with them.
    std::optional<SessionRecord> recovered;
    std::int64_t will_due_ms = 0;
    std::vector<SessionState::Qos2InFlight> recovered_in, recovered_out;
    std::map<std::string, SubscriptionOptions> recovered_subscriptions;
  };

  void serve(const std::string& client_id, Entry& e);
  bool belongs_to_another(const std::string& client_id, const Entry& e, const std::string& user) const;
  void take_over(const std::string& client_id, Entry& e);
  void released(const std::string& client_id, std::uint64_t connection, std::optional<Departure> departure);
  void go_away(const std::string& client_id, Entry& e, Departure d);
  void expire(const std::string& client_id, std::uint64_t generation);
  void will_due(const std::string& client_id, std::uint64_t generation);
  void publish(model::MessagePtr will);
  void forget_if_idle(const std::string& client_id);
  // Appends to `changes` the replacement of the session record (its subscriptions are records
  // of their own).
  void save(const std::string& client_id, Entry& e, std::int64_t away_since_ms, std::vector<core::StateRecord>& changes);
  // Appends the records of these subscription changes (each replacing the filter's previous one).
  void save_subscriptions(const std::string& client_id, Entry& e, const std::vector<SubscriptionChange>& subs,
                          std::vector<core::StateRecord>& changes);
  // Appends what makes the subscription records say `subscriptions` (what a departing
  // connection held): the records of filters it no longer has go, of those it has without one
  // come. Nothing when they agree, as they do unless a change was lost on its way.
  void reconcile(const std::string& client_id, Entry& e,
                 const std::map<std::string, SubscriptionOptions>& subscriptions,
                 std::vector<core::StateRecord>& changes);
  // Appends the deletion of the session record, its subscription records, the will record and
  // the QoS 2 records in `state`.
  static void drop_records(Entry& e, const SessionState* state, std::vector<core::StateRecord>& changes);
  static void drop_subscription_records(Entry& e, std::vector<core::StateRecord>& changes);
  void write(std::vector<core::StateRecord> changes, std::function<void()> done = nullptr);
  // The session no longer holds its `$share` groups (the last holder's end deletes a group).
  void release_shared(const std::string& client_id, const SessionState* state);
  void arm_timers(const std::string& client_id, Entry& e, std::optional<std::int64_t> deadline_ms);

  model::ShardId self_;
  core::Executor& executor_;
  core::Broker& broker_;
  std::unordered_map<std::string, Entry> entries_;
  std::vector<core::StateRecord> superseded_;  // recovered twice for one client: deleted by start()
};

}  // namespace carrier::mqtt
