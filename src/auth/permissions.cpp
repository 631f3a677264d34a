#include "auth/permissions.hpp"

#include <fmt/format.h>

#include "auth/user_syntax.hpp"

namespace carrier::auth {

void Permissions::set_identity(std::string user, std::string client_id) {
  user_ = std::move(user);
  client_id_ = std::move(client_id);
  grant_.reset();
  for (auto& c : cache_) c.clear();
}

bool Permissions::allows(Right right, AclKind kind, std::string_view name) {
  const auto& slot = access_->slot(shard_);
  if (!slot.acl) return true;
  if (!grant_ || generation_ != slot.generation) {
    grant_ = slot.acl->grant_for(user_, client_id_);
    generation_ = slot.generation;
    for (auto& c : cache_) c.clear();
  }
  auto& cache = cache_[static_cast<int>(kind)];
  const Rights wanted = bit(right);
  auto it = cache.find(name);
  if (it == cache.end()) {
    if (cache.size() >= kMaxCachedNames) cache.clear();
    it = cache.emplace(std::string(name), Known{}).first;
  }
  if ((it->second.asked & wanted) == 0) {
    it->second.asked |= wanted;
    if (grant_->allows(right, kind, name)) it->second.allowed |= wanted;
  }
  return (it->second.allowed & wanted) != 0;
}

std::string access_denied_detail(std::string_view user, std::string_view action, std::string_view destination) {
  const std::string who = user.empty() ? std::string("an anonymous client") : "user \"" + printable_name(user) + "\"";
  return fmt::format("{} may not {} {}", who, action, printable_name(destination));
}

}  // namespace carrier::auth
