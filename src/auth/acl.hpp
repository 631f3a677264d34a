#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"

namespace carrier::auth {

// What a rule grants or denies. Bits, so a rule can carry several (`read,create`).
enum class Right : std::uint8_t {
  read = 1,    // subscribe, receive, browse
  write = 2,   // send, publish (retained messages and wills too)
  create = 4,  // durable subscriptions
  admin = 8,   // the admin API, purge
};
using Rights = std::uint8_t;
inline constexpr Rights kAllRights = 15;
constexpr Rights bit(Right r) { return static_cast<Rights>(r); }

// Queues and topics are separate name spaces, as in the core (`/queue/a` is not `/topic/a`).
enum class AclKind : std::uint8_t { queue, topic };

// One rule as parsed: a pattern over core names (levels separated by `.`, `*` one level, `>`
// the rest; a topic pattern written MQTT's way, `a/+/#`, is stored converted). Levels may hold
// `%u` (user name) and `%c` (client id), substituted per connection by AclGrant.
struct AclRule {
  AclKind kind = AclKind::topic;
  bool deny = false;
  Rights rights = 0;
  std::vector<std::string> levels;
  bool mqtt_form = false;  // substituted values are escaped as MQTT topic levels are
  std::size_t line = 0;
};

class AclGrant;

// An ACL file (`[auth] acl_file`) in Mosquitto's syntax, extended with groups, queues and the
// create/admin rights; docs/auth.md has the grammar. Pure (no I/O, no clocks): parsed by
// config/ and serve, fuzzed by fuzz/acl_file.cpp. Immutable once parsed, so shards share one.
class Acl {
 public:
  // A bad line is an Errc::invalid_argument naming SOURCE:LINE and the problem.
  static Result<Acl> parse(std::string_view text, std::string_view source_name);

  // The rules that apply to a client: its user's (or, with no user, the anonymous rules written
  // before the first `user`/`group` line), its groups', and every `pattern` line, with `%u` and
  // `%c` substituted.
  AclGrant grant_for(std::string_view user, std::string_view client_id) const;

  std::size_t rule_count() const;

 private:
  std::vector<AclRule> anonymous_;
  std::vector<AclRule> patterns_;
  std::unordered_map<std::string, std::vector<AclRule>> users_;
  std::unordered_map<std::string, std::vector<AclRule>> groups_;
  std::unordered_map<std::string, std::vector<std::string>> groups_of_;  // user -> groups
};

// The substituted rules of one connection. allows() is O(its rules x levels).
class AclGrant {
 public:
  // `name` is a core destination name, or a filter (`*`, `>`) for a subscription. Deny beats
  // allow: refused when a deny rule with `right` could match a name the filter covers; allowed
  // when an allow rule with `right` covers all of them; refused otherwise.
  bool allows(Right right, AclKind kind, std::string_view name) const;
  bool empty() const { return rules_.empty(); }

 private:
  friend class Acl;
  struct Compiled {
    AclKind kind;
    bool deny;
    Rights rights;
    std::vector<std::string> levels;
  };
  std::vector<Compiled> rules_;
};

// The largest ACL file read: a mistake (a log file named as ACL file) fails clearly.
inline constexpr std::size_t kMaxAclFileBytes = 16u << 20;

// Reads and parses `path`; errors name the path.
Result<Acl> read_acl_file(const std::filesystem::path& path);

}  // namespace carrier::auth
