#include "admin/prometheus_text.hpp"

#include <gtest/gtest.h>

namespace carrier::admin {
namespace {

TEST(PrometheusText, FamiliesAndSamples) {
  PrometheusText out;
  out.family("carrier_connections", "gauge", "Open client connections");
  out.sample("carrier_connections", {{"protocol", "stomp"}}, std::uint64_t{3});
  out.family("carrier_uptime_seconds", "gauge", "Seconds");
  out.sample("carrier_uptime_seconds", {}, 1.5);
  EXPECT_EQ(out.text(),
            "# HELP carrier_connections Open client connections\n"
            "# TYPE carrier_connections gauge\n"
            "carrier_connections{protocol=\"stomp\"} 3\n"
            "# HELP carrier_uptime_seconds Seconds\n"
            "# TYPE carrier_uptime_seconds gauge\n"
            "carrier_uptime_seconds 1.5\n");
}

TEST(PrometheusText, LabelValuesAndHelpAreEscaped) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  PrometheusText out;
  out.family("x", "gauge", "back\\slash\nnewline \"quotes\" stay");
  out.sample("x", {{"queue", "we\"ird\n"}, {"b", "2"}}, std::uint64_t{1});
  EXPECT_EQ(out.text(),
            "# HELP x back\\\\slash\\nnewline \"quotes\" stay\n# TYPE x gauge\n"
            "x{queue=\"we\\\"ird\\n\",b=\"2\"} 1\n");
}

TEST(PrometheusText, HistogramBucketsAreCumulativeInSeconds) {
  core::LatencyHistogram h;
  h.record(0);       // le 0.001
  h.record(3);       // le 0.005
  h.record(3);       // le 0.005
  h.record(120000);  // above every bound
  PrometheusText out;
  out.histogram("lat_seconds", "Latency", h);
  const std::string& t = out.text();
  EXPECT_NE(t.find("# TYPE lat_seconds histogram\n"), std::string::npos);
  EXPECT_NE(t.find("lat_seconds_bucket{le=\"0.001\"} 1\n"), std::string::npos);
  EXPECT_NE(t.find("lat_seconds_bucket{le=\"0.002\"} 1\n"), std::string::npos);
  EXPECT_NE(t.find("lat_seconds_bucket{le=\"0.005\"} 3\n"), std::string::npos);
  EXPECT_NE(t.find("lat_seconds_bucket{le=\"60\"} 3\n"), std::string::npos);
  EXPECT_NE(t.find("lat_seconds_bucket{le=\"+Inf\"} 4\n"), std::string::npos);
  EXPECT_NE(t.find("lat_seconds_sum 120.006\n"), std::string::npos);
  EXPECT_NE(t.find("lat_seconds_count 4\n"), std::string::npos);
}

}  // namespace
}  // namespace carrier::admin
