#include "admin/prometheus_text.hpp"

#include <iterator>

#include <fmt/format.h>

namespace carrier::admin {

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

void PrometheusText::family(std::string_view name, std::string_view type, std::string_view help) {
  // HELP text escapes only backslash and newline.
  std::string h;
  for (char c : help) {
    if (c == '\\') {
      h += "\\\\";
    } else if (c == '\n') {
      h += "\\n";
    } else {
      h += c;
    }
  }
  fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, h, name, type);
}

void PrometheusText::labels(std::initializer_list<Label> labels) {
  if (labels.size() == 0) return;
  out_ += '{';
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) out_ += ',';
    first = false;
    fmt::format_to(std::back_inserter(out_), "{}=\"{}\"", k, escape_label_value(v));
  }
  out_ += '}';
}

void PrometheusText::sample(std::string_view name, std::initializer_list<Label> l, double value) {
  out_ += name;
  labels(l);
  fmt::format_to(std::back_inserter(out_), " {}\n", value);
}

void PrometheusText::sample(std::string_view name, std::initializer_list<Label> l, std::uint64_t value) {
  out_ += name;
  labels(l);
  fmt::format_to(std::back_inserter(out_), " {}\n", value);
}

void PrometheusText::histogram(std::string_view name, std::string_view help, const core::LatencyHistogram& h) {
  family(name, "histogram", help);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < core::LatencyHistogram::kBoundsMs.size(); ++i) {
    cumulative += h.counts[i];
    const std::string le = fmt::format("{}", static_cast<double>(core::LatencyHistogram::kBoundsMs[i]) / 1000.0);
    fmt::format_to(std::back_inserter(out_), "{}_bucket{{le=\"{}\"}} {}\n", name, le, cumulative);
  }
  cumulative += h.counts.back();
  fmt::format_to(std::back_inserter(out_), "{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, cumulative,
                 name, static_cast<double>(h.sum_ms) / 1000.0, name, cumulative);
}

}  // namespace carrier::admin
