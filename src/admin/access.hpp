#pragma once

#include <string_view>

#include "admin/options.hpp"

namespace carrier::admin {

// Whether a client may use the admin API: with `[admin] users` set, an authenticated user named
// there; without, any client connecting from a loopback address. The one place that decides it,
// so the ACL (issue 16) can replace it. `user` is empty for an anonymous client.
bool may_administer(const Options& options, std::string_view user, std::string_view peer_address);

// 127.0.0.0/8, ::1 and ::ffff:127.x.y.z, as a transport writes the peer's address.
bool is_loopback(std::string_view address);

}  // namespace carrier::admin
