#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace carrier {

// A transparent hash for maps keyed by std::string: with std::equal_to<>, find() takes a
// std::string_view, so a lookup builds no std::string.
//   std::unordered_map<std::string, V, StringHash, std::equal_to<>>
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

}  // namespace carrier
