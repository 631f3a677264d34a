#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/bench_histogram.hpp"
#include "cli/bench_ledger.hpp"
#include "cli/bench_options.hpp"

namespace carrier::cli::bench {

// What a run measured, gathered by the runner after every worker stopped. Times are seconds
// from the moment the producers started.
struct Totals {
  std::vector<std::uint64_t> sent;  // per producer: messages handed to the client
  std::uint64_t confirmed = 0;      // receipts / PUBACKs / PUBCOMPs, or all sent after a flush
  std::uint64_t failed = 0;         // sends the broker refused or never confirmed
  std::string confirmed_by;         // "receipt", "puback", "pubcomp", "disconnect receipt", "pingresp"
  Accounting accounting;
  std::uint64_t foreign = 0;        // deliveries without this run's stamp (other runs' leftovers)
  double produce_s = 0;             // until the last producer handed its last message over
  double confirm_s = 0;             // until the last confirmation
  double consume_s = 0;             // until the last delivery
  double elapsed_s = 0;             // until the consumers stopped (drain included)
  Histogram latency;                // send -> delivery, nanoseconds
  std::vector<std::string> errors;  // connection and protocol failures, in order
};

struct Latency {
  double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0, min_us = 0, mean_us = 0;
  std::uint64_t samples = 0;
};

struct Report {
  Options options;
  std::uint64_t sent = 0;
  std::uint64_t confirmed = 0;
  std::uint64_t failed = 0;
  std::string confirmed_by;
  std::uint64_t expected = 0;
  std::uint64_t received = 0;  // deliveries, duplicates included
  std::uint64_t missing = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t beyond = 0;
  std::uint64_t foreign = 0;
  double produce_rate = 0;  // sent / produce_s
  double confirm_rate = 0;  // confirmed / confirm_s
  double consume_rate = 0;  // received / consume_s (deliveries per second, all consumers)
  double produce_s = 0, confirm_s = 0, consume_s = 0, elapsed_s = 0;
  Latency latency;
  std::vector<std::string> errors;

  // No loss, no duplicates, nothing failed: exit code 0.
  bool passed() const;
};

Report make_report(const Options& options, const Totals& totals);
std::string to_text(const Report& report);
nlohmann::json to_json(const Report& report);

// "12.3k", "1.23M": rates for humans.
std::string human_rate(double per_second);

}  // namespace carrier::cli::bench
