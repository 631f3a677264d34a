#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "auth/access_control.hpp"
#include "base/string_hash.hpp"
#include "model/message.hpp"

namespace carrier::auth {

// One connection's view of the ACL: its user's rules with `%u`/`%c` substituted (built on the
// first check, rebuilt after a reload) and the answers already given, so a producer sending to
// the same destination again costs one hash lookup. Without an ACL file a check is one load and
// one branch.
//
// Runs on: the connection's shard.
class Permissions {
 public:
  Permissions(const AccessControl& access, model::ShardId shard) : access_(&access), shard_(shard) {}

  // Who the connection is, once logged in (user empty: anonymous).
  void set_identity(std::string user, std::string client_id);

  bool allows(Right right, AclKind kind, std::string_view name);
  // A queue or topic as the core names it. A temporary queue is allowed: it belongs to the
  // connection that made it (others may only send to it, with the reply-to they were given).
  bool allows(Right right, const model::Destination& dest) {
    if (dest.kind == model::DestinationKind::temp_queue) return true;
    return allows(right, dest.kind == model::DestinationKind::queue ? AclKind::queue : AclKind::topic, dest.name);
  }

  // Answers remembered per kind; past this the cache starts again (a client walking many names
  // must not grow it without bound).
  static constexpr std::size_t kMaxCachedNames = 1024;

 private:
  struct Known {
    Rights asked = 0;
    Rights allowed = 0;
  };
  using Cache = std::unordered_map<std::string, Known, StringHash, std::equal_to<>>;

  const AccessControl* access_;
  model::ShardId shard_;
  std::string user_;
  std::string client_id_;
  std::uint64_t generation_ = 0;
  std::optional<AclGrant> grant_;
  Cache cache_[2];  // by AclKind
};

// What a refusal says: `user "alice" may not subscribe to /queue/bob.inbox` (names escaped and
// cut short; an empty user is "an anonymous client").
std::string access_denied_detail(std::string_view user, std::string_view action, std::string_view destination);

}  // namespace carrier::auth
