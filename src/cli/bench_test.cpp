#include <gtest/gtest.h>

#include <random>
#include <string>

#include "cli/bench_footprint.hpp"
#include "cli/bench_histogram.hpp"
#include "cli/bench_ledger.hpp"
#include "cli/bench_options.hpp"
#include "cli/bench_process.hpp"
#include "cli/bench_report.hpp"

namespace carrier::cli::bench {
namespace {

// ---- histogram -------------------------------------------------------------------------------

TEST(BenchHistogram, BucketsCoverEveryValueContiguously) {
  EXPECT_EQ(Histogram::bucket_of(0), 0u);
  EXPECT_EQ(Histogram::bucket_of(127), 127u);
  for (std::size_t b = 1; b < Histogram::kBucketCount; ++b) {
    ASSERT_EQ(Histogram::bucket_low(b), Histogram::bucket_high(b - 1) + 1) << b;
  }
  EXPECT_EQ(Histogram::bucket_high(Histogram::kBucketCount - 1), UINT64_MAX);
  EXPECT_EQ(Histogram::bucket_of(UINT64_MAX), Histogram::kBucketCount - 1);
}

TEST(BenchHistogram, ValuesLandInTheirBucketWithinOneSixtyFourth) {
  std::mt19937_64 random(42);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t v = random() >> (random() % 64);
    const std::size_t b = Histogram::bucket_of(v);
    ASSERT_LE(Histogram::bucket_low(b), v);
    ASSERT_GE(Histogram::bucket_high(b), v);
    const double width = static_cast<double>(Histogram::bucket_high(b) - Histogram::bucket_low(b) + 1);
    if (v >= 128) {
      ASSERT_LE(width / static_cast<double>(Histogram::bucket_low(b)), 1.0 / 64 + 1e-12) << v;
    }
  }
}

TEST(BenchHistogram, ExactBelow128) {
  Histogram h;
  for (std::uint64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
  EXPECT_EQ(h.percentile(0.5), 50u);
  EXPECT_EQ(h.percentile(0.9), 90u);
  EXPECT_EQ(h.percentile(0.99), 99u);
  EXPECT_EQ(h.percentile(1.0), 100u);
  EXPECT_EQ(h.percentile(0.0), 1u);
}

TEST(BenchHistogram, PercentilesWithinPrecisionOfTheTrueOnes) {
  Histogram h;
  // 1..1,000,000 ns once each: the q-quantile is q * 1e6.
  for (std::uint64_t v = 1; v <= 1000000; ++v) h.record(v);
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double truth = q * 1e6;
    const double got = static_cast<double>(h.percentile(q));
    EXPECT_GE(got, truth) << q;
    EXPECT_LE(got, truth * (1 + 1.0 / 64)) << q;
  }
  EXPECT_EQ(h.percentile(1.0), 1000000u);  // clamped to the max, not the bucket end
}

TEST(BenchHistogram, MergeEqualsRecordingEverythingInOne) {
  Histogram a, b, all;
  for (std::uint64_t v = 0; v < 5000; ++v) {
    (v % 3 ? a : b).record(v * 977);
    all.record(v * 977);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  for (double q : {0.1, 0.5, 0.99, 0.999}) EXPECT_EQ(a.percentile(q), all.percentile(q));
}

TEST(BenchHistogram, EmptyIsZero) {
  Histogram h;
  EXPECT_EQ(h.percentile(0.99), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
}

// ---- stamp and ledger ------------------------------------------------------------------------

TEST(BenchStamp, RoundTrips) {
  std::string body(64, 'x');
  write_stamp(body.data(), Stamp{0xdeadbeef, 7, 0x0102030405060708ull, 987654321012345ull});
  auto s = read_stamp(body);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->run_id, 0xdeadbeefu);
  EXPECT_EQ(s->producer, 7u);
  EXPECT_EQ(s->sequence, 0x0102030405060708ull);
  EXPECT_EQ(s->send_ns, 987654321012345ull);
  EXPECT_EQ(body.substr(kStampSize), std::string(32, 'x'));
  EXPECT_FALSE(read_stamp(body.substr(0, kStampSize - 1)));
  EXPECT_FALSE(read_stamp(std::string(64, 'x')));
}

TEST(BenchLedger, CountsDuplicatesAndMissing) {
  Ledger l(2);
  EXPECT_TRUE(l.record(0, 0));
  EXPECT_TRUE(l.record(0, 1));
  EXPECT_FALSE(l.record(0, 1));  // duplicate
  EXPECT_TRUE(l.record(0, 200));
  EXPECT_TRUE(l.record(1, 5));
  EXPECT_FALSE(l.record(2, 0));  // unknown producer
  EXPECT_EQ(l.deliveries(), 5u);
  EXPECT_EQ(l.duplicates(), 1u);
  EXPECT_EQ(l.unknown_producer(), 1u);
  EXPECT_EQ(l.distinct(), 4u);
  // Producer 0 sent 201 (0..200): 198 missing; producer 1 sent 6: 5 missing.
  EXPECT_EQ(l.missing({201, 6}), 198u + 5u);
  EXPECT_EQ(l.beyond({201, 6}), 0u);
  EXPECT_EQ(l.beyond({200, 5}), 2u);  // 200 and 5 were never sent
  EXPECT_EQ(l.missing({0, 0}), 0u);
}

TEST(BenchLedger, AllReceivedMeansNothingMissing) {
  Ledger l(1);
  for (std::uint64_t s = 0; s < 1000; ++s) l.record(0, 999 - s);
  EXPECT_EQ(l.missing({1000}), 0u);
  EXPECT_EQ(l.missing({1001}), 1u);
  EXPECT_EQ(l.duplicates(), 0u);
}

TEST(BenchAccount, QueueSharesMessagesAcrossConsumers) {
  std::vector<Ledger> consumers(2, Ledger(1));
  for (std::uint64_t s = 0; s < 100; ++s) consumers[s % 2].record(0, s);
  auto a = account(Kind::queue, consumers, {100});
  EXPECT_EQ(a.expected, 100u);
  EXPECT_EQ(a.deliveries, 100u);
  EXPECT_EQ(a.missing, 0u);
  EXPECT_EQ(a.duplicates, 0u);
  consumers[0].record(0, 1);  // delivered to both consumers: a duplicate across them
  a = account(Kind::queue, consumers, {101});
  EXPECT_EQ(a.duplicates, 1u);
  EXPECT_EQ(a.missing, 1u);  // 100 never arrived
}

TEST(BenchAccount, TopicWantsEverythingAtEveryConsumer) {
  std::vector<Ledger> consumers(3, Ledger(2));
  for (auto& c : consumers) {
    for (std::uint64_t s = 0; s < 10; ++s) {
      c.record(0, s);
      c.record(1, s);
    }
  }
  consumers[2].record(1, 3);
  auto a = account(Kind::topic, consumers, {10, 11});
  EXPECT_EQ(a.expected, 63u);
  EXPECT_EQ(a.deliveries, 61u);
  EXPECT_EQ(a.missing, 3u);     // producer 1's seq 10, at each of the three
  EXPECT_EQ(a.duplicates, 1u);
}

TEST(BenchAccount, NoConsumersNoExpectations) {
  auto a = account(Kind::queue, {}, {10});
  EXPECT_EQ(a.expected, 0u);
  EXPECT_EQ(a.missing, 0u);
}

// ---- options ---------------------------------------------------------------------------------

TEST(BenchOptions, PresetThenExplicitFlags) {
  RawOptions raw;
  raw.preset = "s2";
  auto o = resolve(raw, 1);
  ASSERT_TRUE(o) << o.error().detail;
  EXPECT_EQ(o->preset, "S2");
  EXPECT_EQ(o->protocol, Protocol::stomp);
  EXPECT_TRUE(o->persistent);
  EXPECT_EQ(o->receipts, 1000u);
  EXPECT_EQ(o->ack, Ack::client_individual);
  EXPECT_EQ(o->size, 1024u);
  EXPECT_EQ(o->port, 61613);
  EXPECT_EQ(o->dest, "/queue/carrier-bench-00000001");

  raw.size = 4096;
  raw.receipts = 10;
  raw.count = 500;
  o = resolve(raw, 1);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->size, 4096u);
  EXPECT_EQ(o->receipts, 10u);
  EXPECT_EQ(o->count, 500u);
}

TEST(BenchOptions, WebSocketProtocolsUseThePresetOverTheHttpPort) {
  RawOptions raw;
  raw.preset = "M2";
  raw.protocol = "ws-mqtt";
  auto o = resolve(raw, 1);
  ASSERT_TRUE(o) << o.error().detail;
  EXPECT_EQ(o->protocol, Protocol::mqtt);
  EXPECT_TRUE(o->websocket);
  EXPECT_EQ(o->port, 8080);
  EXPECT_EQ(o->qos, 1u);
  EXPECT_EQ(o->protocol_name(), "ws-mqtt");
  EXPECT_NE(o->command_line().find("--protocol ws-mqtt"), std::string::npos);
  raw.preset = "S1";
  raw.protocol = "ws-stomp";
  o = resolve(raw, 1);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->protocol, Protocol::stomp);
  EXPECT_TRUE(o->websocket);
  raw.protocol = "ws-amqp";
  EXPECT_FALSE(resolve(raw, 1));
}

TEST(BenchOptions, MqttPresetsAndDefaults) {
  RawOptions raw;
  raw.preset = "M2";
  auto o = resolve(raw, 0xabc);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->protocol, Protocol::mqtt);
  EXPECT_EQ(o->port, 1883);
  EXPECT_EQ(o->qos, 1u);
  EXPECT_EQ(o->receipts, 1000u);
  EXPECT_EQ(o->dest, "carrier-bench/00000abc");
  raw.preset = "M3";
  o = resolve(raw, 1);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->consumers, 4u);
  EXPECT_EQ(o->kind, Kind::topic);
  EXPECT_EQ(o->size, 256u);
  raw.preset = "L2";
  raw.server = "localhost:11883";
  o = resolve(raw, 1);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->rate, 5000.0);
  EXPECT_EQ(o->host, "localhost");
  EXPECT_EQ(o->port, 11883);
}

TEST(BenchOptions, HttpDefaultsAndRefusals) {
  RawOptions raw;
  raw.protocol = "http";
  raw.receipts = 16;
  raw.persistent = true;
  auto o = resolve(raw, 0xabc);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->protocol, Protocol::http);
  EXPECT_EQ(o->port, 8080);
  EXPECT_EQ(o->dest, "carrier-bench-00000abc");  // a queue name in the URL
  EXPECT_EQ(o->receipts, 16u);                    // requests pipelined per producer
  EXPECT_NE(o->command_line().find("--protocol http"), std::string::npos);
  auto refused = [](RawOptions r) { return !resolve(r, 1).has_value(); };
  raw = {};
  raw.protocol = "http";
  raw.kind = "topic";  // consumers long-poll a queue
  EXPECT_TRUE(refused(raw));
  raw.kind.reset();
  raw.qos = 1;
  EXPECT_TRUE(refused(raw));
  raw.qos.reset();
  raw.ack = "client";
  EXPECT_TRUE(refused(raw));
  raw.ack.reset();
  raw.dest = "a/b";
  EXPECT_TRUE(refused(raw));
}

TEST(BenchOptions, RefusesBadCombinations) {
  auto refused = [](RawOptions raw) { return !resolve(raw, 1).has_value(); };
  RawOptions raw;
  EXPECT_FALSE(refused(raw));
  raw.size = 31;
  EXPECT_TRUE(refused(raw));
  raw = {};
  raw.qos = 1;  // STOMP
  EXPECT_TRUE(refused(raw));
  raw = {};
  raw.protocol = "mqtt";
  raw.persistent = true;
  EXPECT_TRUE(refused(raw));
  raw = {};
  raw.protocol = "mqtt";
  raw.receipts = 10;  // QoS 0
  EXPECT_TRUE(refused(raw));
  raw = {};
  raw.preset = "X9";
  EXPECT_TRUE(refused(raw));
  raw = {};
  raw.count = 1;
  raw.duration_s = 1;
  EXPECT_TRUE(refused(raw));
  raw = {};
  raw.producers = 0;
  EXPECT_TRUE(refused(raw));
  raw = {};
  raw.producers = 4;
  raw.count = 3;  // a producer without a message would run for --duration instead
  EXPECT_TRUE(refused(raw));
  raw.count = 4;
  EXPECT_FALSE(refused(raw));
  raw = {};
  raw.server = "127.0.0.1:0";
  EXPECT_TRUE(refused(raw));
}

TEST(BenchOptions, DestinationsFollowTheKind) {
  RawOptions raw;
  raw.dest = "orders";
  EXPECT_EQ(resolve(raw, 1)->dest, "/queue/orders");
  raw.kind = "topic";
  EXPECT_EQ(resolve(raw, 1)->dest, "/topic/orders");
  raw.dest = "/queue/x";
  EXPECT_EQ(resolve(raw, 1)->dest, "/queue/x");
}

TEST(BenchOptions, CommandLineReproducesTheRun) {
  RawOptions raw;
  raw.preset = "S3";
  raw.duration_s = 2;
  auto o = resolve(raw, 1);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->command_line(),
            "carrier bench --protocol stomp --server 127.0.0.1:61613 --producers 1 --consumers 4 --duration 2 "
            "--size 1024 --dest /topic/carrier-bench-00000001 --kind topic --ack auto --prefetch 1000");
}

TEST(BenchOptions, ConsumersMayConnectElsewhere) {
  RawOptions raw;
  raw.server = "127.0.0.1:61001";
  auto o = resolve(raw, 1);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->consumer_host, "127.0.0.1");  // the --server, by default
  EXPECT_EQ(o->consumer_port, 61001);
  EXPECT_EQ(o->command_line().find("--consumer-server"), std::string::npos);
  raw.consumer_server = "127.0.0.2:61002";
  o = resolve(raw, 1);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->consumer_host, "127.0.0.2");
  EXPECT_EQ(o->consumer_port, 61002);
  EXPECT_NE(o->command_line().find("--server 127.0.0.1:61001 --consumer-server 127.0.0.2:61002"), std::string::npos);
  raw.consumer_server = "127.0.0.2:99999";
  EXPECT_FALSE(resolve(raw, 1));
  raw.consumer_server = "127.0.0.2:61002";
  raw.protocol = "http";
  EXPECT_FALSE(resolve(raw, 1));
}

TEST(BenchOptions, Loopback) {
  EXPECT_TRUE(is_loopback("127.0.0.1"));
  EXPECT_TRUE(is_loopback("127.1.2.3"));
  EXPECT_TRUE(is_loopback("::1"));
  EXPECT_TRUE(is_loopback("localhost"));
  EXPECT_FALSE(is_loopback("10.0.0.1"));
  EXPECT_FALSE(is_loopback("8.8.8.8"));
}

// ---- report ----------------------------------------------------------------------------------

TEST(BenchReport, RatesAndVerdict) {
  RawOptions raw;
  raw.preset = "S1";
  auto o = resolve(raw, 1);
  ASSERT_TRUE(o);
  Totals t;
  t.sent = {6000, 4000};
  t.confirmed = 10000;
  t.confirmed_by = "disconnect receipt";
  t.accounting = Accounting{10000, 10000, 0, 0, 0};
  t.produce_s = 2.0;
  t.confirm_s = 2.5;
  t.consume_s = 4.0;
  for (std::uint64_t v = 1; v <= 100; ++v) t.latency.record(v * 1000);  // 1..100 us
  Report r = make_report(*o, t);
  EXPECT_EQ(r.sent, 10000u);
  EXPECT_DOUBLE_EQ(r.produce_rate, 5000.0);
  EXPECT_DOUBLE_EQ(r.confirm_rate, 4000.0);
  EXPECT_DOUBLE_EQ(r.consume_rate, 2500.0);
  EXPECT_NEAR(r.latency.p50_us, 50.0, 50.0 / 64);
  EXPECT_NEAR(r.latency.p99_us, 99.0, 99.0 / 64);
  EXPECT_DOUBLE_EQ(r.latency.max_us, 100.0);
  EXPECT_TRUE(r.passed());

  auto j = to_json(r);
  EXPECT_EQ(j["sent"], 10000);
  EXPECT_EQ(j["preset"], "S1");
  EXPECT_EQ(j["ok"], true);
  EXPECT_DOUBLE_EQ(j["latency_us"]["max"].get<double>(), 100.0);
  EXPECT_NE(to_text(r).find("result: ok"), std::string::npos);

  t.accounting.missing = 1;
  EXPECT_FALSE(make_report(*o, t).passed());
  t.accounting.missing = 0;
  t.accounting.duplicates = 2;
  EXPECT_FALSE(make_report(*o, t).passed());
  t.accounting.duplicates = 0;
  t.errors.push_back("consumer 0: lost");
  EXPECT_FALSE(make_report(*o, t).passed());
  EXPECT_EQ(to_json(make_report(*o, t))["ok"], false);
}

TEST(BenchReport, ZeroTimesGiveZeroRates) {
  Options o;
  Totals t;
  t.sent = {0};
  Report r = make_report(o, t);
  EXPECT_EQ(r.produce_rate, 0.0);
  EXPECT_EQ(r.consume_rate, 0.0);
  EXPECT_TRUE(r.passed());
}

TEST(BenchReport, HumanRates) {
  EXPECT_EQ(human_rate(950), "950");
  EXPECT_EQ(human_rate(1234), "1.23k");
  EXPECT_EQ(human_rate(45678), "45.7k");
  EXPECT_EQ(human_rate(2500000), "2.50M");
}


// ---- footprint -------------------------------------------------------------------------------

constexpr std::string_view kStatus =
    "Name:\tcarrier\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t4242\nPPid:\t1\n"
    "VmPeak:\t  301020 kB\nVmSize:\t  236480 kB\nVmHWM:\t    8812 kB\nVmRSS:\t    7544 kB\n"
    "RssAnon:\t    2100 kB\nRssFile:\t    5444 kB\nRssShmem:\t       0 kB\nThreads:\t4\n";

TEST(BenchFootprint, ParsesProcStatus) {
  const auto s = parse_proc_status(kStatus);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->rss_kib, 7544u);
  EXPECT_EQ(s->hwm_kib, 8812u);
  EXPECT_EQ(s->anon_kib, 2100u);
  EXPECT_EQ(s->file_kib, 5444u);
  EXPECT_EQ(s->shmem_kib, 0u);
  EXPECT_EQ(s->threads, 4u);
  EXPECT_EQ(s->processes, 1u);
  MemorySample total = *s;
  add(total, *s);
  EXPECT_EQ(total.rss_kib, 2 * 7544u);
  EXPECT_EQ(total.processes, 2u);
}

TEST(BenchFootprint, StatusWithoutRssIsNotAProcessToCount) {
  EXPECT_FALSE(parse_proc_status("Name:\tkworker/0:1\nState:\tI (idle)\nThreads:\t1\n"));
  EXPECT_FALSE(parse_proc_status(""));
}

TEST(BenchFootprint, ParsesParentPidPastOddCommandNames) {
  EXPECT_EQ(parse_stat_ppid("4242 (carrier) S 17 4242 17 0 -1"), 17);
  EXPECT_EQ(parse_stat_ppid("99 (a) b) (c) R 5 99 5 0"), 5);
  EXPECT_FALSE(parse_stat_ppid("garbage"));
}

TEST(BenchFootprint, ParsesCpuTicksAndPageFaultsPastOddCommandNames) {
  // A real line's shape: tpgid is -1 for a process without a terminal.
  const auto t = parse_stat_times("4242 (car rier) S 17 4242 17 0 -1 4194560 51234 0 3 0 170 95 0 0 20 0 5 0");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->minor_faults, 51234u);
  EXPECT_EQ(t->user_ticks, 170u);
  EXPECT_EQ(t->system_ticks, 95u);
  EXPECT_FALSE(parse_stat_times("4242 (carrier) S 17 4242 17 0 -1 4194560 51234"));  // cut short
  EXPECT_FALSE(parse_stat_times("4242 (carrier) S 17 4242 17 0 -1 4194560 x 0 3 0 170 95"));
  EXPECT_FALSE(parse_stat_times("garbage"));
}

TEST(BenchFootprint, StompHandshakeReplies) {
  using State = HandshakeReply::State;
  EXPECT_EQ(parse_handshake_reply(Protocol::stomp, "CONNECTED\nversion:1.2\n").state, State::need_more);
  EXPECT_EQ(parse_handshake_reply(Protocol::stomp, std::string("\nCONNECTED\nversion:1.2\n\n\0", 25)).state,
            State::connected);
  const auto refused =
      parse_handshake_reply(Protocol::stomp, std::string("ERROR\nmessage:bad login\n\nno\0", 28));
  EXPECT_EQ(refused.state, State::refused);
  EXPECT_EQ(refused.reason, "ERROR: bad login");
}

TEST(BenchFootprint, MqttHandshakeReplies) {
  using State = HandshakeReply::State;
  EXPECT_EQ(parse_handshake_reply(Protocol::mqtt, std::string("\x20\x02\x00", 3)).state, State::need_more);
  EXPECT_EQ(parse_handshake_reply(Protocol::mqtt, std::string("\x20\x02\x00\x00", 4)).state, State::connected);
  const auto refused = parse_handshake_reply(Protocol::mqtt, std::string("\x20\x02\x00\x05", 4));
  EXPECT_EQ(refused.state, State::refused);
  EXPECT_EQ(refused.reason, "CONNACK return code 5");
}

TEST(BenchFootprint, ConnectRequests) {
  const std::string stomp = connect_request(Protocol::stomp, "localhost", "", "", "x");
  EXPECT_EQ(stomp, std::string("CONNECT\naccept-version:1.2\nhost:localhost\nheart-beat:0,0\n\n\0", 59));
  const std::string mqtt = connect_request(Protocol::mqtt, "", "", "", "ab");
  // CONNECT, remaining length 14: "MQTT", level 4, clean session, keep-alive 0, client id "ab".
  EXPECT_EQ(mqtt, std::string("\x10\x0e\x00\x04MQTT\x04\x02\x00\x00\x00\x02" "ab", 16));
}

FootprintResult measured(unsigned connections, std::uint64_t idle_kib, std::uint64_t loaded_kib) {
  FootprintResult r;
  r.server = "127.0.0.1:61613";
  r.pid = 4242;
  r.command = "carrier serve";
  r.listen_ms = 11.5;
  r.start_ms = 12.0;
  r.idle = MemorySample{idle_kib, idle_kib, 1000, idle_kib - 1000, 0, 4, 1};
  r.connections_requested = r.connections = connections;
  r.loaded = MemorySample{loaded_kib, loaded_kib, loaded_kib - 5000, 5000, 0, 4, 1};
  r.closed = r.idle;
  return r;
}

TEST(BenchFootprint, JudgesTheThreeTargets) {
  const auto v = judge(measured(10000, 8 * 1024, 60 * 1024));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].name, "idle_rss_mib");
  EXPECT_DOUBLE_EQ(*v[0].measured, 8.0);
  EXPECT_TRUE(*v[0].met);
  EXPECT_EQ(v[1].name, "start_ms");
  EXPECT_TRUE(*v[1].met);
  EXPECT_EQ(v[2].name, "connections_rss_mib");
  EXPECT_DOUBLE_EQ(*v[2].measured, 60.0);
  EXPECT_FALSE(v[2].extrapolated);
  EXPECT_TRUE(*v[2].met);

  auto slow = measured(10000, 12 * 1024, 200 * 1024);
  slow.start_ms = 80;
  for (const auto& verdict : judge(slow)) EXPECT_FALSE(*verdict.met) << verdict.name;
}

TEST(BenchFootprint, ExtrapolatesFromFewerConnections) {
  // 100 connections cost 1 MiB: 10 KiB each, so 10,000 would add 100,000 KiB to the idle 8 MiB.
  const auto v = judge(measured(100, 8 * 1024, 9 * 1024));
  EXPECT_TRUE(v[2].extrapolated);
  EXPECT_NEAR(*v[2].measured, 8.0 + 10000 * 10.24 / 1024, 1e-9);
  EXPECT_FALSE(*v[2].met);
}

TEST(BenchFootprint, WithoutAStartTimeThatTargetIsNotJudged) {
  auto r = measured(10000, 8 * 1024, 60 * 1024);
  r.start_ms.reset();
  r.listen_ms.reset();
  r.command.clear();
  const auto v = judge(r);
  EXPECT_FALSE(v[1].measured);
  EXPECT_FALSE(v[1].met);
  const auto j = to_json(r);
  EXPECT_TRUE(j["start_ms"].is_null());
  EXPECT_TRUE(j["targets"]["start_ms"]["met"].is_null());
  EXPECT_TRUE(j["targets_met"].get<bool>());
  EXPECT_NE(to_text(r).find("not measured (--pid)"), std::string::npos);
}

TEST(BenchFootprint, JsonCarriesEveryReading) {
  const auto j = to_json(measured(10000, 8 * 1024, 48 * 1024));
  EXPECT_EQ(j["mode"], "footprint");
  EXPECT_EQ(j["protocol"], "stomp");
  EXPECT_EQ(j["connections"], 10000);
  EXPECT_EQ(j["idle"]["rss_kib"], 8 * 1024);
  EXPECT_EQ(j["loaded"]["rss_kib"], 48 * 1024);
  EXPECT_EQ(j["bytes_per_connection"], 4194);  // 40 MiB / 10,000
  EXPECT_DOUBLE_EQ(j["targets"]["connections_rss_mib"]["measured"].get<double>(), 48.0);
  EXPECT_TRUE(j["targets_met"].get<bool>());
  EXPECT_TRUE(j["ok"].get<bool>());
}

TEST(BenchFootprint, IncompleteWhenConnectionsFailed) {
  auto r = measured(10000, 8 * 1024, 48 * 1024);
  r.connections = 1019;
  r.errors.push_back("connection 1020: Too many open files");
  EXPECT_FALSE(r.complete());
  EXPECT_FALSE(to_json(r)["ok"].get<bool>());
  EXPECT_NE(to_text(r).find("result: incomplete"), std::string::npos);
}

TEST(BenchProcess, SplitsHostAndPort) {
  auto v4 = split_host_port("127.0.0.1:61613");
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->first, "127.0.0.1");
  EXPECT_EQ(v4->second, 61613);
  auto v6 = split_host_port("[::1]:1883");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->first, "::1");
  EXPECT_EQ(v6->second, 1883);
  EXPECT_FALSE(split_host_port("localhost"));
  EXPECT_FALSE(split_host_port("localhost:0"));
  EXPECT_FALSE(split_host_port("localhost:65536"));
  EXPECT_FALSE(split_host_port("localhost:61613x"));
  EXPECT_FALSE(split_host_port("localhost:"));
}

}  // namespace
}  // namespace carrier::cli::bench
