#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace carrier::relay {

// What relay peers have created: pipes and groups, found by name or id with `*` wildcards
// (seed 000's search). Kept across restarts as `$relay-directory` records (relay_record.hpp).
// Runs on: shard 0's Gateway (RelayService posts creates and searches there).
class Directory {
 public:
  struct Entry {
    std::string type;  // "PIPE" or "GROUP"
    std::string name;
    std::string id;
    std::string arg;  // a pipe's JxtaUnicast or JxtaPropagate
    bool operator==(const Entry&) const = default;
  };

  explicit Directory(std::size_t max_entries) : max_entries_(max_entries) {}

  // Adds the entry (true) or finds it again (false: same id). Errc::limit_exceeded when full.
  Result<bool> add(Entry entry);
  // At most `limit` entries of `type` whose `attr` ("name" or "id") matches `pattern`, in id order.
  std::vector<Entry> search(std::string_view type, std::string_view attr, std::string_view pattern,
                            std::size_t limit) const;
  std::size_t size() const { return entries_.size(); }

 private:
  std::size_t max_entries_;
  std::map<std::string, Entry, std::less<>> entries_;  // by id
};

// `*` matches any run of characters (none included); everything else matches itself.
bool wildcard_match(std::string_view pattern, std::string_view text);

}  // namespace carrier::relay
