#pragma once

#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "base/assert.hpp"
#include "base/error.hpp"

namespace carrier {

// std::expected's shape (has_value, value, error, operator*, ->) for a toolchain that lacks it:
// g++ 12 ships <expected> only under -std=c++2b and clang 14 not at all. When both have it,
// one alias replaces this class.
struct Unexpected {
  Error error;
};

inline Unexpected unexpected(Error e) { return Unexpected{std::move(e)}; }
inline Unexpected unexpected(Errc code, std::string detail = {}) {
  return Unexpected{Error{code, std::move(detail)}};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Unexpected u) : v_(std::in_place_index<1>, std::move(u.error)) {}
  template <class U, class = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                              !std::is_same_v<std::decay_t<U>, Result> &&
                                              !std::is_same_v<std::decay_t<U>, Unexpected>>>
  Result(U&& value) : v_(std::in_place_index<0>, T(std::forward<U>(value))) {}

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { CARRIER_ASSERT(has_value(), "value() on an error: {}", error_text()); return std::get<0>(v_); }
  const T& value() const& { CARRIER_ASSERT(has_value(), "value() on an error: {}", error_text()); return std::get<0>(v_); }
  T&& value() && { CARRIER_ASSERT(has_value(), "value() on an error: {}", error_text()); return std::move(std::get<0>(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { CARRIER_ASSERT(!has_value(), "error() on a value"); return std::get<1>(v_); }
  Error&& error() && { CARRIER_ASSERT(!has_value(), "error() on a value"); return std::move(std::get<1>(v_)); }

  template <class U>
  T value_or(U&& fallback) const& { return has_value() ? std::get<0>(v_) : T(std::forward<U>(fallback)); }

 private:
  std::string error_text() const { return has_value() ? std::string() : std::get<1>(v_).to_string(); }
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Unexpected u) : error_(std::move(u.error)) {}

  bool has_value() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const { CARRIER_ASSERT(has_value(), "value() on an error: {}", error_->to_string()); }
  const Error& error() const& { CARRIER_ASSERT(!has_value(), "error() on a value"); return *error_; }

 private:
  std::optional<Error> error_;
};

using Status = Result<void>;

inline Status ok() { return Status(); }

}  // namespace carrier
