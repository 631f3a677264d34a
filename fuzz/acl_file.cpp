// libFuzzer target for the ACL file (auth::Acl::parse) and its matching (AclGrant::allows).
//
// The input is split at the first NUL: before it an ACL file, after it a name to check. Parsing
// must return (never crash); an error must be an invalid_argument naming the file. An accepted
// ACL is granted to a few users and client ids (wildcards and separators among them, which
// `%u`/`%c` must never turn into wider rules) and asked about the name in every kind and right:
// an answer is a yes or no, never a crash, and one that allows `>` allows every name.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "auth/acl.hpp"

namespace {

using namespace carrier;

constexpr std::string_view kSource = "fuzz-acl";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto nul = input.find('\0');
  const std::string_view text = input.substr(0, nul);
  const std::string_view name = nul == std::string_view::npos ? std::string_view("a.b") : input.substr(nul + 1);

  auto acl = auth::Acl::parse(text, kSource);
  if (!acl) {
    FUZZ_CHECK(acl.error().code == Errc::invalid_argument);
    FUZZ_CHECK(acl.error().detail.find(kSource) != std::string::npos);
    return 0;
  }
  const std::pair<std::string_view, std::string_view> who[] = {
      {"", ""}, {"alice", "c1"}, {"*", ">"}, {"a.b", "x/y"}, {"#", "+"}};
  for (const auto& [user, client] : who) {
    const auto grant = acl->grant_for(user, client);
    for (auto kind : {auth::AclKind::queue, auth::AclKind::topic}) {
      for (auto right : {auth::Right::read, auth::Right::write, auth::Right::create, auth::Right::admin}) {
        const bool allowed = grant.allows(right, kind, name);
        // `>` covers every name, and a deny rule that could refuse the name could refuse `>`:
        // allowed `>` means allowed anything.
        if (grant.allows(right, kind, ">")) FUZZ_CHECK(allowed);
      }
    }
  }
  return 0;
}
