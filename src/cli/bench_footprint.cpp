#include "cli/bench_footprint.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/bench_client_flags.hpp"
#include "cli/bench_process.hpp"
#include "cli/commands.hpp"

namespace carrier::cli::bench {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "  123456 kB" -> 123456
std::optional<std::uint64_t> leading_number(std::string_view s) {
  s = trim(s);
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return v;
}

double mib(std::uint64_t kib) { return static_cast<double>(kib) / 1024.0; }

nlohmann::json sample_json(const std::optional<MemorySample>& s) {
  if (!s) return nullptr;
  return {{"rss_kib", s->rss_kib},       {"hwm_kib", s->hwm_kib},   {"anon_kib", s->anon_kib},
          {"file_kib", s->file_kib},     {"shmem_kib", s->shmem_kib}, {"threads", s->threads},
          {"processes", s->processes}};
}

std::optional<double> bytes_per_connection(const FootprintResult& r) {
  if (!r.idle || !r.loaded || r.connections == 0) return std::nullopt;
  const double delta = static_cast<double>(r.loaded->rss_kib) - static_cast<double>(r.idle->rss_kib);
  return delta * 1024.0 / r.connections;
}

}  // namespace

std::optional<MemorySample> parse_proc_status(std::string_view text) {
  MemorySample s;
  bool has_rss = false;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    const auto value = leading_number(line.substr(colon + 1));
    if (!value) continue;
    if (key == "VmRSS") {
      s.rss_kib = *value;
      has_rss = true;
    } else if (key == "VmHWM") {
      s.hwm_kib = *value;
    } else if (key == "RssAnon") {
      s.anon_kib = *value;
    } else if (key == "RssFile") {
      s.file_kib = *value;
    } else if (key == "RssShmem") {
      s.shmem_kib = *value;
    } else if (key == "Threads") {
      s.threads = static_cast<unsigned>(*value);
    }
  }
  if (!has_rss) return std::nullopt;
  s.processes = 1;
  return s;
}

void add(MemorySample& total, const MemorySample& one) {
  total.rss_kib += one.rss_kib;
  total.hwm_kib += one.hwm_kib;
  total.anon_kib += one.anon_kib;
  total.file_kib += one.file_kib;
  total.shmem_kib += one.shmem_kib;
  total.threads += one.threads;
  total.processes += one.processes;
}

std::optional<int> parse_stat_ppid(std::string_view text) {
  // "pid (comm) state ppid ...": comm may contain ") ", so look for the last one.
  const auto close = text.rfind(')');
  if (close == std::string_view::npos || close + 4 > text.size()) return std::nullopt;
  std::string_view rest = text.substr(close + 2);  // "S 123 ..."
  const auto space = rest.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  rest = rest.substr(space + 1);
  int ppid = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), ppid);
  if (ec != std::errc()) return std::nullopt;
  return ppid;
}

std::optional<ProcessTimes> parse_stat_times(std::string_view text) {
  const auto close = text.rfind(')');
  if (close == std::string_view::npos || close + 2 > text.size()) return std::nullopt;
  // After the name: state is field 3, so minflt (10), utime (14) and stime (15) are the 8th,
  // 12th and 13th here. Fields before them may be negative (tpgid), so only these are parsed.
  std::string_view rest = text.substr(close + 2);
  std::string_view fields[13];
  for (auto& field : fields) {
    if (rest.empty()) return std::nullopt;
    const auto space = rest.find(' ');
    field = rest.substr(0, space);
    rest.remove_prefix(space == std::string_view::npos ? rest.size() : space + 1);
  }
  const auto number = [](std::string_view f) -> std::optional<std::uint64_t> {
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    if (ec != std::errc() || end != f.data() + f.size()) return std::nullopt;
    return v;
  };
  const auto faults = number(fields[7]), user = number(fields[11]), system = number(fields[12]);
  if (!faults || !user || !system) return std::nullopt;
  return ProcessTimes{.user_ticks = *user, .system_ticks = *system, .minor_faults = *faults};
}

HandshakeReply parse_handshake_reply(Protocol protocol, std::string_view bytes) {
  HandshakeReply reply;
  if (protocol == Protocol::mqtt) {
    if (bytes.size() < 4) return reply;
    if (static_cast<unsigned char>(bytes[0]) != 0x20 || bytes[1] != 0x02) {
      reply.state = HandshakeReply::State::refused;
      reply.reason = fmt::format("expected CONNACK, got packet type {}", static_cast<unsigned char>(bytes[0]) >> 4);
      return reply;
    }
    const unsigned code = static_cast<unsigned char>(bytes[3]);
    reply.state = code == 0 ? HandshakeReply::State::connected : HandshakeReply::State::refused;
    if (code != 0) reply.reason = fmt::format("CONNACK return code {}", code);
    return reply;
  }
  // STOMP: heart-beat EOLs may come first; the frame ends with NUL.
  while (!bytes.empty() && (bytes.front() == '\n' || bytes.front() == '\r')) bytes.remove_prefix(1);
  const auto nul = bytes.find('\0');
  if (nul == std::string_view::npos) return reply;
  const std::string_view frame = bytes.substr(0, nul);
  const auto eol = frame.find('\n');
  const std::string_view command = trim(frame.substr(0, eol));
  if (command == "CONNECTED") {
    reply.state = HandshakeReply::State::connected;
    return reply;
  }
  reply.state = HandshakeReply::State::refused;
  reply.reason = std::string(command);
  if (const auto m = frame.find("\nmessage:"); m != std::string_view::npos) {
    const std::string_view rest = frame.substr(m + 9);
    reply.reason += ": " + std::string(trim(rest.substr(0, rest.find('\n'))));
  }
  return reply;
}

std::string connect_request(Protocol protocol, const std::string& vhost, const std::string& login,
                            const std::string& passcode, const std::string& client_id) {
  if (protocol == Protocol::stomp) {
    std::string f = "CONNECT\naccept-version:1.2\nhost:" + vhost + "\nheart-beat:0,0\n";
    if (!login.empty()) f += "login:" + login + "\npasscode:" + passcode + "\n";
    f += "\n";
    f.push_back('\0');
    return f;
  }
  auto put_string = [](std::string& out, std::string_view s) {
    out.push_back(static_cast<char>(s.size() >> 8));
    out.push_back(static_cast<char>(s.size() & 0xff));
    out.append(s);
  };
  std::string body;
  put_string(body, "MQTT");
  body.push_back(4);  // 3.1.1
  unsigned char flags = 0x02;  // clean session
  if (!login.empty()) flags |= 0x80 | 0x40;
  body.push_back(static_cast<char>(flags));
  body.push_back(0);  // keep-alive 0: no PINGREQ expected, the connection stays idle
  body.push_back(0);
  put_string(body, client_id);
  if (!login.empty()) {
    put_string(body, login);
    put_string(body, passcode);
  }
  std::string packet(1, static_cast<char>(0x10));
  std::size_t len = body.size();
  do {
    unsigned char byte = len & 0x7f;
    len >>= 7;
    if (len > 0) byte |= 0x80;
    packet.push_back(static_cast<char>(byte));
  } while (len > 0);
  return packet + body;
}

bool FootprintResult::complete() const {
  return errors.empty() && idle.has_value() && loaded.has_value() && connections == connections_requested;
}

std::vector<Verdict> judge(const FootprintResult& r, const FootprintTargets& t) {
  std::vector<Verdict> out;
  auto verdict = [](std::string name, std::optional<double> measured, double limit, bool extrapolated) {
    Verdict v{std::move(name), measured, limit, extrapolated, std::nullopt};
    if (measured) v.met = *measured <= limit;
    return v;
  };
  out.push_back(verdict("idle_rss_mib", r.idle ? std::optional<double>(mib(r.idle->rss_kib)) : std::nullopt,
                        t.idle_rss_mib, false));
  out.push_back(verdict("start_ms", r.start_ms, t.start_ms, false));
  std::optional<double> loaded;
  bool extrapolated = false;
  if (r.idle && r.loaded && r.connections > 0) {
    if (r.connections == t.connections) {
      loaded = mib(r.loaded->rss_kib);
    } else {
      // Idle plus the measured cost per connection times the target's count.
      extrapolated = true;
      loaded = mib(r.idle->rss_kib) + *bytes_per_connection(r) * t.connections / (1024.0 * 1024.0);
    }
  }
  out.push_back(verdict("connections_rss_mib", loaded, t.connections_rss_mib, extrapolated));
  return out;
}

nlohmann::json to_json(const FootprintResult& r, const FootprintTargets& t) {
  nlohmann::json j;
  j["mode"] = "footprint";
  j["protocol"] = std::string(to_string(r.protocol));
  j["server"] = r.server;
  j["command"] = r.command.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.command);
  j["pid"] = r.pid;
  j["listen_ms"] = r.listen_ms ? nlohmann::json(*r.listen_ms) : nlohmann::json(nullptr);
  j["start_ms"] = r.start_ms ? nlohmann::json(*r.start_ms) : nlohmann::json(nullptr);
  j["idle"] = sample_json(r.idle);
  j["connections_requested"] = r.connections_requested;
  j["connections"] = r.connections;
  j["connect_s"] = r.connect_s;
  j["loaded"] = sample_json(r.loaded);
  j["closed"] = sample_json(r.closed);
  const auto per = bytes_per_connection(r);
  j["bytes_per_connection"] = per ? nlohmann::json(std::llround(*per)) : nlohmann::json(nullptr);
  nlohmann::json targets = nlohmann::json::object();
  bool all_met = true;
  for (const auto& v : judge(r, t)) {
    targets[v.name] = {{"limit", v.limit},
                       {"measured", v.measured ? nlohmann::json(*v.measured) : nlohmann::json(nullptr)},
                       {"met", v.met ? nlohmann::json(*v.met) : nlohmann::json(nullptr)},
                       {"extrapolated", v.extrapolated}};
    if (v.met && !*v.met) all_met = false;
  }
  targets["connections_for_target"] = t.connections;
  j["targets"] = targets;
  j["targets_met"] = all_met;
  j["errors"] = r.errors;
  j["ok"] = r.complete();
  return j;
}

std::string to_text(const FootprintResult& r, const FootprintTargets& t) {
  std::string s = fmt::format("carrier bench footprint: {}, {} idle connection(s)\n", to_string(r.protocol),
                              r.connections_requested);
  s += fmt::format("  broker      pid {} at {}{}\n", r.pid, r.server,
                   r.command.empty() ? std::string(" (already running)") : "");
  if (!r.command.empty()) s += fmt::format("  command     {}\n", r.command);
  const auto verdicts = judge(r, t);
  auto verdict_text = [](const Verdict& v, std::string_view unit) {
    if (!v.met) return std::string("not measured");
    return fmt::format("target <= {:g} {}{}: {}", v.limit, unit, v.extrapolated ? " (extrapolated)" : "",
                       *v.met ? "met" : "MISSED");
  };
  auto memory_text = [](const MemorySample& m) {
    return fmt::format("RSS {:.1f} MiB (anon {:.1f}, file {:.1f}; peak {:.1f} MiB; {} thread(s){})", mib(m.rss_kib),
                       mib(m.anon_kib), mib(m.file_kib), mib(m.hwm_kib), m.threads,
                       m.processes > 1 ? fmt::format(", {} processes", m.processes) : std::string());
  };
  if (r.start_ms) {
    s += fmt::format("  start       {:.1f} ms to {} (TCP accepted after {:.1f} ms)  {}\n", *r.start_ms,
                     r.protocol == Protocol::stomp ? "CONNECTED" : "CONNACK", r.listen_ms.value_or(0),
                     verdict_text(verdicts[1], "ms"));
  } else {
    s += "  start       not measured (--pid)\n";
  }
  if (r.idle) s += fmt::format("  idle        {}  {}\n", memory_text(*r.idle), verdict_text(verdicts[0], "MiB"));
  if (r.loaded) {
    s += fmt::format("  {:<11} {}\n", fmt::format("{} conn", r.connections), memory_text(*r.loaded));
    if (const auto per = bytes_per_connection(r)) {
      s += fmt::format("              {:.2f} KiB per connection, opened in {:.2f} s", *per / 1024.0, r.connect_s);
      const auto& v = verdicts[2];
      if (v.measured) {
        s += fmt::format("; {} connections: {:.1f} MiB  {}", t.connections, *v.measured, verdict_text(v, "MiB"));
      }
      s += "\n";
    }
  }
  if (r.closed) s += fmt::format("  closed      {} after closing them\n", memory_text(*r.closed));
  for (const auto& e : r.errors) s += "  error: " + e + "\n";
  bool all_met = true, any = false;
  for (const auto& v : verdicts) {
    if (v.met) any = true;
    if (v.met && !*v.met) all_met = false;
  }
  if (!r.complete()) {
    s += "  result: incomplete\n";
  } else {
    s += std::string("  result: ") + (!any ? "measured" : all_met ? "every target met" : "target(s) missed") + "\n";
  }
  return s;
}

void add_footprint_command(CLI::App& bench) {
  struct Raw {
    FootprintOptions o;
    std::string protocol = "stomp";
    std::string server;
  };
  auto raw = std::make_shared<Raw>();
  auto* cmd = bench.add_subcommand(
      "footprint", "Measure start time, idle memory and memory with N idle connections (issue 6's footprint targets)");
  auto* command = cmd->add_option("--command", raw->o.command,
                                  "Shell command that starts the broker (needs --server); default: this carrier's "
                                  "serve on free loopback ports with a temporary data dir");
  auto* pid = cmd->add_option("--pid", raw->o.pid, "Measure this already running broker (needs --server)");
  command->excludes(pid);
  cmd->add_option("--server", raw->server, "Where the broker listens, HOST:PORT (loopback only)");
  cmd->add_option("--protocol", raw->protocol, "stomp | mqtt: how the connections say hello (default stomp)");
  cmd->add_option("--connections", raw->o.connections, "Idle connections to open (default 10000)");
  cmd->add_option("--settle", raw->o.settle_s, "Seconds to wait before each memory reading (default 1)");
  cmd->add_option("--start-timeout", raw->o.start_timeout_s, "Give up if not accepting after this (default 60 s)");
  add_bench_client_flags(*cmd, raw->o.login, raw->o.passcode, raw->o.vhost, raw->o.json, raw->o.quiet, true);
  cmd->callback([raw] {
    FootprintOptions o = raw->o;
    auto usage = [](const std::string& message) {
      std::fprintf(stderr, "carrier bench footprint: %s\n", message.c_str());
      std::exit(kExitUsage);
    };
    if (raw->protocol == "stomp") {
      o.protocol = Protocol::stomp;
    } else if (raw->protocol == "mqtt") {
      o.protocol = Protocol::mqtt;
    } else {
      usage("--protocol must be stomp or mqtt");
    }
    if (!raw->server.empty()) {
      const auto server = split_host_port(raw->server);
      if (!server) usage("--server must be HOST:PORT");
      o.host = server->first;
      o.port = server->second;
    }
    if ((!o.command.empty() || o.pid) && o.port == 0) usage("--command and --pid need --server HOST:PORT");
    if (!is_loopback(o.host)) usage("--server must be a loopback address: the broker's /proc is read");
    if (o.connections == 0) usage("--connections must be at least 1");
    if (o.vhost.empty()) o.vhost = o.host;
    std::exit(run_footprint(o));
  });
}

}  // namespace carrier::cli::bench
