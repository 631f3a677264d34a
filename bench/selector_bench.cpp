// JMS selector cost on the dispatch hot path: matching one message against one compiled selector
// (done for every message offered to a selective consumer), and compiling one (per SUBSCRIBE).
// The message carries eight user properties, as a typical STOMP/JMS producer sends.

#include <benchmark/benchmark.h>

#include <string>

#include "model/message.hpp"
#include "selector/selector.hpp"

namespace {

using namespace carrier;
using namespace carrier::model;

Message typical_message() {
  Message m;
  m.id = MessageId{0x0190a4e57b1c7d3eULL, 0x8f000123456789abULL};
  m.priority = 6;
  m.timestamp_ms = 1'700'000'000'000;
  m.persistent = true;
  m.type = "car";
  m.correlation_id = "c7a4f0e2-1b7e-4a55-9d4e-0c1f7a9b2e33";
  m.properties = {
      {"region", "eu"},        {"tenant", "acme"},    {"source", "web"},   {"version", "3"},
      {"color", "blue"},       {"weight", "3100"},    {"amount", "150.25"}, {"sku", "CAR-1234-XL"},
  };
  return m;
}

std::string big_or(int terms) {
  std::string text = "sku = 'S0'";
  for (int i = 1; i < terms; ++i) text += " OR sku = 'S" + std::to_string(i) + "'";
  return text;
}

void BM_Match(benchmark::State& state, const std::string& text) {
  const auto selector = selector::parse(text);
  if (!selector) {
    state.SkipWithError(selector.error().detail.c_str());
    return;
  }
  const Message m = typical_message();
  std::int64_t matched = 0;
  for (auto _ : state) {
    const bool match = selector::matches(**selector, m);
    benchmark::DoNotOptimize(match);
    matched += match ? 1 : 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["matched"] = static_cast<double>(matched) / static_cast<double>(state.iterations());
}

void BM_Parse(benchmark::State& state, const std::string& text) {
  for (auto _ : state) {
    auto selector = selector::parse(text);
    benchmark::DoNotOptimize(selector);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

const std::string kCompound = "JMSType = 'car' AND color = 'blue' AND weight > 2500";

// A hostile LIKE: a 10 KB pattern against a 1 MB header of 'a's that almost matches everywhere
// (the backtracking matcher before took O(header * pattern): ~25 s per message).
void BM_LikeHostile(benchmark::State& state, const std::string& pattern) {
  selector::Limits limits;
  limits.max_length = 1u << 20;
  const auto selector = selector::parse("x LIKE '" + pattern + "'", limits);
  if (!selector) {
    state.SkipWithError(selector.error().detail.c_str());
    return;
  }
  Message m;
  m.properties = {{"x", std::string(1u << 20, 'a')}};
  for (auto _ : state) {
    const bool match = selector::matches(**selector, m);
    benchmark::DoNotOptimize(match);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * (1 << 20));
}

std::string underscores(int pieces) {
  std::string out;
  for (int i = 0; i < pieces; ++i) out += "aaaaaaaaa_";
  return out;
}

}  // namespace

BENCHMARK_CAPTURE(BM_Match, string_eq_first_property, std::string("region = 'eu'"));
BENCHMARK_CAPTURE(BM_Match, string_eq_last_property, std::string("sku = 'CAR-1234-XL'"));
BENCHMARK_CAPTURE(BM_Match, missing_property, std::string("absent = 'x'"));
BENCHMARK_CAPTURE(BM_Match, numeric_property, std::string("amount > 100"));
BENCHMARK_CAPTURE(BM_Match, header_priority, std::string("JMSPriority > 4"));
BENCHMARK_CAPTURE(BM_Match, header_message_id,
                  std::string("JMSMessageID = '0190a4e5-7b1c-7d3e-8f00-0123456789ab'"));
BENCHMARK_CAPTURE(BM_Match, compound_and, kCompound);
BENCHMARK_CAPTURE(BM_Match, between, std::string("weight BETWEEN 1000 AND 5000"));
BENCHMARK_CAPTURE(BM_Match, in_20,
                  std::string("region IN ('a1','a2','a3','a4','a5','a6','a7','a8','a9','b1',"
                              "'b2','b3','b4','b5','b6','b7','b8','b9','c1','eu')"));
BENCHMARK_CAPTURE(BM_Match, like_prefix, std::string("sku LIKE 'CAR-%'"));
BENCHMARK_CAPTURE(BM_Match, like_general, std::string("sku LIKE 'CAR-____-%L'"));
BENCHMARK_CAPTURE(BM_Match, or_100_terms_no_match, big_or(100));

// Iterations(1): the same cases take tens of seconds each with a backtracking matcher.
BENCHMARK_CAPTURE(BM_LikeHostile, contains_10k, "%" + std::string(10000, 'a') + "b%")
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_LikeHostile, literal_piece_10k, "%" + std::string(10000, 'a') + "b%a")
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_LikeHostile, underscore_piece_10k, "%" + underscores(1000) + "b%a")
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_LikeHostile, many_percents, "%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%b_")
    ->Unit(benchmark::kMillisecond)->Iterations(1);

BENCHMARK_CAPTURE(BM_Parse, compound_and, kCompound);
BENCHMARK_CAPTURE(BM_Parse, or_100_terms, big_or(100));
