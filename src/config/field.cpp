#include "config/field.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <utility>

namespace carrier::config {

namespace {

// Anything echoed back from the input is shown escaped and cut short: error details end up in
// logs and terminals, and the fuzz target feeds arbitrary bytes.
constexpr std::size_t kMaxEcho = 64;

}  // namespace

std::string escaped(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == kMaxEcho) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through: toml++ has validated it
        }
    }
  }
  return out;
}

// For text that is already readable (toml++'s messages): only control bytes are escaped.
std::string printable(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

// Appended piece by piece: g++ 12 at -O3 misreads `"\"" + std::string` as an overlapping
// memcpy (GCC bug 105329, -Werror=restrict), which broke the Release build.
std::string in_quotes(std::string_view text) {
  std::string out = escaped(text);
  out.insert(out.begin(), '"');
  out.push_back('"');
  return out;
}

std::string join(std::span<const std::string_view> names, std::string_view last_sep) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? last_sep : ", ";
    out += names[i];
  }
  return out;
}

bool is_one_of(std::string_view text, std::span<const std::string_view> names) {
  return std::find(names.begin(), names.end(), text) != names.end();
}

// ---- listen addresses ------------------------------------------------------------------------


// The reason `text` is not "HOST:PORT" or "off", or empty when it is one (then `out` is set).
// ListenerOptions::host is always a numeric address ("localhost" becomes 127.0.0.1), so the
// listener can bind it without a resolver.
std::string listen_problem(std::string_view text, net::ListenerOptions& out) {
  if (text == "off") {
    out.enabled = false;
    return {};
  }
  // inet_pton reads a C string: a NUL would hide whatever follows it.
  if (text.find('\0') != std::string_view::npos) return std::string(kNotListen);
  std::string host;
  std::string_view port_text;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return "an IPv6 host is written [ADDRESS]:PORT";
    }
    host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
    in6_addr addr6{};
    if (inet_pton(AF_INET6, host.c_str(), &addr6) != 1) return "not an IPv6 address in brackets";
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::string(kNotListen);
    host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string::npos) return "an IPv6 host goes in brackets, as in [::1]:61613";
    if (host.empty()) return std::string(kNotListen);
    if (host == "localhost") {
      host = "127.0.0.1";
    } else {
      in_addr addr4{};
      if (inet_pton(AF_INET, host.c_str(), &addr4) != 1) {
        return "the host must be an IPv4 address, localhost or a bracketed IPv6 address";
      }
    }
  }
  std::uint32_t port = 0;
  const auto* end = port_text.data() + port_text.size();
  const auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
  if (port_text.empty() || ec != std::errc() || ptr != end || port > 65535) {
    return "the port must be 1 to 65535, or 0 for any free port";
  }
  out.enabled = true;
  out.host = std::move(host);
  out.port = static_cast<std::uint16_t>(port);
  return {};
}

// ---- the TOML document -------------------------------------------------------------------------

// Renders a TOML value for "got ..." in an error.
std::string describe(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return in_quotes(node.as_string()->get());
    case toml::node_type::integer: return std::to_string(node.as_integer()->get());
    case toml::node_type::boolean: return node.as_boolean()->get() ? "true" : "false";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::none: return "nothing";
    case toml::node_type::floating_point:
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time: {
      std::ostringstream out;
      node.visit([&out](const auto& value) { out << value; });
      return escaped(out.str());
    }
  }
  return "a value";
}

std::string where(std::string_view source_name, const toml::source_region& region) {
  if (region.begin.line == 0) return fmt::format(" in {}", source_name);
  return fmt::format(" in {}:{}:{}", source_name, region.begin.line, region.begin.column);
}


// `max` is the largest value the Options field holds; past it the message says so.
Result<std::int64_t> read_integer(const Field& f, std::int64_t min, std::int64_t max) {
  const auto* value = f.node.as_integer();
  if (value == nullptr || value->get() < min) {
    if (min == 0) return f.must_be("a non-negative integer");
    if (min == 1) return f.must_be("a positive integer");
    return f.must_be(fmt::format("an integer >= {}", min));
  }
  if (value->get() > max) return f.must_be(fmt::format("at most {}", max));
  return value->get();
}

Result<bool> read_bool(const Field& f) {
  const auto* value = f.node.as_boolean();
  if (value == nullptr) return f.must_be("true or false");
  return value->get();
}

Result<std::string> read_string(const Field& f) {
  const auto* value = f.node.as_string();
  if (value == nullptr || value->get().empty()) return f.must_be("a non-empty string");
  return value->get();
}

Result<std::string> read_name(const Field& f, std::span<const std::string_view> names) {
  const auto* value = f.node.as_string();
  if (value == nullptr || !is_one_of(value->get(), names)) {
    return f.must_be(names.size() > 2 ? "one of " + join(names, ", ") : join(names, " or "));
  }
  return value->get();
}


Status read_slow_consumer(const Field& f, net::SlowConsumerPolicy& target) {
  static constexpr std::string_view kPolicies[] = {"drop", "disconnect"};
  auto name = read_name(f, kPolicies);
  if (!name) return unexpected(std::move(name).error());
  target = *name == "drop" ? net::SlowConsumerPolicy::drop : net::SlowConsumerPolicy::disconnect;
  return ok();
}


// A `listen` key: "HOST:PORT" or "off" into `out`, which is left alone on a bad value.
Status read_listen(const Field& f, net::ListenerOptions& out) {
  const auto* text = f.node.as_string();
  if (text == nullptr) return f.must_be("\"HOST:PORT\" or \"off\"");
  net::ListenerOptions parsed = out;
  if (auto problem = listen_problem(text->get(), parsed); !problem.empty()) {
    if (problem == kNotListen) return f.must_be("\"HOST:PORT\" or \"off\"");
    return f.must_be("\"HOST:PORT\" or \"off\" (" + problem + ")");
  }
  out = std::move(parsed);
  return ok();
}

// An array of strings; `what` says what they are in the error.
Result<std::vector<std::string>> read_string_array(const Field& f, std::string_view what) {
  const auto* array = f.node.as_array();
  if (array == nullptr) return f.must_be(fmt::format("an array of {}", what));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < array->size(); ++i) {
    auto text = read_string(Field{f.source_name, fmt::format("{}[{}]", f.key, i), *array->get(i)});
    if (!text) return unexpected(std::move(text).error());
    out.push_back(std::move(*text));
  }
  return out;
}

Result<double> read_fraction(const Field& f, double min, double max) {
  double v = 0;
  if (const auto* d = f.node.as_floating_point()) {
    v = d->get();
  } else if (const auto* i = f.node.as_integer()) {
    v = static_cast<double>(i->get());
  } else {
    return f.must_be(fmt::format("a number from {} to {}", min, max));
  }
  if (!(v >= min && v <= max)) return f.must_be(fmt::format("a number from {} to {}", min, max));
  return v;
}

// Applies every entry of the table at `f` in document order, so the first problem reported is
// the first one in the file.
Status apply_entries(std::string_view source_name, std::string_view prefix, const toml::table& table,
                     std::span<const Key> keys, Config& config) {
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (auto&& [key, node] : table) entries.emplace_back(&key, &node);
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& pa = a.first->source().begin;
    const auto& pb = b.first->source().begin;
    return std::pair(pa.line, pa.column) < std::pair(pb.line, pb.column);
  });
  for (const auto& entry : entries) {  // no structured binding: clang 14 cannot capture one
    const toml::key* key = entry.first;
    const toml::node* node = entry.second;
    std::string dotted = prefix.empty() ? std::string(key->str()) : fmt::format("{}.{}", prefix, key->str());
    const auto spec = std::find_if(keys.begin(), keys.end(),
                                   [&](const Key& k) { return k.name == key->str(); });
    if (spec == keys.end()) {
      return unexpected(Errc::invalid_argument, fmt::format("unknown key '{}'{}", escaped(dotted),
                                                            where(source_name, key->source())));
    }
    if (auto applied = spec->apply(Field{source_name, std::move(dotted), *node}, config); !applied) {
      return applied;
    }
  }
  return ok();
}

Status apply_table(const Field& f, Config& config, std::span<const Key> keys) {
  const auto* table = f.node.as_table();
  if (table == nullptr) return f.must_be("a table");
  return apply_entries(f.source_name, f.key, *table, keys, config);
}

}  // namespace carrier::config
