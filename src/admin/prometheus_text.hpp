#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "core/shard_counters.hpp"

namespace carrier::admin {

// Writes the Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): one `# HELP` and `# TYPE` line
// per family, then its samples; label values escaped (\\, \", \n). Names are the caller's
// constants, so they are not checked here. Pure: no clock, no I/O.
class PrometheusText {
 public:
  using Label = std::pair<std::string_view, std::string_view>;
  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

  // `type`: "counter", "gauge" or "histogram".
  void family(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, std::initializer_list<Label> labels, double value);
  void sample(std::string_view name, std::initializer_list<Label> labels, std::uint64_t value);
  // A family of one unlabelled sample.
  template <class Value>
  void scalar(std::string_view name, std::string_view type, std::string_view help, Value value) {
    family(name, type, help);
    sample(name, {}, value);
  }
  // A whole histogram family in seconds (`name` ends in _seconds): cumulative buckets, +Inf,
  // _sum and _count.
  void histogram(std::string_view name, std::string_view help, const core::LatencyHistogram& h);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void labels(std::initializer_list<Label> labels);

  std::string out_;
};

// A label value as the format writes it between quotes.
std::string escape_label_value(std::string_view value);

}  // namespace carrier::admin
