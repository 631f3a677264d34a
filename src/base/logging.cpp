#include "base/logging.hpp"

#include <spdlog/details/log_msg.h>
#include <spdlog/formatter.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <optional>

#include "base/log_format.hpp"

namespace carrier::logging {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "[<protocol> c<id> <remote>[ <destination>]] rest" taken apart.
struct ConnectionPrefix {
  std::string_view protocol, connection, remote, destination, rest;
};

std::optional<ConnectionPrefix> connection_prefix(std::string_view message) {
  if (!message.starts_with('[')) return std::nullopt;
  const auto close = message.find("] ");
  if (close == std::string_view::npos) return std::nullopt;
  const auto inner = message.substr(1, close - 1);
  const auto sp1 = inner.find(' ');
  const auto sp2 = sp1 == std::string_view::npos ? sp1 : inner.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || inner.size() <= sp1 + 2 || inner[sp1 + 1] != 'c') return std::nullopt;
  const auto id = inner.substr(sp1 + 2, sp2 - sp1 - 2);
  if (id.empty() || !std::all_of(id.begin(), id.end(), is_digit)) return std::nullopt;
  ConnectionPrefix p;
  p.protocol = inner.substr(0, sp1);
  p.connection = id;
  const auto rest = inner.substr(sp2 + 1);
  const auto sp3 = rest.find(' ');
  p.remote = rest.substr(0, sp3);
  if (sp3 != std::string_view::npos) p.destination = rest.substr(sp3 + 1);
  p.rest = message.substr(close + 2);
  return p;
}

constexpr const char* kTextPattern = "%Y-%m-%dT%H:%M:%S.%e %^%-5l%$ [%n] %v";
// Repeated warnings and errors: this many alike per window, then one line saying how many more.
constexpr std::size_t kRepeatBurst = 5;
constexpr auto kRepeatWindow = std::chrono::seconds(10);

void append_json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20 || u == 0x7F) {
          out += fmt::format("\\u{:04x}", u);
        } else {
          out.push_back(c);  // UTF-8 passes as is; the line stays valid JSON for valid UTF-8
        }
    }
  }
  out.push_back('"');
}

void append_field(std::string& out, std::string_view name, std::string_view value) {
  out.push_back(',');
  append_json_string(out, name);
  out.push_back(':');
  append_json_string(out, value);
}

// Formats a whole message as json_line does.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto level = spdlog::level::to_string_view(msg.level);
    auto line = json_line(msg.time, std::string_view(level.data(), level.size()),
                          std::string_view(msg.logger_name.data(), msg.logger_name.size()),
                          std::string_view(msg.payload.data(), msg.payload.size()));
    line.push_back('\n');
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
};

// Every logger's one sink: stderr, in the chosen format, with repeated warnings held back.
class StderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string_view payload(msg.payload.data(), msg.payload.size());
    // Warnings and errors, and what a connection's events log at info (failed logins...): a
    // flood of clients must not flood the log. Debug and trace were asked for.
    if (msg.level >= spdlog::level::warn || (msg.level == spdlog::level::info && connection_prefix(payload))) {
      const auto held = repeats_.admit(payload, std::chrono::steady_clock::now());
      if (!held) return;
      if (*held > 0) {
        const auto note = fmt::format("{} (and {} more like it held back in the last {} s)", payload, *held,
                                      std::chrono::duration_cast<std::chrono::seconds>(kRepeatWindow).count());
        spdlog::details::log_msg copy(msg.time, msg.source, msg.logger_name, msg.level, note);
        write(copy);
        return;
      }
    }
    write(msg);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  void write(const spdlog::details::log_msg& msg) {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    std::fwrite(buf.data(), 1, buf.size(), stderr);
  }
  RepeatLimiter repeats_{kRepeatBurst, kRepeatWindow};
};

// Loggers are created at most once per module name, from any thread; spdlog's registry
// is itself thread-safe, this mutex only keeps get-or-create atomic.
std::mutex g_create_mutex;

std::shared_ptr<StderrSink> shared_sink() {
  static auto sink = [] {
    auto s = std::make_shared<StderrSink>();
    s->set_pattern(kTextPattern);
    return s;
  }();
  return sink;
}

}  // namespace

std::shared_ptr<spdlog::logger> get(std::string_view module) {
  std::string name(module);
  if (auto existing = spdlog::get(name)) return existing;
  std::lock_guard lock(g_create_mutex);
  if (auto existing = spdlog::get(name)) return existing;
  auto logger = std::make_shared<spdlog::logger>(name, shared_sink());
  logger->set_level(spdlog::get_level());
  spdlog::register_logger(logger);
  return logger;
}

bool set_level(std::string_view level) {
  auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") return false;
  spdlog::set_level(parsed);
  spdlog::apply_all([parsed](const std::shared_ptr<spdlog::logger>& l) { l->set_level(parsed); });
  return true;
}

bool set_format(std::string_view format) {
  if (format == "text") {
    shared_sink()->set_pattern(kTextPattern);
  } else if (format == "json") {
    shared_sink()->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    return false;
  }
  return true;
}

std::string json_line(std::chrono::system_clock::time_point time, std::string_view level, std::string_view logger,
                      std::string_view message) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  ::gmtime_r(&secs, &utc);
  std::string out = "{\"time\":";
  append_json_string(out, fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                                      utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ms % 1000));
  append_field(out, "level", level == "warning" ? "warn" : level);
  append_field(out, "logger", logger);
  const auto prefix = connection_prefix(message);
  append_field(out, "msg", prefix ? prefix->rest : message);
  if (prefix) {
    append_field(out, "protocol", prefix->protocol);
    out += ",\"connection\":";
    out.append(prefix->connection);  // digits only: a JSON number
    append_field(out, "remote", prefix->remote);
    if (!prefix->destination.empty()) append_field(out, "destination", prefix->destination);
  }
  out.push_back('}');
  return out;
}

std::string RepeatLimiter::kind_of(std::string_view message) {
  if (auto prefix = connection_prefix(message)) message = prefix->rest;
  std::string kind;
  kind.reserve(message.size());
  for (std::size_t i = 0; i < message.size(); ++i) {
    if (is_digit(message[i])) {
      if (kind.empty() || kind.back() != '#') kind.push_back('#');
      continue;
    }
    kind.push_back(message[i]);
  }
  return kind;
}

std::optional<std::size_t> RepeatLimiter::admit(std::string_view message, std::chrono::steady_clock::time_point now) {
  auto key = kind_of(message);
  auto it = kinds_.find(key);
  if (it == kinds_.end()) {
    if (kinds_.size() >= max_kinds_) kinds_.clear();  // a flood of distinct kinds: start over
    it = kinds_.emplace(std::move(key), Kind{now, 0, 0}).first;
  }
  Kind& k = it->second;
  if (now - k.window_start >= window_) {
    k.window_start = now;
    k.in_window = 0;
  }
  if (k.in_window >= burst_) {
    ++k.held_back;
    return std::nullopt;
  }
  ++k.in_window;
  const std::size_t held = k.held_back;
  k.held_back = 0;
  return held;
}

}  // namespace carrier::logging
