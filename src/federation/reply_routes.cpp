#include "federation/reply_routes.hpp"

namespace carrier::federation {

void ReplyRoutes::touch(Route& route, Clock::time_point now) {
  route.last_used = now;
  order_.splice(order_.end(), order_, route.place);
}

std::vector<std::string> ReplyRoutes::learn(const std::string& name, std::vector<std::int32_t> stack,
                                            Clock::time_point now) {
  std::vector<std::string> forgotten;
  if (auto it = routes_.find(name); it != routes_.end()) {
    it->second.stack = std::move(stack);
    touch(it->second, now);
    return forgotten;
  }
  while (routes_.size() >= capacity_) {
    forgotten.push_back(order_.front());
    routes_.erase(order_.front());
    order_.pop_front();
  }
  order_.push_back(name);
  routes_.emplace(name, Route{std::move(stack), now, std::prev(order_.end())});
  return forgotten;
}

const std::vector<std::int32_t>* ReplyRoutes::use(const std::string& name, Clock::time_point now) {
  auto it = routes_.find(name);
  if (it == routes_.end()) return nullptr;
  touch(it->second, now);
  return &it->second.stack;
}

std::vector<std::string> ReplyRoutes::expire(Clock::time_point now) {
  std::vector<std::string> forgotten;
  while (!order_.empty()) {
    auto it = routes_.find(order_.front());
    if (now - it->second.last_used < idle_) break;
    forgotten.push_back(order_.front());
    routes_.erase(it);
    order_.pop_front();
  }
  return forgotten;
}

}  // namespace carrier::federation
