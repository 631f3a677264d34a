#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace carrier::federation {

// The ways back this node knows for replies (sendback): for each temporary reply queue named
// by a request that came in over a link, the request's stack as it was here (the session ids
// of the links it came in on, this node's own last). A reply sent to that queue here travels
// back along the stack, hop by hop. Bounded: at most `capacity` routes, the least recently used
// forgotten first, and a route unused for `idle` forgotten too (its requester is most likely
// gone); whoever holds a forgotten route's queue and consumer closes them.
// Runs on: shard 0 (federation::Node).
class ReplyRoutes {
 public:
  using Clock = std::chrono::steady_clock;

  ReplyRoutes(std::size_t capacity, std::chrono::milliseconds idle)
      : capacity_(capacity == 0 ? 1 : capacity), idle_(idle) {}

  // Records (or refreshes) the way back to reply queue `name`. Returns the names forgotten to
  // make room.
  std::vector<std::string> learn(const std::string& name, std::vector<std::int32_t> stack, Clock::time_point now);
  // The stack for a reply to `name` (and marks the route used), or null.
  const std::vector<std::int32_t>* use(const std::string& name, Clock::time_point now);
  bool contains(const std::string& name) const { return routes_.contains(name); }
  // Forgets the routes idle since before `now - idle`; returns their names.
  std::vector<std::string> expire(Clock::time_point now);

  std::size_t size() const { return routes_.size(); }

 private:
  struct Route {
    std::vector<std::int32_t> stack;
    Clock::time_point last_used;
    std::list<std::string>::iterator place;  // in order_
  };
  void touch(Route& route, Clock::time_point now);

  std::size_t capacity_;
  std::chrono::milliseconds idle_;
  std::unordered_map<std::string, Route> routes_;
  std::list<std::string> order_;  // least recently used first
};

}  // namespace carrier::federation
