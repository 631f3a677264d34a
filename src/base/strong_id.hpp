#pragma once

#include <compare>
#include <cstddef>
#include <functional>

namespace carrier {

// A number that means one kind of thing (ShardId, ConnectionId) and cannot be mixed with another.
template <class T, class Tag>
class StrongId {
 public:
  using value_type = T;
  constexpr StrongId() = default;
  constexpr explicit StrongId(T v) : v_(v) {}
  constexpr T value() const { return v_; }
  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  T v_{};
};

}  // namespace carrier

template <class T, class Tag>
struct std::hash<carrier::StrongId<T, Tag>> {
  std::size_t operator()(const carrier::StrongId<T, Tag>& id) const noexcept {
    return std::hash<T>{}(id.value());
  }
};
