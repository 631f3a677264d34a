#include "auth/acl.hpp"

#include <fmt/format.h>

#include <optional>

#include "auth/bounded_file.hpp"
#include "auth/user_syntax.hpp"

namespace carrier::auth {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The first word of `rest`, removed from it.
std::string_view next_word(std::string_view& rest) {
  rest = trim(rest);
  const auto end = rest.find_first_of(" \t");
  auto word = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : trim(rest.substr(end));
  return word;
}

std::optional<Rights> parse_rights(std::string_view word) {
  Rights rights = 0;
  while (!word.empty()) {
    const auto comma = word.find(',');
    const auto one = word.substr(0, comma);
    if (one == "read") {
      rights |= bit(Right::read);
    } else if (one == "write") {
      rights |= bit(Right::write);
    } else if (one == "readwrite") {
      rights |= bit(Right::read) | bit(Right::write);
    } else if (one == "create") {
      rights |= bit(Right::create);
    } else if (one == "admin") {
      rights |= bit(Right::admin);
    } else if (one == "all") {
      rights |= kAllRights;
    } else {
      return std::nullopt;
    }
    if (comma == std::string_view::npos) break;
    word.remove_prefix(comma + 1);
  }
  if (rights == 0) return std::nullopt;
  return rights;
}

std::vector<std::string> split_levels(std::string_view name, char separator) {
  std::vector<std::string> levels;
  while (true) {
    const auto at = name.find(separator);
    levels.emplace_back(name.substr(0, at));
    if (at == std::string_view::npos) break;
    name.remove_prefix(at + 1);
  }
  return levels;
}

// One MQTT topic level as the core spells it (mqtt/topic_map.hpp: `.` <-> `/`, `%` `*` `>`
// percent-encoded, empty -> `%`), keeping `%u`/`%c` as the placeholders they are.
std::string mqtt_level_to_core(std::string_view level) {
  if (level.empty()) return "%";
  std::string out;
  for (std::size_t i = 0; i < level.size(); ++i) {
    const char c = level[i];
    if (c == '%' && i + 1 < level.size() && (level[i + 1] == 'u' || level[i + 1] == 'c')) {
      out += level.substr(i, 2);
      ++i;
    } else if (c == '.') {
      out += '/';
    } else if (c == '%') {
      out += "%25";
    } else if (c == '*') {
      out += "%2A";
    } else if (c == '>') {
      out += "%3E";
    } else {
      out += c;
    }
  }
  return out;
}

// A substituted value as one literal level; nullopt when it cannot be one (empty, or it holds a
// separator or a wildcard: `%u` must never widen a rule).
std::optional<std::string> substitute(const std::string& level, std::string_view user, std::string_view client_id,
                                      bool mqtt_form) {
  if (level.find('%') == std::string::npos) return level;
  std::string out;
  for (std::size_t i = 0; i < level.size(); ++i) {
    if (level[i] == '%' && i + 1 < level.size() && (level[i + 1] == 'u' || level[i + 1] == 'c')) {
      const std::string_view value = level[i + 1] == 'u' ? user : client_id;
      if (value.empty()) return std::nullopt;
      if (mqtt_form) {
        if (value.find_first_of("/+#") != std::string_view::npos) return std::nullopt;
        out += mqtt_level_to_core(value);
      } else {
        if (value.find_first_of(".*>") != std::string_view::npos) return std::nullopt;
        out += value;
      }
      ++i;
    } else {
      out += level[i];
    }
  }
  return out;
}

// Whether every name `filter` matches is matched by `pattern` (core `*` one level, `>` one or more).
bool covers(const std::vector<std::string>& pattern, const std::vector<std::string_view>& filter) {
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (i >= filter.size()) return false;
    if (pattern[i] == ">") return true;
    if (filter[i] == ">") return false;
    if (pattern[i] == "*") continue;
    if (filter[i] == "*" || pattern[i] != filter[i]) return false;
  }
  return pattern.size() == filter.size();
}

// Whether some name matches both.
bool intersects(const std::vector<std::string>& pattern, const std::vector<std::string_view>& filter) {
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (i >= filter.size()) return false;
    if (pattern[i] == ">" || filter[i] == ">") return true;
    if (pattern[i] == "*" || filter[i] == "*") continue;
    if (pattern[i] != filter[i]) return false;
  }
  return pattern.size() == filter.size();
}

}  // namespace

Result<Acl> Acl::parse(std::string_view text, std::string_view source_name) {
  Acl acl;
  enum class Block { anonymous, user, group } block = Block::anonymous;
  std::string block_name;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const auto end = text.find('\n');
    std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty() || line.front() == '#') continue;
    auto fail = [&](std::string_view problem) {
      return unexpected(Errc::invalid_argument, fmt::format("{} in {}:{}", problem, source_name, line_number));
    };

    std::string_view rest = line;
    const auto keyword = next_word(rest);
    if (keyword == "user" || keyword == "group") {
      if (auto problem = user_name_problem(rest); !problem.empty()) return fail(problem);
      block = keyword == "user" ? Block::user : Block::group;
      block_name = std::string(rest);
      if (block == Block::group) acl.groups_.try_emplace(block_name);
      continue;
    }
    if (keyword == "member") {
      if (block != Block::group) return fail("`member` outside a `group` block");
      if (auto problem = user_name_problem(rest); !problem.empty()) return fail(problem);
      acl.groups_of_[std::string(rest)].push_back(block_name);
      continue;
    }
    const bool is_pattern = keyword == "pattern";
    if (keyword != "topic" && keyword != "queue" && !is_pattern) {
      return fail(fmt::format("unknown keyword \"{}\" (expected user, group, member, topic, queue or pattern)",
                              printable_name(keyword)));
    }
    AclRule rule;
    rule.line = line_number;
    rule.kind = keyword == "queue" ? AclKind::queue : AclKind::topic;
    if (is_pattern) {
      std::string_view peek = rest;
      const auto kind = next_word(peek);
      if ((kind == "queue" || kind == "topic") && !peek.empty()) {
        rule.kind = kind == "queue" ? AclKind::queue : AclKind::topic;
        rest = peek;
      }
    }
    // ACCESS: absent (readwrite, as Mosquitto), a list of rights, or `deny` with an optional list.
    rule.rights = bit(Right::read) | bit(Right::write);
    {
      std::string_view peek = rest;
      const auto word = next_word(peek);
      if (word == "deny") {
        rule.deny = true;
        rule.rights = kAllRights;
        rest = peek;
        std::string_view after = rest;
        if (auto rights = parse_rights(next_word(after)); rights && !after.empty()) {
          rule.rights = *rights;
          rest = after;
        }
      } else if (auto rights = parse_rights(word); rights && !peek.empty()) {
        rule.rights = *rights;
        rest = peek;
      }
    }
    if (rest.empty()) return fail("a rule needs a pattern");
    if (rest.size() > 65535) return fail("the pattern is longer than 65535 bytes");
    rule.mqtt_form = rule.kind == AclKind::topic && rest.find_first_of("/+#") != std::string_view::npos;
    std::vector<AclRule> parent;  // MQTT `a/#` also matches `a`
    if (rule.mqtt_form) {
      auto levels = split_levels(rest, '/');
      for (std::size_t i = 0; i < levels.size(); ++i) {
        auto& level = levels[i];
        if (level == "#") {
          if (i + 1 != levels.size()) return fail("`#` must be the last level of an MQTT pattern");
          if (i > 0) {
            AclRule p = rule;
            p.levels = rule.levels;
            parent.push_back(std::move(p));
          }
          rule.levels.push_back(">");
        } else if (level == "+") {
          rule.levels.push_back("*");
        } else if (level.find_first_of("+#") != std::string::npos) {
          return fail("`+` and `#` must fill a whole level of an MQTT pattern");
        } else {
          rule.levels.push_back(mqtt_level_to_core(level));
        }
      }
    } else {
      rule.levels = split_levels(rest, '.');
      for (std::size_t i = 0; i < rule.levels.size(); ++i) {
        if (rule.levels[i].empty()) return fail("a pattern has an empty level");
        if (rule.levels[i] == ">" && i + 1 != rule.levels.size()) return fail("`>` must be the last level of a pattern");
      }
    }
    std::vector<AclRule>* into = &acl.anonymous_;
    if (is_pattern) {
      into = &acl.patterns_;
    } else if (block == Block::user) {
      into = &acl.users_[block_name];
    } else if (block == Block::group) {
      into = &acl.groups_[block_name];
    }
    for (auto& p : parent) into->push_back(std::move(p));
    into->push_back(std::move(rule));
  }
  return acl;
}

AclGrant Acl::grant_for(std::string_view user, std::string_view client_id) const {
  AclGrant grant;
  auto add = [&](const std::vector<AclRule>& rules) {
    for (const auto& rule : rules) {
      AclGrant::Compiled c{rule.kind, rule.deny, rule.rights, {}};
      bool usable = true;
      for (const auto& level : rule.levels) {
        auto value = substitute(level, user, client_id, rule.mqtt_form);
        if (!value) {
          usable = false;
          break;
        }
        c.levels.push_back(std::move(*value));
      }
      if (!usable) {
        // An allow rule that cannot name this client grants nothing; a deny rule denies all.
        if (!rule.deny) continue;
        c.levels = {">"};
      }
      grant.rules_.push_back(std::move(c));
    }
  };
  if (user.empty()) {
    add(anonymous_);
  } else {
    const std::string name(user);
    if (auto it = users_.find(name); it != users_.end()) add(it->second);
    if (auto it = groups_of_.find(name); it != groups_of_.end()) {
      for (const auto& g : it->second) add(groups_.at(g));
    }
  }
  add(patterns_);
  return grant;
}

std::size_t Acl::rule_count() const {
  std::size_t n = anonymous_.size() + patterns_.size();
  for (const auto& [name, rules] : users_) n += rules.size();
  for (const auto& [name, rules] : groups_) n += rules.size();
  return n;
}

bool AclGrant::allows(Right right, AclKind kind, std::string_view name) const {
  std::vector<std::string_view> filter;
  while (true) {
    const auto at = name.find('.');
    filter.push_back(name.substr(0, at));
    if (at == std::string_view::npos) break;
    name.remove_prefix(at + 1);
  }
  const Rights wanted = bit(right);
  bool allowed = false;
  for (const auto& rule : rules_) {
    if (rule.kind != kind || (rule.rights & wanted) == 0) continue;
    if (rule.deny) {
      if (intersects(rule.levels, filter)) return false;
    } else if (!allowed && covers(rule.levels, filter)) {
      allowed = true;
    }
  }
  return allowed;
}

Result<Acl> read_acl_file(const std::filesystem::path& path) {
  auto text = read_bounded_file(path, "ACL file", kMaxAclFileBytes);
  if (!text) return unexpected(text.error());
  return Acl::parse(*text, path.string());
}

}  // namespace carrier::auth
