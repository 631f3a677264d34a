#include "config/config.hpp"

#include <arpa/inet.h>
#include <unistd.h>
#include <fmt/format.h>
#include <toml++/toml.h>

#include "auth/token_file.hpp"
#include "auth/acl.hpp"
#include "auth/user_file.hpp"
#include "auth/user_syntax.hpp"
#include "config/field.hpp"
#include "config/toml_keys.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace carrier::config {
namespace {

constexpr std::string_view kSqliteSynchronous[] = {"full", "normal", "off"};

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kUint32Max = std::numeric_limits<std::uint32_t>::max();
constexpr std::int64_t kUnsignedMax = std::numeric_limits<unsigned>::max();

constexpr Key kStompKeys[] = {
    {"tls_listen", [](const Field& f, Config& c) { return read_listen(f, c.stomp_tls_listener); }},
    {"listen",
     [](const Field& f, Config& c) { return read_listen(f, c.stomp_listener); }},
    {"max_frame_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1024, kInt64Max), c.stomp.max_frame_bytes); }},
    {"max_headers",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kInt64Max), c.stomp.max_headers); }},
    {"heartbeat_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kUint32Max), c.stomp.heartbeat_ms); }},
    {"connect_timeout_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.stomp.connect_timeout_ms); }},
    {"max_connect_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1024, kInt64Max), c.stomp.max_connect_bytes); }},
    {"heartbeat_min_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 10, kUint32Max), c.stomp.heartbeat_min_ms); }},
    {"max_transaction_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1024, kInt64Max), c.stomp.max_transaction_bytes); }},
    {"max_transaction_messages",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kInt64Max), c.stomp.max_transaction_messages); }},
    {"max_subscriptions",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kInt64Max), c.stomp.max_subscriptions); }},
    {"max_destination_levels",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 65535), c.stomp.max_destination_levels); }},
    {"max_transactions",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kInt64Max), c.stomp.max_transactions); }},
    {"max_pending_output_bytes",
     [](const Field& f, Config& c) {
       return assign(read_integer(f, 64 * 1024, kInt64Max), c.stomp.max_pending_output_bytes);
     }},
    {"slow_consumer", [](const Field& f, Config& c) { return read_slow_consumer(f, c.stomp.slow_consumer); }},
};

constexpr std::int64_t kUint16Max = std::numeric_limits<std::uint16_t>::max();

constexpr Key kMqttKeys[] = {
    {"tls_listen", [](const Field& f, Config& c) { return read_listen(f, c.mqtt_tls_listener); }},
    {"listen",
     [](const Field& f, Config& c) { return read_listen(f, c.mqtt_listener); }},
    // At most the largest packet MQTT can express (a 268,435,455-byte remaining length + 5).
    {"max_packet_size",
     [](const Field& f, Config& c) { return assign(read_integer(f, 64, 268'435'460), c.mqtt.max_packet_size); }},
    {"max_keep_alive",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kUint16Max), c.mqtt.max_keep_alive); }},
    {"receive_maximum",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint16Max), c.mqtt.receive_maximum); }},
    {"max_inflight",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint16Max), c.mqtt.max_inflight); }},
    {"topic_alias_maximum",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kUint16Max), c.mqtt.topic_alias_maximum); }},
    {"session_expiry_max",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kUint32Max), c.mqtt.session_expiry_max); }},
    {"connect_timeout_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.mqtt.connect_timeout_ms); }},
    {"max_connect_packet_size",
     [](const Field& f, Config& c) {
       return assign(read_integer(f, 64, 268'435'460), c.mqtt.max_connect_packet_size);
     }},
    {"max_pending_output_bytes",
     [](const Field& f, Config& c) {
       return assign(read_integer(f, 64 * 1024, kInt64Max), c.mqtt.max_pending_output_bytes);
     }},
    {"slow_consumer", [](const Field& f, Config& c) { return read_slow_consumer(f, c.mqtt.slow_consumer); }},
    {"max_topic_levels",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint16Max), c.mqtt.max_topic_levels); }},
    {"max_subscriptions_per_session",
     [](const Field& f, Config& c) {
       return assign(read_integer(f, 1, kUint32Max), c.mqtt.max_subscriptions_per_session);
     }},
};

// [admin]: who may use the admin API (docs/admin.md).
constexpr Key kAdminKeys[] = {
    {"users", [](const Field& f, Config& c) { return assign(read_string_array(f, "user names"), c.admin.users); }},
    {"snapshot_max_age_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, 60'000), c.admin.snapshot_max_age_ms); }},
};

// [limits]: what one source address may take (docs/security.md, "Limits").
constexpr Key kLimitsKeys[] = {
    {"max_connections",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kInt64Max), c.net.sources.max_connections); }},
    {"max_connections_per_source",
     [](const Field& f, Config& c) {
       return assign(read_integer(f, 1, kInt64Max), c.net.sources.max_connections_per_source);
     }},
    {"connection_rate_per_source",
     [](const Field& f, Config& c) {
       return assign(read_integer(f, 0, 1'000'000), c.net.sources.connection_rate_per_source);
     }},
    {"connection_burst_per_source",
     [](const Field& f, Config& c) {
       return assign(read_integer(f, 1, 1'000'000), c.net.sources.connection_burst_per_source);
     }},
    {"max_sources",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 10'000'000), c.net.sources.max_sources); }},
    {"exempt_loopback",
     [](const Field& f, Config& c) { return assign(read_bool(f), c.net.sources.exempt_loopback); }},
    {"max_destinations",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kInt64Max), c.core.max_destinations); }},
    // One limit, both message protocols: STOMP SEND and MQTT PUBLISH.
    {"max_messages_per_second",
     [](const Field& f, Config& c) -> Status {
       auto n = read_integer(f, 0, 1'000'000'000);
       if (!n) return unexpected(std::move(n).error());
       c.stomp.max_messages_per_second = c.mqtt.max_messages_per_second = c.http.max_messages_per_second =
           static_cast<std::uint32_t>(*n);
       return ok();
     }},
    {"message_burst",
     [](const Field& f, Config& c) -> Status {
       auto n = read_integer(f, 0, 1'000'000'000);
       if (!n) return unexpected(std::move(n).error());
       c.stomp.message_burst = c.mqtt.message_burst = c.http.message_burst = static_cast<std::uint32_t>(*n);
       return ok();
     }},
};

// [metrics]: what /metrics exposes per destination (docs/metrics.md).
constexpr Key kMetricsKeys[] = {
    {"destinations",
     [](const Field& f, Config& c) {
       return assign(read_string_array(f, "destination names or patterns"), c.metrics.destinations);
     }},
    {"max_destination_series",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, 1000000), c.metrics.max_destination_series); }},
};

// [http]: the HTTP listener (docs/http.md).
constexpr Key kHttpKeys[] = {
    {"listen", [](const Field& f, Config& c) { return read_listen(f, c.http_listener); }},
    {"tls_listen", [](const Field& f, Config& c) { return read_listen(f, c.http_tls_listener); }},
    {"max_header_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1024, kUint32Max), c.http.max_header_bytes); }},
    {"max_body_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1024, kInt64Max), c.http.max_body_bytes); }},
    {"header_timeout_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.http.header_timeout_ms); }},
    {"idle_timeout_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.http.idle_timeout_ms); }},
    {"max_poll_messages",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 100000), c.http.max_poll_messages); }},
    {"max_poll_wait_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kUint32Max), c.http.max_poll_wait_ms); }},
    {"max_batch_messages",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kInt64Max), c.http.max_batch_messages); }},
    {"send_timeout_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.http.send_timeout_ms); }},
    {"max_message_headers",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kInt64Max), c.http.max_message_headers); }},
    {"max_destination_levels",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 65535), c.http.max_destination_levels); }},
    {"max_leases", [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), c.http.max_leases); }},
    {"max_leases_per_user",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), c.http.max_leases_per_user); }},
    {"min_lease_visibility_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.http.min_lease_visibility_ms); }},
    {"max_lease_visibility_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.http.max_lease_visibility_ms); }},
    {"subscription_idle_timeout_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), c.http.subscription_idle_timeout_ms); }},
    {"max_subscriptions",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), c.http.max_subscriptions); }},
    {"events_keepalive_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 100, kUint32Max), c.http.events_keepalive_ms); }},
    {"events_resume_window",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 100000), c.http.events_resume_window); }},
    {"max_pending_output_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 64 * 1024, kInt64Max), c.http.max_pending_output_bytes); }},
    {"slow_consumer", [](const Field& f, Config& c) { return read_slow_consumer(f, c.http.slow_consumer); }},
};

// [relay]: the seed-000 relay on the HTTP listener (docs/relay.md).
constexpr Key kRelayKeys[] = {
    {"max_lease_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.http.relay.max_lease_ms); }},
    {"max_peers", [](const Field& f, Config& c) { return assign(read_integer(f, 1, kInt64Max), c.http.relay.max_peers); }},
    {"max_pending",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.http.relay.max_pending); }},
    {"max_request_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 64, kInt64Max), c.http.relay.max_request_bytes); }},
    {"max_poll_wait_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kUint32Max), c.http.relay.max_poll_wait_ms); }},
    {"max_poll_messages",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 100000), c.http.relay.max_poll_messages); }},
    {"redeliver_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.http.relay.redeliver_ms); }},
    {"max_search_results",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 100000), c.http.relay.max_search_results); }},
    {"max_directory_entries",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kInt64Max), c.http.relay.max_directory_entries); }},
};

constexpr Key kCoreKeys[] = {
    {"auto_create", [](const Field& f, Config& c) { return assign(read_bool(f), c.core.auto_create); }},
    {"queues",
     [](const Field& f, Config& c) -> Status {
       const auto* array = f.node.as_array();
       if (array == nullptr) return f.must_be("an array of queue names");
       std::vector<std::string> queues;
       for (std::size_t i = 0; i < array->size(); ++i) {
         auto name = read_string(Field{f.source_name, fmt::format("{}[{}]", f.key, i), *array->get(i)});
         if (!name) return unexpected(std::move(name).error());
         queues.push_back(std::move(*name));
       }
       c.core.queues = std::move(queues);
       return ok();
     }},
    {"prefetch_auto",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.core.prefetch_auto); }},
    {"prefetch_client",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.core.prefetch_client); }},
    {"sweep_interval_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 10, kUint32Max), c.core.sweep_interval_ms); }},
    {"memory_limit_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), c.core.memory_limit_bytes); }},
    {"memory_budget_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), c.core.memory_budget_bytes); }},
    {"page_non_persistent",
     [](const Field& f, Config& c) { return assign(read_bool(f), c.core.page_non_persistent); }},
    {"subscriber_backlog_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), c.core.subscriber_backlog_bytes); }},
    {"subscriber_backlog_overflow",
     [](const Field& f, Config& c) -> Status {
       // Spelled as a policy's `overflow`; `reject` has no meaning for a publish others take.
       static constexpr std::string_view kOverflow[] = {"block", "drop-oldest"};
       auto name = read_name(f, kOverflow);
       if (!name) return unexpected(std::move(name).error());
       c.core.subscriber_backlog_overflow =
           *name == "block" ? core::OverflowPolicy::block : core::OverflowPolicy::drop_oldest;
       return ok();
     }},
    // At most 100 years: epoch ms plus the limit stays far from overflow.
    {"max_schedule_delay_ms",
     [](const Field& f, Config& c) {
       return assign(read_integer(f, 1, 3'153'600'000'000), c.core.max_schedule_delay_ms);
     }},
    {"max_selector_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 65536), c.core.max_selector_bytes); }},
};

// Each key of a [[policy]] table writes the policy being read: the last one in the list.
core::DestinationPolicy& policy(Config& c) { return c.core.policies.back(); }

constexpr Key kPolicyKeys[] = {
    {"match",
     [](const Field& f, Config& c) -> Status {
       auto text = read_string(f);
       if (!text) return unexpected(std::move(text).error());
       std::string_view pattern(*text);
       if (auto colon = pattern.find(':'); colon != std::string_view::npos) {
         const auto kind = pattern.substr(0, colon);
         if (kind != "queue" && kind != "topic") return f.must_be("\"queue:PATTERN\", \"topic:PATTERN\" or \"PATTERN\"");
         pattern.remove_prefix(colon + 1);
       }
       if (pattern.empty()) return f.must_be("\"queue:PATTERN\", \"topic:PATTERN\" or \"PATTERN\"");
       policy(c).match = std::move(*text);
       return ok();
     }},
    {"redelivery_delay_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kUint32Max), policy(c).redelivery_delay_ms); }},
    {"redelivery_multiplier",
     [](const Field& f, Config& c) { return assign(read_fraction(f, 1.0, 100.0), policy(c).redelivery_multiplier); }},
    {"redelivery_max_delay_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kUint32Max), policy(c).redelivery_max_delay_ms); }},
    {"redelivery_jitter",
     [](const Field& f, Config& c) { return assign(read_fraction(f, 0.0, 1.0), policy(c).redelivery_jitter); }},
    {"max_deliveries",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kUint32Max), policy(c).max_deliveries); }},
    {"dead_letter_queue",
     [](const Field& f, Config& c) -> Status {
       const auto* text = f.node.as_string();
       if (text == nullptr) return f.must_be("a queue name (\"\" to drop instead)");
       policy(c).dead_letter_queue = text->get();
       return ok();
     }},
    {"expired_to_dlq", [](const Field& f, Config& c) { return assign(read_bool(f), policy(c).expired_to_dlq); }},
    {"ttl_ms", [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), policy(c).ttl_ms); }},
    {"max_messages",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), policy(c).max_messages); }},
    {"max_bytes", [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), policy(c).max_bytes); }},
    {"overflow",
     [](const Field& f, Config& c) -> Status {
       static constexpr std::string_view kOverflow[] = {"reject", "drop-oldest", "block"};
       auto name = read_name(f, kOverflow);
       if (!name) return unexpected(std::move(name).error());
       policy(c).overflow = *name == "reject"        ? core::OverflowPolicy::reject
                            : *name == "drop-oldest" ? core::OverflowPolicy::drop_oldest
                                                     : core::OverflowPolicy::block;
       return ok();
     }},
    {"idle_expiry_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), policy(c).idle_expiry_ms); }},
};

constexpr Key kJournalKeys[] = {
    {"segment_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 4096, kInt64Max), c.store.segment_bytes); }},
    {"fsync", [](const Field& f, Config& c) { return assign(read_bool(f), c.store.fsync); }},
    {"disk_free_limit_bytes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kInt64Max), c.store.disk_free_limit_bytes); }},
    {"recovery",
     [](const Field& f, Config& c) -> Status {
       auto name = read_name(f, kRecoveryModes);
       if (!name) return unexpected(std::move(name).error());
       c.store.recovery = recovery_mode(*name);
       return ok();
     }},
};

constexpr Key kSqliteKeys[] = {
    {"synchronous",
     [](const Field& f, Config& c) -> Status {
       auto name = read_name(f, kSqliteSynchronous);
       if (!name) return unexpected(std::move(name).error());
       c.store.sqlite_synchronous = *name == "full"     ? store::SqliteSynchronous::full
                                    : *name == "normal" ? store::SqliteSynchronous::normal
                                                        : store::SqliteSynchronous::off;
       return ok();
     }},
};

// The same rule as store::postgres::check_schema_name, checked here so a bad name is reported
// with its file and line.
bool plain_schema_name(std::string_view name) {
  bool good = !name.empty() && name.size() <= 63 && !(name[0] >= '0' && name[0] <= '9');
  for (char ch : name) good = good && ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_');
  return good;
}

constexpr Key kPostgresKeys[] = {
    {"url", [](const Field& f, Config& c) { return assign(read_string(f), c.store.postgres_url); }},
    {"schema",
     [](const Field& f, Config& c) -> Status {
       auto name = read_string(f);
       if (!name) return unexpected(std::move(name).error());
       if (!plain_schema_name(*name)) {
         return f.must_be("a schema name of lower-case letters, digits and _ (not starting with a digit, at most 63)");
       }
       c.store.postgres_schema = std::move(*name);
       return ok();
     }},
};

// Each key of an [[auth.user]] table writes the user being read: the last one in the list.
auth::User& user(Config& c) { return c.auth.users.back(); }

constexpr Key kAuthUserKeys[] = {
    {"name",
     [](const Field& f, Config& c) -> Status {
       auto name = read_string(f);
       if (!name) return unexpected(std::move(name).error());
       if (auto problem = auth::user_name_problem(*name); !problem.empty()) return f.must_be("a user name (" + problem + ")");
       user(c).name = std::move(*name);
       return ok();
     }},
    {"password_hash",
     [](const Field& f, Config& c) -> Status {
       // The value is never echoed: it may be a plaintext password written by mistake.
       const auto* text = f.node.as_string();
       const auto problem = text == nullptr ? std::string("must be a string") : auth::password_hash_problem(text->get());
       if (!problem.empty()) {
         return unexpected(Errc::invalid_argument,
                           fmt::format("'{}' {}{}", escaped(f.key), problem, where(f.source_name, f.node.source())));
       }
       user(c).password_hash = text->get();
       return ok();
     }},
};

Status read_anonymous(const Field& f, Config& c) {
  auto value = read_bool(f);
  if (!value) return unexpected(std::move(value).error());
  if (c.auth.anonymous && *c.auth.anonymous != *value) return f.must_be("the same as the other of anonymous and allow_anonymous");
  c.auth.anonymous = *value;
  return ok();
}

constexpr Key kAuthKeys[] = {
    {"anonymous", read_anonymous},
    {"allow_anonymous", read_anonymous},
    {"acl_file",
     [](const Field& f, Config& c) -> Status {
       auto path = read_string(f);
       if (!path) return unexpected(std::move(path).error());
       if (path->empty()) return f.must_be("a path");
       c.auth.acl_file = std::move(*path);
       return ok();
     }},
    {"users_file",
     [](const Field& f, Config& c) -> Status {
       auto path = read_string(f);
       if (!path) return unexpected(std::move(path).error());
       c.auth.users_file = std::move(*path);
       return ok();
     }},
    {"tokens_file",
     [](const Field& f, Config& c) -> Status {
       auto path = read_string(f);
       if (!path) return unexpected(std::move(path).error());
       c.auth.tokens_file = std::move(*path);
       return ok();
     }},
    {"failure_delay_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, 60'000), c.auth.failure_delay_ms); }},
    {"failure_delay_max_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, 600'000), c.auth.failure_delay_max_ms); }},
    {"verify_threads",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 64), c.auth.verify_threads); }},
    {"max_pending",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.auth.max_pending); }},
    {"max_pending_suspect",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, kUint32Max), c.auth.max_pending_suspect); }},
    {"source_failure_limit",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.auth.source_failure_limit); }},
    {"failure_window_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.auth.failure_window_ms); }},
    {"total_failure_limit",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.auth.total_failure_limit); }},
    {"max_sources",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.auth.max_sources); }},
    {"user",
     [](const Field& f, Config& c) -> Status {
       const auto* array = f.node.as_array();
       if (array == nullptr) return f.must_be("an array of tables ([[auth.user]])");
       for (std::size_t i = 0; i < array->size(); ++i) {
         Field entry{f.source_name, fmt::format("{}[{}]", f.key, i), *array->get(i)};
         if (!entry.node.is_table()) return entry.must_be("a table");
         const auto at = where(f.source_name, entry.node.source());
         c.auth.users.push_back(auth::User{{}, {}, at.substr(4)});  // "carrier.toml:12:1", without " in "
         if (auto st = apply_table(entry, c, kAuthUserKeys); !st) return st;
         const auto& u = c.auth.users.back();
         if (u.name.empty() || u.password_hash.empty()) {
           return unexpected(Errc::invalid_argument,
                             fmt::format("'{}' needs both name and password_hash{}", entry.key, at));
         }
         for (std::size_t k = 0; k + 1 < c.auth.users.size(); ++k) {
           if (c.auth.users[k].name == u.name) {
             return unexpected(Errc::invalid_argument, fmt::format("user \"{}\" is defined twice, in {} and {}",
                                                                   auth::printable_name(u.name), c.auth.users[k].source,
                                                                   u.source));
           }
         }
       }
       return ok();
     }},
};

// [tls] and [tls.NAME]: which table a key is in decides which listener(s) it is for.
TlsSection::Keys& tls_keys(const Field& f, Config& c) {
  // "tls.cert_file" is every listener's; "tls.stomp.cert_file" the STOMP one's.
  const std::string_view key = f.key;
  const auto first = key.find('.');
  const auto last = key.rfind('.');
  if (first == last) return c.tls.all;
  return c.tls.listener[std::string(key.substr(first + 1, last - first - 1))];
}

constexpr Key kTlsListenerKeys[] = {
    {"cert_file", [](const Field& f, Config& c) { return assign(read_string(f), tls_keys(f, c).cert_file); }},
    {"key_file", [](const Field& f, Config& c) { return assign(read_string(f), tls_keys(f, c).key_file); }},
    {"ca_file", [](const Field& f, Config& c) { return assign(read_string(f), tls_keys(f, c).ca_file); }},
    {"client_certificates",
     [](const Field& f, Config& c) -> Status {
       static constexpr std::string_view kModes[] = {"none", "optional", "required"};
       auto mode = read_name(f, kModes);
       if (!mode) return unexpected(std::move(mode).error());
       tls_keys(f, c).client_certificates = *mode == "none"       ? net::ClientCertificates::none
                                            : *mode == "optional" ? net::ClientCertificates::optional
                                                                  : net::ClientCertificates::required;
       return ok();
     }},
    {"use_identity_as_username",
     [](const Field& f, Config& c) { return assign(read_bool(f), tls_keys(f, c).use_identity_as_username); }},
};

constexpr Key kTlsKeys[] = {
    kTlsListenerKeys[0], kTlsListenerKeys[1], kTlsListenerKeys[2], kTlsListenerKeys[3], kTlsListenerKeys[4],
    {"stomp", [](const Field& f, Config& c) { return apply_table(f, c, kTlsListenerKeys); }},
    {"mqtt", [](const Field& f, Config& c) { return apply_table(f, c, kTlsListenerKeys); }},
    {"http", [](const Field& f, Config& c) { return apply_table(f, c, kTlsListenerKeys); }},
    {"federation", [](const Field& f, Config& c) { return apply_table(f, c, kTlsListenerKeys); }},
};

// [federation] and its [[federation.link]]s (docs/federation.md).
constexpr Key kFederationLinkKeys[] = {
    {"name", [](const Field& f, Config& c) { return assign(read_string(f), c.federation.links.back().name); }},
    {"connect",
     [](const Field& f, Config& c) -> Status {
       net::ListenerOptions target;
       if (auto st = read_listen(f, target); !st) return st;
       if (!target.enabled) return f.must_be("\"HOST:PORT\"");
       c.federation.links.back().host = target.host;
       c.federation.links.back().port = target.port;
       return ok();
     }},
    {"username", [](const Field& f, Config& c) { return assign(read_string(f), c.federation.links.back().username); }},
    {"password", [](const Field& f, Config& c) { return assign(read_string(f), c.federation.links.back().password); }},
    {"cost",
     [](const Field& f, Config& c) { return assign(read_integer(f, 0, 1'000'000), c.federation.links.back().cost); }},
    {"tls", [](const Field& f, Config& c) { return assign(read_bool(f), c.federation.links.back().tls.enabled); }},
    {"ca_file",
     [](const Field& f, Config& c) { return assign(read_string(f), c.federation.links.back().tls.ca_file); }},
    {"server_name",
     [](const Field& f, Config& c) { return assign(read_string(f), c.federation.links.back().tls.server_name); }},
    {"cert_file",
     [](const Field& f, Config& c) { return assign(read_string(f), c.federation.links.back().tls.cert_file); }},
    {"key_file",
     [](const Field& f, Config& c) { return assign(read_string(f), c.federation.links.back().tls.key_file); }},
};

constexpr Key kFederationKeys[] = {
    {"listen", [](const Field& f, Config& c) { return read_listen(f, c.federation_listener); }},
    {"tls", [](const Field& f, Config& c) { return assign(read_bool(f), c.federation.tls); }},
    {"ttl", [](const Field& f, Config& c) { return assign(read_integer(f, 1, 255), c.federation.ttl); }},
    {"dedup_window",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 100'000'000), c.federation.dedup_window); }},
    {"reconnect_min_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 3'600'000), c.federation.reconnect_min_ms); }},
    {"reconnect_max_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 3'600'000), c.federation.reconnect_max_ms); }},
    {"max_bad_frames",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUint32Max), c.federation.max_bad_frames); }},
    {"establish_timeout_ms",
     [](const Field& f, Config& c) {
       return assign(read_integer(f, 100, 3'600'000), c.federation.establish_timeout_ms);
     }},
    {"max_in_flight",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 100'000), c.federation.max_in_flight); }},
    {"max_frame_bytes",
     [](const Field& f, Config& c) {
       return assign(read_integer(f, 64 * 1024, kUint32Max), c.federation.limits.max_frame_bytes);
     }},
    {"topic_backlog_idle_ms",
     [](const Field& f, Config& c) {
       return assign(read_integer(f, 1000, kUint32Max), c.federation.topic_backlog_idle_ms);
     }},
    {"reply_routes",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, 10'000'000), c.federation.reply_routes); }},
    {"reply_route_idle_ms",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1000, 86'400'000), c.federation.reply_route_idle_ms); }},
    {"link",
     [](const Field& f, Config& c) -> Status {
       const auto* array = f.node.as_array();
       if (array == nullptr) return f.must_be("an array of tables ([[federation.link]])");
       for (std::size_t i = 0; i < array->size(); ++i) {
         Field entry{f.source_name, fmt::format("{}[{}]", f.key, i), *array->get(i)};
         if (!entry.node.is_table()) return entry.must_be("a table");
         c.federation.links.emplace_back();
         if (auto st = apply_table(entry, c, kFederationLinkKeys); !st) return st;
         const auto& link = c.federation.links.back();
         if (link.name.empty() || link.port == 0) {
           return unexpected(Errc::invalid_argument, fmt::format("'{}' needs name and connect{}", entry.key,
                                                                 where(f.source_name, entry.node.source())));
         }
         if (auto problem = federation::link_tls_problem(link.tls); !problem.empty()) {
           return unexpected(Errc::invalid_argument,
                             fmt::format("'{}': {}{}", entry.key, problem, where(f.source_name, entry.node.source())));
         }
       }
       return ok();
     }},
};

constexpr Key kLogKeys[] = {
    {"format", [](const Field& f, Config& c) { return assign(read_name(f, kLogFormats), c.log_format); }},
};

constexpr Key kTopKeys[] = {
    {"log_level", [](const Field& f, Config& c) { return assign(read_name(f, kLogLevels), c.log_level); }},
    {"log", [](const Field& f, Config& c) { return apply_table(f, c, kLogKeys); }},
    {"shards",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kUnsignedMax), c.net.shards); }},
    {"max_connecting",
     [](const Field& f, Config& c) { return assign(read_integer(f, 1, kInt64Max), c.net.max_connecting); }},
    {"data_dir",
     [](const Field& f, Config& c) -> Status {
       auto dir = read_string(f);
       if (!dir) return unexpected(std::move(dir).error());
       c.store.data_dir = std::move(*dir);
       return ok();
     }},
    {"store", [](const Field& f, Config& c) { return assign(read_name(f, kStoreKinds), c.store.kind); }},
    {"stomp", [](const Field& f, Config& c) { return apply_table(f, c, kStompKeys); }},
    {"mqtt", [](const Field& f, Config& c) { return apply_table(f, c, kMqttKeys); }},
    {"http", [](const Field& f, Config& c) { return apply_table(f, c, kHttpKeys); }},
    {"relay", [](const Field& f, Config& c) { return apply_table(f, c, kRelayKeys); }},
    {"core", [](const Field& f, Config& c) { return apply_table(f, c, kCoreKeys); }},
    {"journal", [](const Field& f, Config& c) { return apply_table(f, c, kJournalKeys); }},
    {"sqlite", [](const Field& f, Config& c) { return apply_table(f, c, kSqliteKeys); }},
    {"postgres", [](const Field& f, Config& c) { return apply_table(f, c, kPostgresKeys); }},
    {"auth", [](const Field& f, Config& c) { return apply_table(f, c, kAuthKeys); }},
    {"tls", [](const Field& f, Config& c) { return apply_table(f, c, kTlsKeys); }},
    {"admin", [](const Field& f, Config& c) { return apply_table(f, c, kAdminKeys); }},
    {"limits", [](const Field& f, Config& c) { return apply_table(f, c, kLimitsKeys); }},
    {"metrics", [](const Field& f, Config& c) { return apply_table(f, c, kMetricsKeys); }},
    {"federation", [](const Field& f, Config& c) { return apply_table(f, c, kFederationKeys); }},
    {"policy",
     [](const Field& f, Config& c) -> Status {
       const auto* array = f.node.as_array();
       if (array == nullptr) return f.must_be("an array of tables ([[policy]])");
       for (std::size_t i = 0; i < array->size(); ++i) {
         Field entry{f.source_name, fmt::format("{}[{}]", f.key, i), *array->get(i)};
         if (!entry.node.is_table()) return entry.must_be("a table");
         c.core.policies.emplace_back();
         c.core.policies.back().match.clear();
         if (auto st = apply_table(entry, c, kPolicyKeys); !st) return st;
         if (c.core.policies.back().match.empty()) {
           return unexpected(Errc::invalid_argument, fmt::format("'{}.match' is required (which destinations the policy is for){}",
                                                                 entry.key, where(f.source_name, entry.node.source())));
         }
       }
       return ok();
     }},
};

}  // namespace

store::RecoveryMode recovery_mode(std::string_view name) {
  return name == "skip-corrupt" ? store::RecoveryMode::skip_corrupt : store::RecoveryMode::strict;
}

Status apply_toml(std::string_view text, std::string_view source_name, Config& config) {
  toml::table document;
  try {
    document = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    return unexpected(Errc::invalid_argument,
                      fmt::format("{}{}", printable(e.description()), where(source_name, e.source())));
  }
  return apply_entries(source_name, "", document, kTopKeys, config);
}

net::TlsOptions TlsSection::for_listener(std::string_view protocol) const {
  net::TlsOptions out;
  auto apply = [&out](const Keys& keys) {
    if (keys.cert_file) out.cert_file = *keys.cert_file;
    if (keys.key_file) out.key_file = *keys.key_file;
    if (keys.ca_file) out.ca_file = *keys.ca_file;
    if (keys.client_certificates) out.client_certificates = *keys.client_certificates;
    if (keys.use_identity_as_username) out.use_identity_as_username = *keys.use_identity_as_username;
  };
  apply(all);
  if (auto it = listener.find(protocol); it != listener.end()) apply(it->second);
  return out;
}

}  // namespace carrier::config
