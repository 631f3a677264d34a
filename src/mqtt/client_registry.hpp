#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/broker.hpp"
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
// Runs on: its shard.
class ClientRegistry {
 public:
  using Reply = std::function<void(bool existed, std::optional<SessionState> state)>;

  struct Claimant {
    core::ShardId shard;
    std::weak_ptr<Session> session;
    std::uint64_t connection = 0;
    bool clean_start = true;
  };

  ClientRegistry(core::ShardId self, core::Executor& executor, core::Broker& broker);

  void claim(const std::string& client_id, Claimant who, Reply reply);
  void depart(const std::string& client_id, Departure departure);

  std::size_t size() const { return entries_.size(); }

 private:
  struct Waiting {
    Claimant who;
    Reply reply;
  };
  struct Entry {
    std::uint64_t connection = 0;  // the connection holding the id; 0: nobody
    core::ShardId shard;
    std::weak_ptr<Session> session;
    bool taking_over = false;
    std::deque<Waiting> waiting;
    std::optional<SessionState> stored;  // an away persistent session
    core::MessagePtr will;               // its delayed will
    std::uint64_t generation = 0;        // bumped to disarm pending timers
  };

  void serve(const std::string& client_id, Entry& e);
  void take_over(const std::string& client_id, Entry& e);
  void released(const std::string& client_id, std::uint64_t connection, std::optional<Departure> departure);
  void go_away(const std::string& client_id, Entry& e, Departure d);
  void expire(const std::string& client_id, std::uint64_t generation);
  void will_due(const std::string& client_id, std::uint64_t generation);
  void publish(core::MessagePtr will);
  void forget_if_idle(const std::string& client_id);

  core::ShardId self_;
  core::Executor& executor_;
  core::Broker& broker_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace carrier::mqtt
