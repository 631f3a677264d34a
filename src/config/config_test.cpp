#include "config/config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "config/config_test_support.hpp"

namespace carrier::config {
namespace {

using namespace testing;

void expect_defaults(const Config& c) {
  EXPECT_EQ(c.log_level, "info");
  EXPECT_EQ(c.net.shards, 0u);
  EXPECT_TRUE(c.stomp_listener.enabled);
  EXPECT_EQ(c.stomp_listener.host, "127.0.0.1");
  EXPECT_EQ(c.stomp_listener.port, 61613);
  EXPECT_EQ(c.stomp.max_frame_bytes, 16u << 20);
  EXPECT_EQ(c.stomp.max_headers, 1000u);
  EXPECT_EQ(c.stomp.heartbeat_ms, 10000u);
  EXPECT_EQ(c.stomp.heartbeat_min_ms, 100u);
  EXPECT_EQ(c.stomp.max_transaction_bytes, 16u << 20);
  EXPECT_EQ(c.stomp.max_transaction_messages, 100000u);
  EXPECT_EQ(c.stomp.max_transactions, 16u);
  EXPECT_TRUE(c.core.auto_create);
  EXPECT_TRUE(c.core.queues.empty());
  EXPECT_EQ(c.core.prefetch_auto, 1000u);
  EXPECT_EQ(c.core.prefetch_client, 100u);
  EXPECT_EQ(c.store.kind, "log");
  EXPECT_EQ(c.store.data_dir, "carrier-data");
  EXPECT_EQ(c.store.segment_bytes, 64ull << 20);
  EXPECT_TRUE(c.store.fsync);
  EXPECT_EQ(c.store.disk_free_limit_bytes, 64ull << 20);
  EXPECT_EQ(c.store.recovery, store::RecoveryMode::strict);
  EXPECT_EQ(c.store.sqlite_synchronous, store::SqliteSynchronous::full);
  EXPECT_EQ(c.store.postgres_url, "");
  EXPECT_EQ(c.store.postgres_schema, "carrier");
}

// ---- defaults and every key -----------------------------------------------------------------

TEST(ConfigDefaults, EmptyDocumentGivesDefaults) { expect_defaults(parse_ok("")); }

TEST(ConfigDefaults, CommentsOnlyGiveDefaults) { expect_defaults(parse_ok("# nothing here\n\n")); }

TEST(ConfigDefaults, LoadWithoutFileOrFlagsGivesDefaults) {
  auto loaded = load(Flags{});
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  expect_defaults(*loaded);
}

TEST(ConfigDefaults, EmptyTablesGiveDefaults) { expect_defaults(parse_ok("[stomp]\n[core]\n[journal]\n")); }

TEST(ConfigParse, EveryKey) {
  const Config c = parse_ok(R"(
log_level = "debug"
shards = 3
data_dir = "/var/lib/carrier"
store = "memory"

[stomp]
listen = "0.0.0.0:1234"
max_frame_bytes = 1024
max_headers = 7
heartbeat_ms = 0
heartbeat_min_ms = 250

[core]
auto_create = false
queues = ["orders", "orders.eu"]
prefetch_auto = 5
prefetch_client = 1

[journal]
segment_bytes = 4096
fsync = false
recovery = "skip-corrupt"
)");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.net.shards, 3u);
  EXPECT_EQ(c.store.data_dir, "/var/lib/carrier");
  EXPECT_EQ(c.store.kind, "memory");
  EXPECT_TRUE(c.stomp_listener.enabled);
  EXPECT_EQ(c.stomp_listener.host, "0.0.0.0");
  EXPECT_EQ(c.stomp_listener.port, 1234);
  EXPECT_EQ(c.stomp.max_frame_bytes, 1024u);
  EXPECT_EQ(c.stomp.max_headers, 7u);
  EXPECT_EQ(c.stomp.heartbeat_ms, 0u);
  EXPECT_EQ(c.stomp.heartbeat_min_ms, 250u);
  EXPECT_FALSE(c.core.auto_create);
  EXPECT_EQ(c.core.queues, (std::vector<std::string>{"orders", "orders.eu"}));
  EXPECT_EQ(c.core.prefetch_auto, 5u);
  EXPECT_EQ(c.core.prefetch_client, 1u);
  EXPECT_EQ(c.store.segment_bytes, 4096u);
  EXPECT_FALSE(c.store.fsync);
  EXPECT_EQ(c.store.recovery, store::RecoveryMode::skip_corrupt);
}

TEST(ConfigParse, EveryLogLevelAndStoreKind) {
  for (const char* level : {"trace", "debug", "info", "warn", "error", "off"}) {
    EXPECT_EQ(parse_ok(std::string("log_level = \"") + level + "\"").log_level, level);
  }
  for (const char* kind : {"log", "sqlite", "postgres", "memory"}) {
    EXPECT_EQ(parse_ok(std::string("store = \"") + kind + "\"").store.kind, kind);
  }
  EXPECT_EQ(parse_ok("[journal]\nrecovery = \"strict\"").store.recovery, store::RecoveryMode::strict);
}

TEST(ConfigParse, DottedKeysAndInlineTablesAreTables) {
  const Config c = parse_ok("stomp.listen = \"off\"\ncore = { auto_create = false, queues = [] }\n");
  EXPECT_FALSE(c.stomp_listener.enabled);
  EXPECT_FALSE(c.core.auto_create);
  EXPECT_TRUE(c.core.queues.empty());
}

TEST(ConfigParse, ListenOffKeepsTheRestOfTheDefaults) {
  const Config c = parse_ok("[stomp]\nlisten = \"off\"\n");
  EXPECT_FALSE(c.stomp_listener.enabled);
  EXPECT_EQ(c.stomp.max_frame_bytes, 16u << 20);
}

TEST(ConfigParse, TransactionBounds) {
  const Config c = parse_ok("[stomp]\nmax_transaction_bytes = 1048576\nmax_transaction_messages = 10\n"
                            "max_transactions = 2\n");
  EXPECT_EQ(c.stomp.max_transaction_bytes, 1048576u);
  EXPECT_EQ(c.stomp.max_transaction_messages, 10u);
  EXPECT_EQ(c.stomp.max_transactions, 2u);
  EXPECT_THAT(toml_error("[stomp]\nmax_transactions = 0"),
              StartsWith("'stomp.max_transactions' must be a positive integer, got 0"));
  EXPECT_THAT(toml_error("[stomp]\nmax_transaction_bytes = 1023"),
              StartsWith("'stomp.max_transaction_bytes' must be an integer >= 1024, got 1023"));
}

TEST(ConfigParse, LargestValuesFit) {
  const Config c = parse_ok("shards = 4294967295\n[stomp]\nheartbeat_ms = 4294967295\n"
                            "[journal]\nsegment_bytes = 9223372036854775807\n");
  EXPECT_EQ(c.net.shards, 4294967295u);
  EXPECT_EQ(c.stomp.heartbeat_ms, 4294967295u);
  EXPECT_EQ(c.store.segment_bytes, 9223372036854775807ull);
}

// ---- unknown keys ---------------------------------------------------------------------------

TEST(ConfigParse, SlowConsumerKeys) {
  const Config d = parse_ok("");
  EXPECT_EQ(d.stomp.max_pending_output_bytes, 4u << 20);
  EXPECT_EQ(d.stomp.slow_consumer, net::SlowConsumerPolicy::drop);
  EXPECT_EQ(d.mqtt.max_pending_output_bytes, 4u << 20);
  EXPECT_EQ(d.mqtt.slow_consumer, net::SlowConsumerPolicy::drop);
  const Config c = parse_ok("[stomp]\nmax_pending_output_bytes = 65536\nslow_consumer = \"disconnect\"\n"
                            "[mqtt]\nmax_pending_output_bytes = 1048576\nslow_consumer = \"drop\"\n");
  EXPECT_EQ(c.stomp.max_pending_output_bytes, 65536u);
  EXPECT_EQ(c.stomp.slow_consumer, net::SlowConsumerPolicy::disconnect);
  EXPECT_EQ(c.mqtt.max_pending_output_bytes, 1048576u);
  EXPECT_EQ(c.mqtt.slow_consumer, net::SlowConsumerPolicy::drop);
  EXPECT_THAT(toml_error("[stomp]\nmax_pending_output_bytes = 1000"), HasSubstr("'stomp.max_pending_output_bytes'"));
  EXPECT_THAT(toml_error("[mqtt]\nslow_consumer = \"block\""),
              StartsWith("'mqtt.slow_consumer' must be drop or disconnect, got \"block\""));
}

TEST(ConfigUnknownKey, AtTopLevelIsNamedWithItsLine) {
  EXPECT_EQ(toml_error("shards = 2\nshard = 2\n"), "unknown key 'shard' in carrier.toml:2:1");
}

TEST(ConfigUnknownKey, InsideATableIsNamedWithItsTable) {
  EXPECT_EQ(toml_error("[stomp]\nmax_frame_byte = 1024\n"),
            "unknown key 'stomp.max_frame_byte' in carrier.toml:2:1");
  EXPECT_THAT(toml_error("[core]\nqueue = [\"a\"]\n"), StartsWith("unknown key 'core.queue' in carrier.toml"));
  EXPECT_THAT(toml_error("[journal]\nsync = true\n"), StartsWith("unknown key 'journal.sync' in carrier.toml"));
}

TEST(ConfigUnknownKey, UnknownTableAndNestedTable) {
  EXPECT_THAT(toml_error("[amqp]\nlisten = \"off\"\n"), StartsWith("unknown key 'amqp' in carrier.toml:1:"));
  EXPECT_THAT(toml_error("[stomp.tls]\ncert = \"x\"\n"), StartsWith("unknown key 'stomp.tls' in carrier.toml"));
  EXPECT_THAT(toml_error("journal.fsync.now = true\n"), HasSubstr("'journal.fsync' must be true or false"));
}

TEST(ConfigUnknownKey, KeysAreCaseSensitive) {
  EXPECT_THAT(toml_error("Shards = 2\n"), StartsWith("unknown key 'Shards'"));
}

TEST(ConfigUnknownKey, ControlCharactersInAKeyAreEscaped) {
  EXPECT_THAT(toml_error("\"a\\u0001b\" = 1\n"), StartsWith("unknown key 'a\\x01b'"));
}

TEST(ConfigUnknownKey, FirstProblemInDocumentOrderIsReported) {
  // toml++ keeps a table's keys sorted; the error still names the first line.
  EXPECT_THAT(toml_error("zzz = 1\naaa = 1\n"), StartsWith("unknown key 'zzz'"));
}

// ---- wrong types ----------------------------------------------------------------------------

TEST(ConfigWrongType, NamesTheKeyTheValueAndTheLine) {
  EXPECT_EQ(toml_error("shards = \"x\""), "'shards' must be a positive integer, got \"x\" in carrier.toml:1:10");
  EXPECT_THAT(toml_error("shards = 1.5"), StartsWith("'shards' must be a positive integer, got 1.5"));
  EXPECT_THAT(toml_error("log_level = 3"), StartsWith("'log_level' must be one of trace, debug, info, warn, "
                                                      "error, off, got 3"));
  EXPECT_THAT(toml_error("data_dir = true"), StartsWith("'data_dir' must be a non-empty string, got true"));
  EXPECT_THAT(toml_error("store = [\"log\"]"), StartsWith("'store' must be one of log, sqlite, postgres, memory, got an array"));
  EXPECT_THAT(toml_error("stomp = 5"), StartsWith("'stomp' must be a table, got 5"));
  EXPECT_THAT(toml_error("[[core]]\n"), StartsWith("'core' must be a table, got an array"));
  EXPECT_THAT(toml_error("[stomp]\nlisten = 61613"), StartsWith("'stomp.listen' must be \"HOST:PORT\" or \"off\", got 61613"));
  EXPECT_THAT(toml_error("[stomp]\nheartbeat_ms = \"10s\""),
              StartsWith("'stomp.heartbeat_ms' must be a non-negative integer, got \"10s\""));
  EXPECT_THAT(toml_error("[core]\nauto_create = \"yes\""),
              StartsWith("'core.auto_create' must be true or false, got \"yes\" in carrier.toml:2:15"));
  EXPECT_THAT(toml_error("[core]\nqueues = \"a\""), StartsWith("'core.queues' must be an array of queue names, got \"a\""));
  EXPECT_THAT(toml_error("[core]\nqueues = [\"a\", 3]"), StartsWith("'core.queues[1]' must be a non-empty string, got 3"));
  EXPECT_THAT(toml_error("[core]\nqueues = [\"a\", \"\"]"), StartsWith("'core.queues[1]' must be a non-empty string, got \"\""));
  EXPECT_THAT(toml_error("[journal]\nfsync = 1"), StartsWith("'journal.fsync' must be true or false, got 1"));
  EXPECT_THAT(toml_error("[journal]\nsegment_bytes = 1979-05-27"),
              StartsWith("'journal.segment_bytes' must be an integer >= 4096, got 1979-05-27"));
}

TEST(ConfigWrongType, LongValuesAreCutShort) {
  const std::string detail = toml_error("log_level = \"" + std::string(1000, 'v') + "\"");
  EXPECT_THAT(detail, HasSubstr("vvv...\""));
  EXPECT_LT(detail.size(), 200u);
}

// ---- out of range ---------------------------------------------------------------------------

TEST(ConfigOutOfRange, LimitsAreNamed) {
  EXPECT_THAT(toml_error("shards = 0"), StartsWith("'shards' must be a positive integer, got 0"));
  EXPECT_THAT(toml_error("shards = -1"), StartsWith("'shards' must be a positive integer, got -1"));
  EXPECT_THAT(toml_error("shards = 4294967296"), StartsWith("'shards' must be at most 4294967295, got 4294967296"));
  EXPECT_THAT(toml_error("data_dir = \"\""), StartsWith("'data_dir' must be a non-empty string, got \"\""));
  EXPECT_THAT(toml_error("[stomp]\nmax_frame_bytes = 1023"),
              StartsWith("'stomp.max_frame_bytes' must be an integer >= 1024, got 1023"));
  EXPECT_THAT(toml_error("[stomp]\nmax_headers = 0"), StartsWith("'stomp.max_headers' must be a positive integer, got 0"));
  EXPECT_THAT(toml_error("[stomp]\nheartbeat_ms = -1"),
              StartsWith("'stomp.heartbeat_ms' must be a non-negative integer, got -1"));
  EXPECT_THAT(toml_error("[stomp]\nheartbeat_ms = 4294967296"),
              StartsWith("'stomp.heartbeat_ms' must be at most 4294967295, got 4294967296"));
  EXPECT_THAT(toml_error("[core]\nprefetch_auto = 0"), StartsWith("'core.prefetch_auto' must be a positive integer, got 0"));
  EXPECT_THAT(toml_error("[core]\nprefetch_client = 4294967296"),
              StartsWith("'core.prefetch_client' must be at most 4294967295"));
  EXPECT_THAT(toml_error("[core]\nmax_selector_bytes = 65537"),
              StartsWith("'core.max_selector_bytes' must be at most 65536, got 65537"));
  EXPECT_THAT(toml_error("[journal]\nsegment_bytes = 4095"),
              StartsWith("'journal.segment_bytes' must be an integer >= 4096, got 4095"));
}

TEST(ConfigOutOfRange, UnknownNamesAreRejected) {
  EXPECT_THAT(toml_error("log_level = \"verbose\""),
              StartsWith("'log_level' must be one of trace, debug, info, warn, error, off, got \"verbose\""));
  EXPECT_THAT(toml_error("log_level = \"INFO\""), StartsWith("'log_level' must be one of"));
  EXPECT_THAT(toml_error("store = \"mysql\""),
              StartsWith("'store' must be one of log, sqlite, postgres, memory, got \"mysql\""));
  EXPECT_THAT(toml_error("[sqlite]\nsynchronous = \"extra\""),
              StartsWith("'sqlite.synchronous' must be one of full, normal, off, got \"extra\""));
  EXPECT_THAT(toml_error("[postgres]\nschema = \"Carrier\""), StartsWith("'postgres.schema' must be a schema name"));
  EXPECT_THAT(toml_error("[postgres]\nurl = \"\""), StartsWith("'postgres.url' must be a non-empty string"));
  EXPECT_THAT(toml_error("[postgres]\nhost = \"db\""), StartsWith("unknown key 'postgres.host'"));
  EXPECT_THAT(toml_error("[journal]\nrecovery = \"lenient\""),
              StartsWith("'journal.recovery' must be strict or skip-corrupt, got \"lenient\""));
}

// ---- TOML syntax errors -----------------------------------------------------------------------

TEST(ConfigSyntax, ParseErrorCarriesFileLineAndColumn) {
  const std::string detail = toml_error("shards = 2\n\n[stomp]\nlisten = \n");
  EXPECT_THAT(detail, HasSubstr(" in carrier.toml:4:"));
}

TEST(ConfigSyntax, VariousBrokenDocuments) {
  EXPECT_THAT(toml_error("shards = 2\nshards = 3\n"), HasSubstr("carrier.toml:2:"));  // redefined key
  EXPECT_THAT(toml_error("[stomp\n"), HasSubstr("carrier.toml:1:"));
  EXPECT_THAT(toml_error("log_level = \"info\nshards = 1\n"), HasSubstr("carrier.toml:1:"));
  EXPECT_THAT(toml_error(std::string_view("shards = 1\n\0", 12)), HasSubstr("carrier.toml:2:"));
  EXPECT_THAT(toml_error("data_dir = \"\xff\"\n"), HasSubstr("carrier.toml:1:"));
}

TEST(ConfigSyntax, SourceNameIsTheOneGiven) {
  auto parsed = parse_toml("bogus = 1", "/etc/carrier/carrier.toml");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().detail, "unknown key 'bogus' in /etc/carrier/carrier.toml:1:1");
}

// ---- listen addresses -------------------------------------------------------------------------

TEST(ParseListen, AcceptedForms) {
  net::ListenerOptions l;
  ASSERT_TRUE(parse_listen("127.0.0.1:61613", "--stomp", l));
  EXPECT_TRUE(l.enabled);
  EXPECT_EQ(l.host, "127.0.0.1");
  EXPECT_EQ(l.port, 61613);

  ASSERT_TRUE(parse_listen("0.0.0.0:0", "--stomp", l));
  EXPECT_EQ(l.host, "0.0.0.0");
  EXPECT_EQ(l.port, 0);

  ASSERT_TRUE(parse_listen("localhost:65535", "--stomp", l));
  EXPECT_EQ(l.host, "127.0.0.1");
  EXPECT_EQ(l.port, 65535);

  ASSERT_TRUE(parse_listen("[::1]:61613", "--stomp", l));
  EXPECT_EQ(l.host, "::1");
  EXPECT_EQ(l.port, 61613);

  ASSERT_TRUE(parse_listen("[::]:1", "--stomp", l));
  EXPECT_EQ(l.host, "::");

  ASSERT_TRUE(parse_listen("off", "--stomp", l));
  EXPECT_FALSE(l.enabled);

  ASSERT_TRUE(parse_listen("10.1.2.3:8080", "--stomp", l));
  EXPECT_TRUE(l.enabled);
  EXPECT_EQ(l.host, "10.1.2.3");
  EXPECT_EQ(l.port, 8080);
}

TEST(ParseListen, RejectedFormsNameTheKeyAndLeaveTheOutputAlone) {
  for (const char* bad : {"abc", "", "OFF", "on", "61613", ":61613", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
                          "127.0.0.1:-1", "127.0.0.1:+1", "127.0.0.1:1x", "127.0.0.1: 1", " 127.0.0.1:1",
                          "127.0.0.1:99999999999999999999", "1.2.3.256:1", "1.2.3:1", "01.2.3.4:1",
                          "example.com:61613", "::1:61613", "[::1]61613", "[::1]:", "[::1", "[]:1",
                          "[127.0.0.1]:1", "[nothost]:1", "[::1]:65536", "localhost:port"}) {
    net::ListenerOptions l{true, "192.0.2.1", 7};
    auto status = parse_listen(bad, "--stomp", l);
    ASSERT_FALSE(status) << "accepted \"" << bad << "\"";
    EXPECT_EQ(status.error().code, Errc::invalid_argument);
    EXPECT_THAT(status.error().detail, StartsWith("--stomp: expected HOST:PORT or off")) << bad;
    EXPECT_THAT(status.error().detail, HasSubstr("got \"")) << bad;
    EXPECT_TRUE(l.enabled);
    EXPECT_EQ(l.host, "192.0.2.1");
    EXPECT_EQ(l.port, 7);
  }
}

TEST(ParseListen, NulBytesAreRejected) {
  net::ListenerOptions l;
  EXPECT_FALSE(parse_listen(std::string_view("127.0.0.1\0x:1", 13), "--stomp", l));
  EXPECT_FALSE(parse_listen(std::string_view("[::1\0x]:1", 10), "--stomp", l));
  EXPECT_FALSE(parse_listen(std::string_view("127.0.0.1:1\0", 12), "--stomp", l));
}

TEST(ParseListen, ExactMessages) {
  net::ListenerOptions l;
  EXPECT_EQ(parse_listen("abc", "--stomp", l).error().detail, "--stomp: expected HOST:PORT or off, got \"abc\"");
  EXPECT_THAT(parse_listen("127.0.0.1:70000", "--stomp", l).error().detail,
              HasSubstr("the port must be 1 to 65535, or 0 for any free port"));
  EXPECT_THAT(parse_listen("::1:61613", "--stomp", l).error().detail, HasSubstr("[::1]:61613"));
}

TEST(ParseListen, InTomlNamesTheKeyAndLine) {
  EXPECT_EQ(toml_error("[stomp]\nlisten = \"abc\""),
            "'stomp.listen' must be \"HOST:PORT\" or \"off\", got \"abc\" in carrier.toml:2:10");
  EXPECT_THAT(toml_error("[stomp]\nlisten = \"localhost:65536\""), StartsWith("'stomp.listen' must be"));
  const Config c = parse_ok("[stomp]\nlisten = \"[::1]:0\"");
  EXPECT_EQ(c.stomp_listener.host, "::1");
  EXPECT_EQ(c.stomp_listener.port, 0);
}

// ---- load: file and flags ---------------------------------------------------------------------

TEST(ConfigLoad, ReadsTheFile) {
  TempFile file("shards = 4\n[stomp]\nmax_frame_bytes = 2048\n");
  Flags flags;
  flags.config_file = file.path();
  auto loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->net.shards, 4u);
  EXPECT_EQ(loaded->stomp.max_frame_bytes, 2048u);
  EXPECT_EQ(loaded->log_level, "info");
}

TEST(ConfigLoad, FlagsOverrideTheFile) {
  TempFile file(R"(
log_level = "debug"
shards = 4
data_dir = "from-file"
store = "log"
[stomp]
listen = "127.0.0.1:1000"
max_headers = 9
[journal]
recovery = "strict"
)");
  Flags flags;
  flags.config_file = file.path();
  flags.stomp = "[::1]:2000";
  flags.data_dir = "from-flag";
  flags.store = "memory";
  flags.shards = 1;
  flags.log_level = "warn";
  flags.recover = "skip-corrupt";
  auto loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->stomp_listener.host, "::1");
  EXPECT_EQ(loaded->stomp_listener.port, 2000);
  EXPECT_EQ(loaded->store.data_dir, "from-flag");
  EXPECT_EQ(loaded->store.kind, "memory");
  EXPECT_EQ(loaded->net.shards, 1u);
  EXPECT_EQ(loaded->log_level, "warn");
  EXPECT_EQ(loaded->store.recovery, store::RecoveryMode::skip_corrupt);
  EXPECT_EQ(loaded->stomp.max_headers, 9u);  // no flag: the file's value stays
}

TEST(ConfigLoad, FlagOffDisablesAListenerTheFileSet) {
  TempFile file("[stomp]\nlisten = \"127.0.0.1:1000\"\n");
  Flags flags;
  flags.config_file = file.path();
  flags.stomp = "off";
  auto loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_FALSE(loaded->stomp_listener.enabled);
}

TEST(ConfigLoad, FlagsWithoutAFile) {
  Flags flags;
  flags.stomp = "localhost:0";
  flags.recover = "strict";
  auto loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->stomp_listener.host, "127.0.0.1");
  EXPECT_EQ(loaded->stomp_listener.port, 0);
  EXPECT_EQ(loaded->store.recovery, store::RecoveryMode::strict);
}

TEST(ConfigLoad, BadFlagsNameTheFlag) {
  auto error_of = [](Flags flags) {
    auto loaded = load(flags);
    EXPECT_FALSE(loaded);
    if (loaded) return std::string();
    EXPECT_EQ(loaded.error().code, Errc::invalid_argument);
    return loaded.error().detail;
  };
  Flags f;
  f.stomp = "abc";
  EXPECT_EQ(error_of(f), "--stomp: expected HOST:PORT or off, got \"abc\"");
  f = {};
  f.data_dir = "";
  EXPECT_THAT(error_of(f), StartsWith("--data-dir: "));
  f = {};
  f.store = "mysql";
  EXPECT_EQ(error_of(f), "--store: expected log, sqlite, postgres or memory, got \"mysql\"");
  f = {};
  f.store = "postgres";
  EXPECT_EQ(error_of(f), "store \"postgres\" needs a connection string: --postgres URL or [postgres] url");
  f = {};
  f.postgres = "";
  EXPECT_THAT(error_of(f), StartsWith("--postgres: expected a connection string"));
  f = {};
  f.shards = 0;
  EXPECT_EQ(error_of(f), "--shards: expected a positive integer, got \"0\"");
  f = {};
  f.log_level = "loud";
  EXPECT_EQ(error_of(f), "--log-level: expected one of trace, debug, info, warn, error, off, got \"loud\"");
  f = {};
  f.recover = "skip_corrupt";
  EXPECT_EQ(error_of(f), "--recover: expected strict or skip-corrupt, got \"skip_corrupt\"");
}

TEST(ConfigParse, StoreBackendTables) {
  const Config c = parse_ok(R"(
store = "postgres"
[sqlite]
synchronous = "normal"
[postgres]
url = "postgresql://carrier@127.0.0.1:5432/carrier"
schema = "broker_2"
)");
  EXPECT_EQ(c.store.kind, "postgres");
  EXPECT_EQ(c.store.sqlite_synchronous, store::SqliteSynchronous::normal);
  EXPECT_EQ(c.store.postgres_url, "postgresql://carrier@127.0.0.1:5432/carrier");
  EXPECT_EQ(c.store.postgres_schema, "broker_2");
  EXPECT_EQ(parse_ok("[sqlite]\nsynchronous = \"off\"").store.sqlite_synchronous, store::SqliteSynchronous::off);
}

TEST(ConfigLoad, PostgresFlagGivesTheUrl) {
  Flags flags;
  flags.store = "postgres";
  flags.postgres = "host=127.0.0.1 port=5432 dbname=carrier";
  auto loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->store.kind, "postgres");
  EXPECT_EQ(loaded->store.postgres_url, "host=127.0.0.1 port=5432 dbname=carrier");
}

TEST(ConfigLoad, MissingFileIsNamed) {
  Flags flags;
  flags.config_file = "/nonexistent/carrier-config-test/carrier.toml";
  auto loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, Errc::not_found);
  EXPECT_THAT(loaded.error().detail, HasSubstr("/nonexistent/carrier-config-test/carrier.toml"));
}

TEST(ConfigLoad, DirectoryIsNotAFile) {
  Flags flags;
  flags.config_file = std::filesystem::temp_directory_path();
  auto loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, HasSubstr(flags.config_file->string()));
}

TEST(ConfigLoad, FileErrorsNameThePath) {
  TempFile file("\n[stomp]\nmax_frame_byte = 1\n");
  Flags flags;
  flags.config_file = file.path();
  flags.log_level = "debug";
  auto loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().detail,
            "unknown key 'stomp.max_frame_byte' in " + file.path().string() + ":3:1");
}

TEST(ConfigParse, MemoryBudgetDefaultsToAQuarterOfRamAndTakesZero) {
  const auto ram = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_EQ(parse_ok("").core.memory_budget_bytes, ram / 4);
  EXPECT_EQ(default_memory_budget_bytes(), ram / 4);
  EXPECT_EQ(parse_ok("[core]\nmemory_budget_bytes = 1048576\n").core.memory_budget_bytes, 1048576u);
  EXPECT_EQ(parse_ok("[core]\nmemory_budget_bytes = 0\n").core.memory_budget_bytes, 0u);
  EXPECT_FALSE(parse_toml("[core]\nmemory_budget_bytes = -1\n", "t"));
  EXPECT_FALSE(parse_toml("[core]\nmemory_budget_bytes = \"1G\"\n", "t"));
}

TEST(ConfigParse, PageNonPersistentIsOnUnlessTurnedOff) {
  EXPECT_TRUE(parse_ok("").core.page_non_persistent);
  EXPECT_FALSE(parse_ok("[core]\npage_non_persistent = false\n").core.page_non_persistent);
  EXPECT_FALSE(parse_toml("[core]\npage_non_persistent = 0\n", "t"));
}

TEST(ConfigParse, Policies) {
  auto c = parse_ok(
      "[core]\nsweep_interval_ms = 250\nmemory_limit_bytes = 1048576\nmax_schedule_delay_ms = 86400000\n"
      "[[policy]]\nmatch = \"queue:orders.>\"\nredelivery_delay_ms = 300\nredelivery_multiplier = 1.5\n"
      "redelivery_jitter = 0\nmax_deliveries = 3\ndead_letter_queue = \"dead.{name}\"\noverflow = \"drop-oldest\"\n"
      "max_messages = 10\nttl_ms = 5000\nidle_expiry_ms = 60000\nexpired_to_dlq = true\n"
      "[[policy]]\nmatch = \"topic:>\"\n");
  EXPECT_EQ(c.core.sweep_interval_ms, 250u);
  EXPECT_EQ(c.core.memory_limit_bytes, 1048576u);
  EXPECT_EQ(c.core.max_schedule_delay_ms, 86400000u);
  EXPECT_EQ(c.core.max_selector_bytes, 4096u);  // the default
  EXPECT_EQ(c.core.subscriber_backlog_bytes, 8u << 20);  // the default
  EXPECT_EQ(c.core.subscriber_backlog_overflow, core::OverflowPolicy::block);
  ASSERT_EQ(c.core.policies.size(), 2u);
  const auto& p = c.core.policies[0];
  EXPECT_EQ(p.match, "queue:orders.>");
  EXPECT_EQ(p.redelivery_delay_ms, 300u);
  EXPECT_DOUBLE_EQ(p.redelivery_multiplier, 1.5);
  EXPECT_DOUBLE_EQ(p.redelivery_jitter, 0.0);
  EXPECT_EQ(p.max_deliveries, 3u);
  EXPECT_EQ(p.dead_letter_queue, "dead.{name}");
  EXPECT_EQ(p.overflow, core::OverflowPolicy::drop_oldest);
  EXPECT_EQ(p.max_messages, 10u);
  EXPECT_EQ(p.ttl_ms, 5000u);
  EXPECT_EQ(p.idle_expiry_ms, 60000u);
  EXPECT_TRUE(p.expired_to_dlq);
  EXPECT_EQ(c.core.policies[1].match, "topic:>");
}

TEST(ConfigParse, PolicyErrorsNameTheKey) {
  auto unknown = parse_toml("[[policy]]\nmatch = \"a\"\n[[policy]]\nmax_delivery = 3\n", "c.toml");
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().detail, HasSubstr("'policy[1].max_delivery'"));
  auto bad = parse_toml("[[policy]]\nredelivery_jitter = 2.0\n", "c.toml");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().detail, HasSubstr("'policy[0].redelivery_jitter' must be a number from 0 to 1"));
  auto overflow = parse_toml("[[policy]]\noverflow = \"drop\"\n", "c.toml");
  ASSERT_FALSE(overflow);
  EXPECT_THAT(overflow.error().detail, HasSubstr("'policy[0].overflow'"));
}

TEST(ConfigParse, SubscriberBacklog) {
  const Config c = parse_ok("[core]\nsubscriber_backlog_bytes = 1024\nsubscriber_backlog_overflow = \"drop-oldest\"\n");
  EXPECT_EQ(c.core.backlog_bound(), 1024u);
  EXPECT_EQ(c.core.subscriber_backlog_overflow, core::OverflowPolicy::drop_oldest);
  // A quarter of the memory limit at most: one subscriber alone cannot reach it.
  const Config limited = parse_ok("[core]\nmemory_limit_bytes = 4194304\n");
  EXPECT_EQ(limited.core.backlog_bound(), 1u << 20);
  auto bad = parse_toml("[core]\nsubscriber_backlog_overflow = \"reject\"\n", "c.toml");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().detail, HasSubstr("'core.subscriber_backlog_overflow'"));
}

// --- [mqtt] ------------------------------------------------------------------------------------

TEST(ConfigMqtt, Defaults) {
  const Config c = parse_ok("");
  EXPECT_TRUE(c.mqtt_listener.enabled);
  EXPECT_EQ(c.mqtt_listener.host, "127.0.0.1");
  EXPECT_EQ(c.mqtt_listener.port, 1883);
  EXPECT_EQ(c.mqtt.max_packet_size, 16u << 20);
  EXPECT_EQ(c.mqtt.receive_maximum, 100);
  EXPECT_EQ(c.mqtt.session_expiry_max, 0xFFFFFFFFu);
  EXPECT_EQ(c.mqtt.max_topic_levels, 128u);
  EXPECT_EQ(c.mqtt.max_subscriptions_per_session, 10000u);
}

TEST(ConfigMqtt, EveryKey) {
  const Config c = parse_ok(R"([mqtt]
listen = "0.0.0.0:11883"
max_packet_size = 65536
max_keep_alive = 120
receive_maximum = 10
max_inflight = 20
topic_alias_maximum = 0
session_expiry_max = 3600
connect_timeout_ms = 500
max_topic_levels = 8
max_subscriptions_per_session = 50
)");
  EXPECT_EQ(c.mqtt_listener.host, "0.0.0.0");
  EXPECT_EQ(c.mqtt_listener.port, 11883);
  EXPECT_EQ(c.mqtt.max_packet_size, 65536u);
  EXPECT_EQ(c.mqtt.max_keep_alive, 120);
  EXPECT_EQ(c.mqtt.receive_maximum, 10);
  EXPECT_EQ(c.mqtt.max_inflight, 20);
  EXPECT_EQ(c.mqtt.topic_alias_maximum, 0);
  EXPECT_EQ(c.mqtt.session_expiry_max, 3600u);
  EXPECT_EQ(c.mqtt.connect_timeout_ms, 500u);
  EXPECT_EQ(c.mqtt.max_topic_levels, 8u);
  EXPECT_EQ(c.mqtt.max_subscriptions_per_session, 50u);
  EXPECT_FALSE(parse_ok("[mqtt]\nlisten = \"off\"\n").mqtt_listener.enabled);
}

TEST(ConfigMqtt, BadValuesAreNamed) {
  EXPECT_THAT(toml_error("[mqtt]\nreceive_maximum = 0"), StartsWith("'mqtt.receive_maximum' must be a positive integer"));
  EXPECT_THAT(toml_error("[mqtt]\nreceive_maximum = 65536"), StartsWith("'mqtt.receive_maximum' must be at most 65535"));
  EXPECT_THAT(toml_error("[mqtt]\nmax_packet_size = 268435461"),
              StartsWith("'mqtt.max_packet_size' must be at most 268435460"));
  EXPECT_THAT(toml_error("[mqtt]\nmax_topic_levels = 0"), StartsWith("'mqtt.max_topic_levels' must be a positive integer"));
  EXPECT_THAT(toml_error("[mqtt]\nmax_subscriptions_per_session = 0"),
              StartsWith("'mqtt.max_subscriptions_per_session' must be a positive integer"));
  EXPECT_THAT(toml_error("[mqtt]\nlisten = \"nowhere\""), StartsWith("'mqtt.listen' must be \"HOST:PORT\" or \"off\""));
  EXPECT_THAT(toml_error("[mqtt]\nqos = 2"), StartsWith("unknown key 'mqtt.qos'"));
}

TEST(ConfigMqtt, FlagOverridesTheFile) {
  TempFile file("[mqtt]\nlisten = \"127.0.0.1:2000\"\n");
  Flags flags;
  flags.config_file = file.path();
  flags.mqtt = "off";
  auto loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_FALSE(loaded->mqtt_listener.enabled);
  flags.mqtt = "[::1]:0";
  loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->mqtt_listener.host, "::1");
  EXPECT_EQ(loaded->mqtt_listener.port, 0);
  flags.mqtt = "1883";
  loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, StartsWith("--mqtt: expected HOST:PORT or off"));
}

// --- [http] ------------------------------------------------------------------------------------

TEST(ConfigHttp, DefaultsAndEveryKey) {
  const Config d = parse_ok("");
  EXPECT_TRUE(d.http_listener.enabled);
  EXPECT_EQ(d.http_listener.port, 8080);
  EXPECT_EQ(d.http.max_body_bytes, d.stomp.max_frame_bytes);
  EXPECT_EQ(d.http.header_timeout_ms, 10000u);
  const Config c = parse_ok(R"([http]
listen = "0.0.0.0:18080"
max_header_bytes = 4096
max_body_bytes = 2048
header_timeout_ms = 500
idle_timeout_ms = 700
max_poll_messages = 50
max_poll_wait_ms = 0
max_batch_messages = 5
send_timeout_ms = 100
max_message_headers = 9
max_destination_levels = 4
)");
  EXPECT_EQ(c.http_listener.host, "0.0.0.0");
  EXPECT_EQ(c.http_listener.port, 18080);
  EXPECT_EQ(c.http.max_header_bytes, 4096u);
  EXPECT_EQ(c.http.max_body_bytes, 2048u);
  EXPECT_EQ(c.http.header_timeout_ms, 500u);
  EXPECT_EQ(c.http.idle_timeout_ms, 700u);
  EXPECT_EQ(c.http.max_poll_messages, 50u);
  EXPECT_EQ(c.http.max_poll_wait_ms, 0u);
  EXPECT_EQ(c.http.max_batch_messages, 5u);
  EXPECT_EQ(c.http.send_timeout_ms, 100u);
  EXPECT_EQ(c.http.max_message_headers, 9u);
  EXPECT_EQ(c.http.max_destination_levels, 4u);
  EXPECT_FALSE(parse_ok("[http]\nlisten = \"off\"\n").http_listener.enabled);
  EXPECT_THAT(toml_error("[http]\nmax_header_bytes = 10"), StartsWith("'http.max_header_bytes'"));
  EXPECT_THAT(toml_error("[http]\nmax_poll_messages = 0"), StartsWith("'http.max_poll_messages'"));
  EXPECT_THAT(toml_error("[http]\nport = 1"), StartsWith("unknown key 'http.port'"));
}

TEST(ConfigHttp, LeaseAndSubscriptionKeys) {
  const Config d = parse_ok("");
  EXPECT_EQ(d.http.max_leases, 100000u);
  EXPECT_EQ(d.http.max_leases_per_user, 10000u);
  EXPECT_EQ(d.http.min_lease_visibility_ms, 1000u);
  EXPECT_EQ(d.http.max_lease_visibility_ms, 43200000u);
  EXPECT_EQ(d.http.subscription_idle_timeout_ms, 86400000u);
  EXPECT_EQ(d.http.max_subscriptions, 10000u);
  const Config c = parse_ok(R"([http]
max_leases = 7
max_leases_per_user = 3
min_lease_visibility_ms = 10
max_lease_visibility_ms = 2000
subscription_idle_timeout_ms = 0
max_subscriptions = 2
)");
  EXPECT_EQ(c.http.max_leases, 7u);
  EXPECT_EQ(c.http.max_leases_per_user, 3u);
  EXPECT_EQ(c.http.min_lease_visibility_ms, 10u);
  EXPECT_EQ(c.http.max_lease_visibility_ms, 2000u);
  EXPECT_EQ(c.http.subscription_idle_timeout_ms, 0u);
  EXPECT_EQ(c.http.max_subscriptions, 2u);
  EXPECT_THAT(toml_error("[http]\nmin_lease_visibility_ms = 0"), StartsWith("'http.min_lease_visibility_ms'"));
}

TEST(ConfigHttp, EventStreamKeys) {
  const Config d = parse_ok("");
  EXPECT_EQ(d.http.events_keepalive_ms, 15000u);
  EXPECT_EQ(d.http.max_pending_output_bytes, d.stomp.max_pending_output_bytes);
  EXPECT_EQ(d.http.slow_consumer, net::SlowConsumerPolicy::drop);
  const Config c = parse_ok("[http]\nevents_keepalive_ms = 250\nmax_pending_output_bytes = 65536\n"
                            "slow_consumer = \"disconnect\"\n");
  EXPECT_EQ(c.http.events_keepalive_ms, 250u);
  EXPECT_EQ(c.http.max_pending_output_bytes, 65536u);
  EXPECT_EQ(c.http.slow_consumer, net::SlowConsumerPolicy::disconnect);
  EXPECT_THAT(toml_error("[http]\nevents_keepalive_ms = 5"), StartsWith("'http.events_keepalive_ms'"));
  EXPECT_THAT(toml_error("[http]\nslow_consumer = \"ignore\""), StartsWith("'http.slow_consumer'"));
  EXPECT_EQ(d.http.events_resume_window, 1000u);
  EXPECT_EQ(parse_ok("[http]\nevents_resume_window = 100000\n").http.events_resume_window, 100000u);
  EXPECT_THAT(toml_error("[http]\nevents_resume_window = 0"), StartsWith("'http.events_resume_window'"));
  EXPECT_THAT(toml_error("[http]\nevents_resume_window = 9223372036854775807"),
              StartsWith("'http.events_resume_window'"));
}

TEST(ConfigHttp, FlagOverridesTheFile) {
  TempFile file("[http]\nlisten = \"127.0.0.1:2000\"\n");
  Flags flags;
  flags.config_file = file.path();
  flags.http = "off";
  auto loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_FALSE(loaded->http_listener.enabled);
  flags.http = "8080";
  loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, StartsWith("--http: expected HOST:PORT or off"));
}


TEST(ConfigFrontDoor, DefaultsAndKeys) {
  const auto d = parse_ok("");
  EXPECT_EQ(d.net.max_connecting, 1000u);
  EXPECT_EQ(d.stomp.connect_timeout_ms, 5000u);
  EXPECT_EQ(d.stomp.max_connect_bytes, 64u << 10);
  EXPECT_EQ(d.mqtt.max_connect_packet_size, 64u << 10);
  EXPECT_EQ(d.auth.max_pending_suspect, 32u);
  EXPECT_EQ(d.auth.source_failure_limit, 10u);
  EXPECT_EQ(d.auth.failure_window_ms, 60000u);
  EXPECT_EQ(d.auth.total_failure_limit, 100u);
  EXPECT_EQ(d.auth.max_sources, 10000u);
  const auto c = parse_ok(R"(max_connecting = 7
[stomp]
connect_timeout_ms = 100
max_connect_bytes = 2048
[mqtt]
max_connect_packet_size = 128
[auth]
max_pending_suspect = 0
source_failure_limit = 3
failure_window_ms = 1000
total_failure_limit = 50
max_sources = 20
)");
  EXPECT_EQ(c.net.max_connecting, 7u);
  EXPECT_EQ(c.stomp.connect_timeout_ms, 100u);
  EXPECT_EQ(c.stomp.max_connect_bytes, 2048u);
  EXPECT_EQ(c.mqtt.max_connect_packet_size, 128u);
  EXPECT_EQ(c.auth.max_pending_suspect, 0u);
  EXPECT_EQ(c.auth.source_failure_limit, 3u);
  EXPECT_EQ(c.auth.failure_window_ms, 1000u);
  EXPECT_EQ(c.auth.total_failure_limit, 50u);
  EXPECT_EQ(c.auth.max_sources, 20u);
  EXPECT_THAT(toml_error("max_connecting = 0"), StartsWith("'max_connecting' must be a positive integer"));
  EXPECT_THAT(toml_error("[stomp]\nmax_connect_bytes = 10"), StartsWith("'stomp.max_connect_bytes' must be an integer >= 1024"));
  EXPECT_THAT(toml_error("[auth]\nsource_failure_limit = 0"),
              StartsWith("'auth.source_failure_limit' must be a positive integer"));
}

TEST(Config, LimitsPerSourceHaveDefaultsAndAreRead) {
  const auto d = parse_ok("");
  EXPECT_EQ(d.net.sources.max_connections, 60000u);
  EXPECT_TRUE(d.net.sources.exempt_loopback);
  EXPECT_EQ(d.net.sources.max_connections_per_source, 100u);
  EXPECT_EQ(d.net.sources.connection_rate_per_source, 20u);
  EXPECT_EQ(d.net.sources.connection_burst_per_source, 40u);
  EXPECT_EQ(d.net.sources.max_sources, 10000u);
  EXPECT_EQ(d.core.max_destinations, 100000u);
  EXPECT_EQ(d.stomp.max_messages_per_second, 0u);
  EXPECT_EQ(d.mqtt.max_messages_per_second, 0u);
  EXPECT_EQ(d.auth.failure_delay_max_ms, 10000u);
  const auto c = parse_ok(R"([limits]
max_connections = 50
max_connections_per_source = 5
connection_rate_per_source = 0
connection_burst_per_source = 7
max_sources = 9
exempt_loopback = false
max_destinations = 11
max_messages_per_second = 100
message_burst = 200
[auth]
failure_delay_max_ms = 0
)");
  EXPECT_EQ(c.net.sources.max_connections, 50u);
  EXPECT_EQ(c.net.sources.max_connections_per_source, 5u);
  EXPECT_EQ(c.net.sources.connection_rate_per_source, 0u);
  EXPECT_EQ(c.net.sources.connection_burst_per_source, 7u);
  EXPECT_EQ(c.net.sources.max_sources, 9u);
  EXPECT_FALSE(c.net.sources.exempt_loopback);
  EXPECT_EQ(c.core.max_destinations, 11u);
  EXPECT_EQ(c.stomp.max_messages_per_second, 100u);
  EXPECT_EQ(c.mqtt.max_messages_per_second, 100u);
  EXPECT_EQ(c.stomp.message_burst, 200u);
  EXPECT_EQ(c.mqtt.message_burst, 200u);
  EXPECT_EQ(c.auth.failure_delay_max_ms, 0u);
  EXPECT_THAT(toml_error("[limits]\nmax_connections_per_source = 0"),
              StartsWith("'limits.max_connections_per_source' must be a positive integer"));
  EXPECT_THAT(toml_error("[limits]\nmax_connection = 5"), HasSubstr("max_connection"));
}

}  // namespace
}  // namespace carrier::config
