// MQTT codec throughput: decoding PUBLISH packets as a session's read loop does (QoS 0 and 1,
// 1 KiB and 64 KiB payloads, MQTT 3.1.1 and 5) and encoding them for delivery.

#include <benchmark/benchmark.h>

#include <string>

#include "mqtt/codec/decoder.hpp"
#include "mqtt/codec/encoder.hpp"

namespace {

using namespace carrier::mqtt::codec;

std::string publish_packet(std::size_t payload, std::uint8_t qos, Version version) {
  Publish p;
  p.qos = qos;
  p.topic = "sensors/eu/building-7/floor-3/temperature";
  p.packet_id = qos > 0 ? 4711 : 0;
  p.payload = std::string(payload, 'x');
  std::string wire;
  encode(p, version, wire);
  return wire;
}

void BM_DecodePublish(benchmark::State& state) {
  const auto version = state.range(2) == 5 ? Version::v5 : Version::v3_1_1;
  const std::string wire =
      publish_packet(static_cast<std::size_t>(state.range(0)), static_cast<std::uint8_t>(state.range(1)), version);
  const DecoderLimits limits{};
  for (auto _ : state) {
    auto result = decode(wire, version, limits);
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * wire.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodePublish)
    ->ArgsProduct({{1024, 64 << 10}, {0, 1}, {4, 5}})
    ->ArgNames({"payload", "qos", "version"});

// Back-to-back 1 KiB QoS 0 packets, consumed from the front as a read loop does.
void BM_DecodePublishStream(benchmark::State& state) {
  std::string wire;
  for (int i = 0; i < 256; ++i) wire += publish_packet(1024, 0, Version::v3_1_1);
  const DecoderLimits limits{};
  for (auto _ : state) {
    std::string_view rest(wire);
    while (!rest.empty()) {
      auto result = decode(rest, Version::v3_1_1, limits);
      rest.remove_prefix(result.consumed);
      benchmark::DoNotOptimize(result.packet);
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * wire.size()));
  state.SetItemsProcessed(state.iterations() * 256);
}
BENCHMARK(BM_DecodePublishStream);

void BM_EncodePublish(benchmark::State& state) {
  Publish p;
  p.qos = 1;
  p.topic = "sensors/eu/building-7/floor-3/temperature";
  p.packet_id = 4711;
  p.payload = std::string(static_cast<std::size_t>(state.range(0)), 'x');
  std::string out;
  for (auto _ : state) {
    out.clear();
    encode(p, Version::v3_1_1, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}
BENCHMARK(BM_EncodePublish)->Arg(1024);

}  // namespace
