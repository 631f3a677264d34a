#pragma once

#include <functional>
#include <memory>
#include <utility>

namespace carrier::session {

// A completion (a broker confirmation, an authenticator's answer, a timer) bound to a session
// that may be gone when it runs: it calls `f` only if `self` still exists, with the session as a
// shared_ptr that holds it for the call. `f` is a member function (`&Session::on_sent`) or a
// callable taking `(const std::shared_ptr<S>& self, args...)`.
// `self` derives from std::enable_shared_from_this<S> and is already owned by a shared_ptr.
template <class S, class F>
auto bind_weak(S* self, F f) {
  return [weak = self->weak_from_this(), f = std::move(f)](auto&&... args) mutable {
    if (auto s = weak.lock()) std::invoke(f, s, std::forward<decltype(args)>(args)...);
  };
}

}  // namespace carrier::session
