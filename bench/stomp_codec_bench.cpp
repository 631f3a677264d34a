// STOMP codec throughput: decoding a typical 1 KiB SEND (as the broker does for every frame a
// producer sends) and encoding a MESSAGE (for every delivery).

#include <benchmark/benchmark.h>

#include <string>

#include "stomp/codec/decoder.hpp"
#include "stomp/codec/encoder.hpp"

namespace {

using namespace carrier::stomp::codec;

// Headers as a JMS-style client (stomp.py, ActiveMQ's Java client) sends them.
const Headers kSendHeaders = {
    {"destination", "/queue/orders.eu.incoming"},
    {"content-type", "application/json"},
    {"persistent", "true"},
    {"priority", "4"},
    {"correlation-id", "c7a4f0e2-1b7e-4a55-9d4e-0c1f7a9b2e33"},
    {"reply-to", "/temp-queue/replies"},
    {"receipt", "message-12345"},
};

std::string send_frame(std::size_t body_size, bool with_content_length) {
  std::string wire;
  Headers headers = kSendHeaders;
  const std::string body(body_size, 'x');
  if (!with_content_length) {
    // Hand-built, since the encoder always declares the length of a non-empty body.
    wire = "SEND\n";
    for (const auto& [name, value] : headers) wire += name + ":" + value + "\n";
    wire += "\n" + body + '\0';
    return wire;
  }
  encode(Command::send, headers, body, Version::v1_2, wire);
  return wire;
}

void decode_frames(benchmark::State& state, const std::string& wire) {
  for (auto _ : state) {
    auto step = decode(wire, Version::v1_2, {});
    benchmark::DoNotOptimize(step);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * wire.size()));
  state.SetItemsProcessed(state.iterations());
}

void BM_DecodeSend(benchmark::State& state) {
  decode_frames(state, send_frame(static_cast<std::size_t>(state.range(0)), true));
}
BENCHMARK(BM_DecodeSend)->Arg(0)->Arg(1024)->Arg(64 << 10);

void BM_DecodeSendNoContentLength(benchmark::State& state) {
  decode_frames(state, send_frame(static_cast<std::size_t>(state.range(0)), false));
}
BENCHMARK(BM_DecodeSendNoContentLength)->Arg(1024);

// A buffer of many back-to-back frames, consumed as a session's read loop would.
void BM_DecodeSendStream(benchmark::State& state) {
  const std::string one = send_frame(1024, true);
  std::string stream;
  for (int i = 0; i < 64; ++i) stream += one;
  for (auto _ : state) {
    std::string_view rest = stream;
    while (!rest.empty()) {
      auto step = decode(rest, Version::v1_2, {});
      if (!step || !step->frame) break;
      rest.remove_prefix(step->consumed);
      benchmark::DoNotOptimize(step);
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * stream.size()));
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_DecodeSendStream);

void BM_EncodeMessage(benchmark::State& state) {
  Headers headers = kSendHeaders;
  headers.emplace_back("subscription", "sub-0");
  headers.emplace_back("message-id", "018f3c1e-7b2a-7c4d-8e9f-0a1b2c3d4e5f");
  headers.emplace_back("ack", "018f3c1e-7b2a-7c4d-8e9f-0a1b2c3d4e5f");
  const std::string body(static_cast<std::size_t>(state.range(0)), 'x');
  std::string out;
  std::size_t bytes = 0;
  for (auto _ : state) {
    out.clear();  // reuse the capacity, as a connection's write buffer does
    encode(Command::message, headers, body, Version::v1_2, out);
    bytes += out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeMessage)->Arg(1024)->Arg(64 << 10);

}  // namespace
