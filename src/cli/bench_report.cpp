#include "cli/bench_report.hpp"

#include <cstdio>
#include <numeric>

namespace carrier::cli::bench {

namespace {

double rate(std::uint64_t n, double seconds) { return seconds > 0 ? static_cast<double>(n) / seconds : 0.0; }
double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string fixed(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

// Latency in the unit that reads best: "87 us", "1.24 ms", "2.5 s".
std::string human_latency(double microseconds) {
  if (microseconds < 1000) return fixed(microseconds, microseconds < 10 ? 1 : 0) + " us";
  if (microseconds < 1e6) return fixed(microseconds / 1000, 2) + " ms";
  return fixed(microseconds / 1e6, 2) + " s";
}

std::string shape(const Options& o) {
  std::string s = o.protocol_name() + " " + std::string(to_string(o.kind)) + " " +
                  std::to_string(o.producers) + " -> " + std::to_string(o.consumers) + ", " + std::to_string(o.size) +
                  " B";
  if (o.protocol == Protocol::stomp) {
    s += ", ack " + std::string(to_string(o.ack));
    if (o.prefetch) s += ", prefetch " + std::to_string(*o.prefetch);
    if (o.persistent) s += ", persistent";
  } else if (o.protocol == Protocol::http) {
    if (o.persistent) s += ", persistent";
  } else {
    s += ", QoS " + std::to_string(o.qos);
    if (o.mqtt_v5) s += ", MQTT 5";
  }
  if (o.receipts > 0) s += ", " + std::to_string(o.receipts) + " in flight";
  if (o.rate > 0) s += ", " + human_rate(o.rate) + " msg/s offered";
  return s;
}

}  // namespace

std::string human_rate(double per_second) {
  if (per_second >= 1e6) return fixed(per_second / 1e6, 2) + "M";
  if (per_second >= 1e4) return fixed(per_second / 1e3, 1) + "k";
  if (per_second >= 1e3) return fixed(per_second / 1e3, 2) + "k";
  return fixed(per_second, 0);
}

bool Report::passed() const {
  return missing == 0 && duplicates == 0 && beyond == 0 && failed == 0 && errors.empty();
}

Report make_report(const Options& options, const Totals& t) {
  Report r;
  r.options = options;
  r.sent = std::accumulate(t.sent.begin(), t.sent.end(), std::uint64_t{0});
  r.confirmed = t.confirmed;
  r.failed = t.failed;
  r.confirmed_by = t.confirmed_by;
  r.expected = t.accounting.expected;
  r.received = t.accounting.deliveries;
  r.missing = t.accounting.missing;
  r.duplicates = t.accounting.duplicates;
  r.beyond = t.accounting.beyond;
  r.foreign = t.foreign;
  r.produce_s = t.produce_s;
  r.confirm_s = t.confirm_s;
  r.consume_s = t.consume_s;
  r.elapsed_s = t.elapsed_s;
  r.produce_rate = rate(r.sent, t.produce_s);
  r.confirm_rate = rate(r.confirmed, t.confirm_s);
  r.consume_rate = rate(r.received, t.consume_s);
  const auto& h = t.latency;
  r.latency.samples = h.count();
  r.latency.p50_us = us(h.percentile(0.50));
  r.latency.p90_us = us(h.percentile(0.90));
  r.latency.p99_us = us(h.percentile(0.99));
  r.latency.p999_us = us(h.percentile(0.999));
  r.latency.max_us = us(h.max());
  r.latency.min_us = us(h.min());
  r.latency.mean_us = h.mean() / 1000.0;
  r.errors = t.errors;
  return r;
}

std::string to_text(const Report& r) {
  const auto& o = r.options;
  std::string out = "carrier bench";
  if (!o.preset.empty()) out += " " + o.preset;
  out += ": " + shape(o) + "\n";
  out += "  server     " + o.server() + "  dest " + o.dest + "\n";
  auto line = [&out](const char* name, std::uint64_t n, double per_s, double seconds, const std::string& extra) {
    char text[256];
    std::snprintf(text, sizeof text, "  %-10s %12llu  %9s msg/s  in %.2f s%s\n", name,
                  static_cast<unsigned long long>(n), human_rate(per_s).c_str(), seconds, extra.c_str());
    out += text;
  };
  line("sent", r.sent, r.produce_rate, r.produce_s, "");
  line("confirmed", r.confirmed, r.confirm_rate, r.confirm_s, r.confirmed_by.empty() ? "" : "  (" + r.confirmed_by + ")");
  line("received", r.received, r.consume_rate, r.consume_s,
       o.consumers > 1 && o.kind == Kind::topic ? "  (deliveries, all subscribers)" : "");
  char text[256];
  std::snprintf(text, sizeof text, "  missing %llu  duplicates %llu  failed %llu  (expected %llu deliveries)\n",
                static_cast<unsigned long long>(r.missing), static_cast<unsigned long long>(r.duplicates),
                static_cast<unsigned long long>(r.failed), static_cast<unsigned long long>(r.expected));
  out += text;
  if (r.foreign > 0) out += "  ignored " + std::to_string(r.foreign) + " messages of other runs\n";
  if (r.beyond > 0) out += "  " + std::to_string(r.beyond) + " received sequence numbers were never sent\n";
  if (r.latency.samples > 0) {
    out += "  latency    p50 " + human_latency(r.latency.p50_us) + "  p90 " + human_latency(r.latency.p90_us) +
           "  p99 " + human_latency(r.latency.p99_us) + "  p99.9 " + human_latency(r.latency.p999_us) + "  max " +
           human_latency(r.latency.max_us) + "\n";
  }
  for (const auto& e : r.errors) out += "  error: " + e + "\n";
  out += r.passed() ? "  result: ok\n" : "  result: FAILED\n";
  return out;
}

nlohmann::json to_json(const Report& r) {
  const auto& o = r.options;
  nlohmann::json j;
  j["preset"] = o.preset.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.preset);
  j["protocol"] = o.protocol_name();
  j["server"] = o.server();
  j["dest"] = o.dest;
  j["kind"] = to_string(o.kind);
  j["producers"] = o.producers;
  j["consumers"] = o.consumers;
  j["size"] = o.size;
  if (o.count > 0) {
    j["count"] = o.count;
  } else {
    j["duration_s"] = o.duration_s;
  }
  if (o.protocol == Protocol::stomp) {
    j["ack"] = to_string(o.ack);
    j["prefetch"] = o.prefetch ? nlohmann::json(*o.prefetch) : nlohmann::json(nullptr);
    j["persistent"] = o.persistent;
  } else if (o.protocol == Protocol::http) {
    j["persistent"] = o.persistent;
  } else {
    j["qos"] = o.qos;
    j["mqtt_version"] = o.mqtt_v5 ? "5" : "3.1.1";
  }
  j["receipts"] = o.receipts;
  j["rate"] = o.rate;
  j["command"] = o.command_line();
  j["sent"] = r.sent;
  j["confirmed"] = r.confirmed;
  j["confirmed_by"] = r.confirmed_by;
  j["failed"] = r.failed;
  j["expected"] = r.expected;
  j["received"] = r.received;
  j["missing"] = r.missing;
  j["duplicates"] = r.duplicates;
  j["beyond"] = r.beyond;
  j["foreign"] = r.foreign;
  j["produce_rate"] = r.produce_rate;
  j["confirm_rate"] = r.confirm_rate;
  j["consume_rate"] = r.consume_rate;
  j["produce_s"] = r.produce_s;
  j["confirm_s"] = r.confirm_s;
  j["consume_s"] = r.consume_s;
  j["elapsed_s"] = r.elapsed_s;
  j["latency_us"] = {{"p50", r.latency.p50_us},   {"p90", r.latency.p90_us}, {"p99", r.latency.p99_us},
                     {"p99.9", r.latency.p999_us}, {"max", r.latency.max_us}, {"min", r.latency.min_us},
                     {"mean", r.latency.mean_us},  {"samples", r.latency.samples}};
  j["errors"] = r.errors;
  j["ok"] = r.passed();
  return j;
}

}  // namespace carrier::cli::bench
