#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/string_hash.hpp"

namespace carrier::store::log {

// Queue keys interned to 32-bit indexes, so a table with an entry per message holds 4 bytes for
// its queue instead of a std::string. Names are reference-counted by their users (retain /
// release): a name nobody holds is dropped and its index reused, so a broker that makes and
// drops temporary queues all day keeps only the names still in use.
// Runs on: whoever owns it; not thread-safe.
class QueueNameTable {
 public:
  // The index of `name`, added (with no references) if new.
  std::uint32_t intern(std::string_view name);
  std::optional<std::uint32_t> find(std::string_view name) const;
  const std::string& name(std::uint32_t index) const { return *slots_[index].name; }

  void retain(std::uint32_t index) { ++slots_[index].refs; }
  // Drops the name once nothing holds it.
  void release(std::uint32_t index);

  std::size_t size() const { return by_name_.size(); }
  void clear();

 private:
  struct Slot {
    const std::string* name = nullptr;  // the key in by_name_ (node-based: stable)
    std::uint32_t refs = 0;
  };

  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> by_name_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;
};

}  // namespace carrier::store::log
