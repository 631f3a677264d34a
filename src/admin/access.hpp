#pragma once

#include <optional>
#include <string_view>

#include "admin/options.hpp"

namespace carrier::admin {

// Whether a client may use the whole admin API (docs/admin.md, "Who may"), in this order: a user
// named in `[admin] users`; with an ACL file, whoever the ACL gives `admin` on every queue and
// topic (`acl_admin_everywhere`: `queue admin >` and `topic admin >`; nullopt: no ACL file);
// without an ACL and without `[admin] users`, any client from a loopback address. The one place
// that decides it; an admin right on some destinations only is the caller's (purge and move on
// those). `user` is empty for an anonymous client.
bool may_administer(const Options& options, std::string_view user, std::string_view peer_address,
                    std::optional<bool> acl_admin_everywhere = std::nullopt);

// 127.0.0.0/8, ::1 and ::ffff:127.x.y.z, as a transport writes the peer's address.
bool is_loopback(std::string_view address);

}  // namespace carrier::admin
