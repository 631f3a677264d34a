#pragma once

// Reading one value of the TOML document into Config: the dotted key and where it was read
// (Field), typed readers whose errors say what was expected and what came, and tables of keys
// applied in document order. config.cpp holds the tables; this is what they are written with.

#include <toml++/toml.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "config/config.hpp"

namespace carrier::config {

// Text echoed back from the input: escaped and cut short (errors end up in logs and terminals).
std::string escaped(std::string_view text);
std::string printable(std::string_view text);
std::string in_quotes(std::string_view text);
// "a, b or c"
std::string join(std::span<const std::string_view> names, std::string_view last_sep);
bool is_one_of(std::string_view text, std::span<const std::string_view> names);
// The reason `text` is not "HOST:PORT" or "off", or empty when it is one (then `out` is set);
// kNotListen when it is not even shaped like one.
inline constexpr std::string_view kNotListen = "expected HOST:PORT or off";
std::string listen_problem(std::string_view text, net::ListenerOptions& out);
// A TOML value for "got ..." in an error; " in FILE:LINE:COLUMN".
std::string describe(const toml::node& node);
std::string where(std::string_view source_name, const toml::source_region& region);

// One value of the document: its dotted key ("stomp.max_frame_bytes") and where it was read.
struct Field {
  std::string_view source_name;
  std::string key;
  const toml::node& node;

  // "'shards' must be a positive integer, got "x" in carrier.toml:2:10"
  Unexpected must_be(std::string_view what) const {
    return unexpected(Errc::invalid_argument,
                      fmt::format("'{}' must be {}, got {}{}", escaped(key), what, describe(node),
                                  where(source_name, node.source())));
  }
};

Result<std::int64_t> read_integer(const Field& f, std::int64_t min, std::int64_t max);
Result<bool> read_bool(const Field& f);
Result<std::string> read_string(const Field& f);
Result<std::string> read_name(const Field& f, std::span<const std::string_view> names);
Result<double> read_fraction(const Field& f, double min, double max);
Result<std::vector<std::string>> read_string_array(const Field& f, std::string_view what);
Status read_slow_consumer(const Field& f, net::SlowConsumerPolicy& target);
// A `listen` key: "HOST:PORT" or "off" into `out`, which is left alone on a bad value.
Status read_listen(const Field& f, net::ListenerOptions& out);

// Stores a read value into `target`, or passes the error on.
template <class T, class Target>
Status assign(Result<T> read, Target& target) {
  if (!read) return unexpected(std::move(read).error());
  target = static_cast<Target>(*read);
  return ok();
}

using Apply = Status (*)(const Field&, Config&);

struct Key {
  std::string_view name;
  Apply apply;
};


// Applies every entry of `table` (or of the table at `f`) in document order, so the first
// problem reported is the first one in the file; a key not in `keys` is an error.
Status apply_entries(std::string_view source_name, std::string_view prefix, const toml::table& table,
                     std::span<const Key> keys, Config& config);
Status apply_table(const Field& f, Config& config, std::span<const Key> keys);

}  // namespace carrier::config
