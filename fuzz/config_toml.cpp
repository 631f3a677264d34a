// libFuzzer target for the configuration file (config::parse_toml) and listen addresses
// (config::parse_listen, which --stomp and stomp.listen share).
//
// The whole input is a carrier.toml. Whatever it holds, parse_toml must return (never throw or
// crash), an error must be an invalid_argument that names the file, and an accepted document must
// hold only values the Options allow. The same bytes are then read as a listen address.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "auth/user_syntax.hpp"
#include "config/config.hpp"

namespace {

using namespace carrier;

constexpr std::string_view kSource = "fuzz.toml";

bool is_one_of(std::string_view text, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), text) != names.end();
}

void check_accepted(const config::Config& c) {
  FUZZ_CHECK(is_one_of(c.log_level, {"trace", "debug", "info", "warn", "error", "off"}));
  FUZZ_CHECK(is_one_of(c.store.kind, {"log", "memory"}));
  FUZZ_CHECK(!c.store.data_dir.empty());
  FUZZ_CHECK(c.store.segment_bytes >= 4096);
  FUZZ_CHECK(c.stomp.max_frame_bytes >= 1024);
  FUZZ_CHECK(c.stomp.max_headers >= 1);
  FUZZ_CHECK(c.core.prefetch_auto >= 1);
  FUZZ_CHECK(c.core.prefetch_client >= 1);
  for (const auto& queue : c.core.queues) FUZZ_CHECK(!queue.empty());
  FUZZ_CHECK(!c.stomp_listener.enabled || !c.stomp_listener.host.empty());
  for (const auto& user : c.auth.users) {
    FUZZ_CHECK(auth::user_name_problem(user.name).empty());
    FUZZ_CHECK(auth::password_hash_problem(user.password_hash).empty());
  }
  FUZZ_CHECK(c.auth.verify_threads >= 1 && c.auth.max_pending >= 1);
}

void check_error(const Error& e, std::string_view source) {
  FUZZ_CHECK(e.code == Errc::invalid_argument);
  FUZZ_CHECK(e.detail.find(source) != std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  auto parsed = config::parse_toml(text, kSource);
  if (parsed) {
    check_accepted(*parsed);
  } else {
    check_error(parsed.error(), kSource);
  }

  const net::ListenerOptions before{true, "192.0.2.1", 7};
  net::ListenerOptions listener = before;
  auto status = config::parse_listen(text, "--stomp", listener);
  if (status) {
    FUZZ_CHECK(listener.enabled || text == "off");
    if (listener.enabled) {
      FUZZ_CHECK(!listener.host.empty());
      FUZZ_CHECK(listener.host.find('\0') == std::string::npos);
      // Whatever was accepted is spelled back the same way, apart from localhost.
      const std::string again = listener.host.find(':') == std::string::npos
                                    ? listener.host + ":" + std::to_string(listener.port)
                                    : "[" + listener.host + "]:" + std::to_string(listener.port);
      net::ListenerOptions reparsed;
      FUZZ_CHECK(config::parse_listen(again, "--stomp", reparsed).has_value());
      FUZZ_CHECK(reparsed.host == listener.host && reparsed.port == listener.port);
    }
  } else {
    FUZZ_CHECK(status.error().code == Errc::invalid_argument);
    FUZZ_CHECK(status.error().detail.starts_with("--stomp: "));
    FUZZ_CHECK(listener.enabled == before.enabled && listener.host == before.host &&
               listener.port == before.port);
  }
  return 0;
}
