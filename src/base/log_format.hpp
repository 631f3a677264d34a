#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace carrier::logging {

// How every logger writes, present and future: "text" (the default) or "json", one object per
// line with the fields docs/configuration.md lists under [log]. False for another name.
// Apart from logging.hpp so that the many files that log do not depend on it.
bool set_format(std::string_view format);

// One line of the JSON format (without the newline): time, level, logger, msg, and protocol,
// connection, remote and destination when `message` starts with a connection's log prefix
// ("[stomp c42 127.0.0.1:50312 /queue/orders] ..."). Pure: the sink calls it, tests too.
std::string json_line(std::chrono::system_clock::time_point time, std::string_view level, std::string_view logger,
                      std::string_view message);

// Keeps repeated warnings from flooding the log: of the warnings alike (the same text once the
// connection prefix is cut and every number is made '#'), `burst` per `window` get through; the
// next one let through after that says how many were held back. At most `max_kinds` kinds are
// remembered (past that, the oldest window's are forgotten all at once).
// Runs on: any thread, under the caller's lock (the sink's).
class RepeatLimiter {
 public:
  RepeatLimiter(std::size_t burst, std::chrono::steady_clock::duration window, std::size_t max_kinds = 1024)
      : burst_(burst), window_(window), max_kinds_(max_kinds) {}

  // nullopt: hold this one back. Otherwise let it through; the value is how many alike were
  // held back since the last one that was.
  std::optional<std::size_t> admit(std::string_view message, std::chrono::steady_clock::time_point now);

  // The text that warnings alike share.
  static std::string kind_of(std::string_view message);

 private:
  struct Kind {
    std::chrono::steady_clock::time_point window_start;
    std::size_t in_window = 0;
    std::size_t held_back = 0;
  };
  std::size_t burst_;
  std::chrono::steady_clock::duration window_;
  std::size_t max_kinds_;
  std::unordered_map<std::string, Kind> kinds_;
};

}  // namespace carrier::logging
