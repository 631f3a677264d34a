#include "admin/access.hpp"

#include <algorithm>

namespace carrier::admin {

bool is_loopback(std::string_view address) {
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  if (address.starts_with("::ffff:")) address.remove_prefix(7);
  return address == "::1" || address.starts_with("127.");
}

bool may_administer(const Options& options, std::string_view user, std::string_view peer_address,
                    std::optional<bool> acl_admin_everywhere) {
  if (!user.empty() && std::find(options.users.begin(), options.users.end(), user) != options.users.end()) return true;
  // With an ACL, its `admin` rules decide, as they do for every other right: loopback is no pass.
  if (acl_admin_everywhere) return *acl_admin_everywhere;
  return options.users.empty() && is_loopback(peer_address);
}

}  // namespace carrier::admin
