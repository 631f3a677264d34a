#include "cli/serve.hpp"
#include "cli/serve_reload.hpp"
#include "cli/service_notify.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <iostream>
#include <map>
#include <thread>

#include "auth/acl.hpp"
#include "admin/admin_service.hpp"
#include "admin/disk_guard.hpp"
#include "admin/store_monitor.hpp"
#include "auth/authenticator.hpp"
#include "base/log_format.hpp"
#include "base/logging.hpp"
#include "config/config.hpp"
#include "core/broker.hpp"
#include "core/disk_alarm.hpp"
#include "federation/protocol.hpp"
#include "http/protocol.hpp"
#include "net/asio.hpp"
#include "net/connection.hpp"
#include "net/handshake_limit.hpp"
#include "net/shard_pool.hpp"
#include "net/tls_context.hpp"
#include "mqtt/protocol.hpp"
#include "protocol/protocol_set.hpp"
#include "stomp/protocol.hpp"
#include "store/store.hpp"

namespace carrier::cli {

namespace {

struct ServeFlags {
  config::Flags flags;
  std::string config_file;
  std::string stomp, mqtt, http, stomp_tls, mqtt_tls, https, federation, data_dir, store, postgres, log_level,
      log_format, recover;
  unsigned shards = 0;
};

// Runs `fn` on every shard and waits for all of them: used at start-up and shutdown only.
void on_every_shard(net::ShardPool& pool, const std::function<void()>& fn) {
  std::vector<std::future<void>> done;
  for (std::size_t i = 0; i < pool.shard_count(); ++i) {
    auto p = std::make_shared<std::promise<void>>();
    done.push_back(p->get_future());
    pool.post(model::ShardId(static_cast<std::uint32_t>(i)), [p, &fn] {
      fn();
      p->set_value();
    });
  }
  for (auto& f : done) f.wait();
}

std::size_t open_connections(net::ShardPool& pool) {
  std::atomic<std::size_t> n{0};
  on_every_shard(pool, [&n] { n += net::Connection::on_this_shard().size(); });
  return n.load();
}

// Every connection is a descriptor; the usual soft limit (1024) would cap a broker far below
// what it can hold, and the hard limit is what the administrator allows.
void raise_open_files_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  (void)::setrlimit(RLIMIT_NOFILE, &limit);
}

// SIGHUP: the ACL file read again; a bad one is logged and the rules in force stay.
void reload_acl(const auth::Options& options, auth::AccessControl& access) {
  auto log = logging::get("broker");
  if (options.acl_file.empty()) {
    log->info("SIGHUP: no [auth] acl_file to reload");
    return;
  }
  auto acl = auth::read_acl_file(options.acl_file);
  if (!acl) {
    log->error("SIGHUP: ACL not reloaded, the previous rules stay: {}", acl.error().detail);
    return;
  }
  log->info("SIGHUP: ACL reloaded from {} ({} rule(s))", options.acl_file.string(), acl->rule_count());
  access.replace(std::make_shared<const auth::Acl>(std::move(*acl)));
}

int serve(const config::Flags& flags) {
  auto log = logging::get("broker");
  raise_open_files_limit();
  auto cfg = config::load(flags);
  if (!cfg) {
    std::cerr << "carrier: " << cfg.error().detail << "\n";
    return 2;
  }
  (void)logging::set_level(cfg->log_level);
  (void)logging::set_format(cfg->log_format);
  const auto started = std::chrono::steady_clock::now();
  const unsigned shards = cfg->net.shards != 0 ? cfg->net.shards : std::max(1u, std::thread::hardware_concurrency());

  // Connections not yet logged in, STOMP and MQTT together. Made before the pool: a session
  // still held by a shard's io_context when the pool goes releases its slot here.
  // Made before the pool: sessions still held by a shard's io_context at the end point at it.
  admin::Service admin_service(cfg->admin, cfg->metrics);
  net::HandshakeLimit connecting(cfg->net.max_connecting);
  net::SourceLimiter sources(cfg->net.sources);  // [limits]: connections per address, every listener
  net::ShardPool pool(shards);  // its threads start later, once recovery is done
  // Before the store is touched: a bad hash stops the broker here, naming the user and where.
  auto authenticator = auth::Authenticator::create(cfg->auth, pool);
  if (!authenticator) {
    std::cerr << "carrier: " << authenticator.error().detail << "\n";
    return 2;
  }

  auto backend = store::make_store(cfg->store);
  if (!backend) {
    std::cerr << "carrier: " << backend.error().to_string() << "\n";
    return 1;
  }
  // Timed for /metrics and /readyz around whichever backend it is.
  auto monitored = std::make_unique<admin::StoreMonitor>(std::move(*backend));
  admin::StoreMonitor* monitor = monitored.get();
  std::unique_ptr<store::Store> store = std::move(monitored);
  if (auto st = store->open(); !st) {
    std::cerr << "carrier: cannot open the store: " << st.error().to_string() << "\n";
    return 1;
  }

  core::MemoryGauge memory(cfg->core.memory_limit_bytes);
  // The memory store holds every message anyway: nothing to page out to.
  const bool pages = cfg->store.kind != "memory" && cfg->core.memory_budget_bytes != 0;
  memory.set_budget(pages ? cfg->core.memory_budget_bytes : 0);
  core::DestinationPressure pressure;
  core::DestinationBudget destinations(cfg->core.max_destinations);
  // The stores that write to data_dir's disk watch its free space; PostgreSQL's disk is the
  // server's, and the memory store writes nothing.
  const bool watches_disk = cfg->store.kind == "log" || cfg->store.kind == "sqlite";
  core::DiskAlarm disk_alarm(watches_disk ? cfg->store.disk_free_limit_bytes : 0);
  admin::DiskGuard disk_guard(cfg->store.data_dir, disk_alarm);
  std::vector<std::unique_ptr<core::Broker>> brokers;
  for (unsigned i = 0; i < shards; ++i) {
    brokers.push_back(std::make_unique<core::Broker>(model::ShardId(i), pool, *store, cfg->core, core::Broker::Clock{},
                                                     &memory));
  }
  std::vector<core::Broker*> peers;
  for (auto& b : brokers) peers.push_back(b.get());
  for (auto& b : brokers) {
    b->set_peers(peers);
    b->set_pressure(&pressure);
    b->set_destination_budget(&destinations);
    if (watches_disk) b->set_disk_alarm(&disk_alarm);
  }
  // Producers paused at the memory limit, or at a full queue that blocks, read again once
  // consumers have drained enough (those still held back pause again at their next SEND).
  auto resume_everywhere = [&pool] {
    for (std::size_t i = 0; i < pool.shard_count(); ++i) {
      pool.post(model::ShardId(static_cast<std::uint32_t>(i)), [] {
        auto connections = net::Connection::on_this_shard();
        for (auto* c : connections) c->resume_reading();
      });
    }
  };
  memory.set_on_relief(resume_everywhere);
  pressure.set_on_relief(resume_everywhere);
  disk_alarm.set_on_relief(resume_everywhere);

  // Each enabled TLS listener's context, built now so a bad certificate stops start-up.
  std::vector<std::shared_ptr<net::TlsServer>> tls_servers;
  auto tls_listener = [&](std::string name, std::string_view protocol,
                          const net::ListenerOptions& listener) -> Result<protocol::TlsListener> {
    protocol::TlsListener tls{std::move(name), listener, nullptr};
    if (!listener.enabled) return tls;
    auto server = net::TlsServer::create(cfg->tls.for_listener(protocol));
    if (!server) return unexpected(Errc::invalid_argument, tls.name + ": " + server.error().detail);
    tls.server = *server;
    tls_servers.push_back(*server);
    return tls;
  };
  auto stomp_tls = tls_listener("stomp-tls", "stomp", cfg->stomp_tls_listener);
  auto mqtt_tls = tls_listener("mqtt-tls", "mqtt", cfg->mqtt_tls_listener);
  auto https = tls_listener("https", "http", cfg->http_tls_listener);
  for (const auto* tls : {&stomp_tls, &mqtt_tls, &https}) {
    if (!*tls) {
      std::cerr << "carrier: " << tls->error().detail << "\n";
      return 2;
    }
  }
  // Federation has one listener, TLS or not ([federation] tls): links are configured by
  // operators on both ends, so no old client needs a plain port beside the TLS one.
  std::shared_ptr<net::TlsServer> federation_tls;
  if (cfg->federation_listener.enabled && cfg->federation.tls) {
    auto server = net::TlsServer::create(cfg->tls.for_listener("federation"));
    if (!server) {
      std::cerr << "carrier: federation: " << server.error().detail << "\n";
      return 2;
    }
    federation_tls = *server;
    tls_servers.push_back(*server);
  }

  // The protocols the broker speaks, one registration each (docs/architecture.md).
  auth::Authenticator& auth = **authenticator;
  protocol::ProtocolSet protocols(pool);
  protocols.limit_sources(&sources);
  const protocol::Context context{pool, peers, auth, connecting, &protocols};
  protocols.add(stomp::make_protocol(context, cfg->stomp_listener, cfg->stomp), std::move(*stomp_tls));
  protocols.add(mqtt::make_protocol(context, cfg->mqtt_listener, cfg->mqtt), std::move(*mqtt_tls));
  admin_service.set_store(monitor);
  admin_service.set_memory(&memory);
  if (watches_disk) admin_service.set_disk_alarm(&disk_alarm);
  cfg->http.admin = &admin_service;
  protocols.add(http::make_protocol(context, cfg->http_listener, cfg->http), std::move(*https));
  auto federation = federation::make_protocol(context, pool, cfg->federation_listener, cfg->federation,
                                              cfg->store.data_dir, std::move(federation_tls));
  if (!federation) {
    std::cerr << "carrier: " << federation.error().detail << "\n";
    return 1;
  }
  if (*federation) protocols.add(std::move(*federation));

  // Recovery runs before any shard thread: each message goes straight into its owner's queue;
  // a protocol's own records (MQTT's sessions) to that protocol.
  std::size_t recovered = 0;
  notify_status("recovering the store");
  // Read before the line is logged: a pause right after it (a SIGSTOP on that cue) still counts.
  auto last_progress = std::chrono::steady_clock::now();
  log->info("recovering the {} store", cfg->store.kind);
  store::RecoverOptions recover_options;
  // Queues and durable subscriptions may come back as summaries, read back when needed; the
  // special keys (definitions, retained, scheduled topics, protocols' state) always in full.
  if (pages) recover_options.summary_only = [](std::string_view key) { return core::OwnedQueues::pageable_key(key); };
  // A store that can scan may hand back whole lanes of them as cold tails (a count and where
  // they start), so that start-up costs nothing per message (docs/storage.md, "Cold tails").
  std::uint64_t tails = 0;
  std::uint64_t tail_messages = 0;
  if (pages && store->can_scan()) {
    recover_options.tail = [&](store::RecoveredTail t) {
      ++tails;
      tail_messages += t.count;
      core::Broker::recover_tail(peers, t);
    };
  }
  auto st = store->recover(recover_options, [&](store::RecoveredMessage r) {
    // A summary is always a queue's (summary_only names no protocol's keys).
    if (!r.message || !protocols.recover(r.queue, *r.message)) core::Broker::recover(peers, std::move(r));
    // A long recovery says how far it is, once a second (the clock read every 4096 messages).
    if (++recovered % 4096 == 0 && std::chrono::steady_clock::now() - last_progress >= std::chrono::seconds(1)) {
      last_progress = std::chrono::steady_clock::now();
      log->info("recovery: {} message(s) put back in their queues so far", recovered);
    }
  });
  if (!st) {
    std::cerr << "carrier: recovery failed: " << st.error().to_string() << "\n";
    return 1;
  }
  core::Broker::recovered(peers);
  if (tails != 0) log->info("recovery: {} message(s) in {} cold tail(s), read back as consumers need them", tail_messages, tails);
  store->start();
  admin_service.set_recovered();

  // Every enabled listener binds now: an address in use stops start-up, naming it.
  if (auto ls = protocols.open(); !ls) {
    std::cerr << "carrier: " << ls.error().detail << "\n";
    store->close();
    return 1;
  }

  admin::BrokerInfo info{CARRIER_VERSION, cfg->store.kind, shards, started, {}};
  for (const auto& [name, ep] : protocols.listening()) {
    info.listeners.push_back(admin::ListenerInfo{std::string(name), ep.address().to_string(), ep.port()});
  }
  admin_service.set_info(std::move(info));  // before any shard runs: read-only from then on

  ConfigReload config_reload(flags, *cfg, config::read_settings(flags.config_file).value_or(config::Settings{}), auth,
                             peers, pool);
  if (watches_disk) config_reload.set_disk_alarm(&disk_alarm);
  if (cfg->store.kind != "memory") config_reload.set_memory(&memory);
  net::asio::io_context signals_context(1);
  net::asio::signal_set signals(signals_context, SIGINT, SIGTERM, SIGHUP);
  // The free disk is read once a second here, off the shards (a statvfs is cheap, but never one
  // per message); the first reading is taken before any client is let in.
  net::asio::steady_timer disk_timer(signals_context);
  std::function<void(const boost::system::error_code&)> on_disk_timer = [&](const boost::system::error_code& ec) {
    if (ec) return;
    disk_guard.poll();
    disk_timer.expires_after(std::chrono::seconds(1));
    disk_timer.async_wait(on_disk_timer);
  };
  if (watches_disk) {
    disk_guard.poll();
    disk_timer.expires_after(std::chrono::seconds(1));
    disk_timer.async_wait(on_disk_timer);
  }
  int received_signal = 0;
  // SIGHUP re-reads what may change without a restart (the ACL; the TLS certificates and keys,
  // which open connections keep; log level and format, policies, users); SIGINT and SIGTERM stop.
  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec,
                                                                              int sig) {
    if (ec) return;
    if (sig != SIGHUP) {
      received_signal = sig;
      disk_timer.cancel();  // so signals_context.run() returns
      return;
    }
    reload_acl(cfg->auth, auth.access());
    config_reload.reload();
    if (watches_disk) disk_guard.poll();  // a new limit judged at once
    for (const auto& server : tls_servers) {
      if (auto st = server->reload(); !st) {
        log->error("SIGHUP: TLS certificate not reloaded, the old one stays in use: {}", st.error().detail);
      } else {
        log->info("SIGHUP: TLS certificate {} reloaded; new connections use it", server->options().cert_file);
      }
    }
    signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);

  // Mosquitto 2's safe default: without users, only loopback listeners are open to everyone.
  if (!auth.has_users() && !cfg->auth.anonymous.value_or(false)) {
    for (const auto& [name, ep] : protocols.listening()) {
      if (ep.address().is_loopback()) continue;
      std::cerr << "carrier: " << name << " listens on " << ep.address().to_string() << ":" << ep.port()
                << ", which is not a loopback address, and no user is configured: add users ([auth] users_file or "
                   "[[auth.user]]) or set [auth] allow_anonymous = true to let anyone in\n";
      store->close();
      return 2;
    }
  }

  pool.start();
  on_every_shard(pool, [&brokers, &pool, &protocols] {
    brokers[pool.current()->value()]->start();
    protocols.start(*pool.current());
  });
  protocols.start_listening();
  admin_service.set_listening();
  for (const auto& [name, ep] : protocols.listening()) {
    log->info("{} listening on {}:{}", name, ep.address().to_string(), ep.port());
  }
  if (auth.has_users()) {
    log->info("authentication: {} user(s){}, anonymous clients {}", auth.user_count(),
              cfg->auth.users_file.empty() ? std::string() : " (users file " + cfg->auth.users_file.string() + ")",
              auth.allows_anonymous() ? "allowed" : "refused");
  } else {
    log->info("authentication: no users configured, every client is let in");
  }
  if (cfg->auth.acl) {
    log->info("authorization: ACL {} ({} rule(s)); what it does not allow is refused", cfg->auth.acl_file.string(),
              cfg->auth.acl->rule_count());
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  // PostgreSQL keeps its data on the server (schema in the log), the others in the data dir.
  const std::string where = cfg->store.kind == "postgres" ? "schema " + cfg->store.postgres_schema
                                                          : cfg->store.data_dir.string();
  log->info("carrier ready: {} shard(s), store '{}' in {}, {} message(s) recovered, started in {} ms", shards,
            cfg->store.kind, where, recovered, ms.count());
  notify_ready(std::to_string(recovered) + " message(s) recovered; listening");

  signals_context.run();
  log->info("received signal {}: shutting down", received_signal);
  notify_stopping();
  admin_service.set_stopping();

  // Stop accepting, say goodbye on every connection, give them a moment to flush.
  protocols.stop_listening();
  on_every_shard(pool, [] {
    auto connections = net::Connection::on_this_shard();  // a copy: shutdown() removes from it
    for (auto* c : connections) c->shutdown();
  });
  // The store closes once every connection is gone and every protocol has handed it what it
  // must (MQTT: the departing sessions' records and wills; close() then writes and syncs them).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while ((open_connections(pool) != 0 || !protocols.idle()) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // What the shards still hold once the connections are gone: durable state only, unless
  // something leaks. The first round lets the connections' last posted calls land.
  on_every_shard(pool, [] {});
  on_every_shard(pool, [&brokers, &pool, &log] {
    const auto s = brokers[pool.current()->value()]->stats();
    log->info("shard {} at shutdown: {} queue(s), {} topic subscription(s), {} named subscription(s), {} message(s) "
              "ready, {} unacked, {} scheduled, {} dropped from slow subscribers' backlogs",
              pool.current()->value(), s.queues, s.topic_subscriptions, s.named_subscriptions, s.messages_ready,
              s.messages_unacked, s.scheduled, s.backlog_dropped);
  });
  log->info("memory gauge at shutdown: {} byte(s)", memory.used());
  auth.stop();
  store->close();
  pool.force_stop();
  log->info("stopped");
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  auto* cmd = app.add_subcommand("serve", "Run the broker");
  cmd->add_option("--config", flags->config_file, "TOML configuration file");
  cmd->add_option("--stomp", flags->stomp, "STOMP listener HOST:PORT, or off");
  cmd->add_option("--mqtt", flags->mqtt, "MQTT listener HOST:PORT, or off");
  cmd->add_option("--http", flags->http, "HTTP listener HOST:PORT, or off");
  cmd->add_option("--stomp-tls", flags->stomp_tls, "STOMP over TLS listener HOST:PORT (usually 61614), or off");
  cmd->add_option("--mqtt-tls", flags->mqtt_tls, "MQTT over TLS listener HOST:PORT (usually 8883), or off");
  cmd->add_option("--https", flags->https, "HTTP over TLS listener HOST:PORT, or off");
  cmd->add_option("--federation", flags->federation, "Federation link listener HOST:PORT, or off (default)");
  cmd->add_option("--data-dir", flags->data_dir, "Data directory");
  cmd->add_option("--store", flags->store, "Store kind: log | sqlite | postgres | memory");
  cmd->add_option("--postgres", flags->postgres, "PostgreSQL connection string for --store postgres");
  cmd->add_option("--shards", flags->shards, "Number of shards (threads); default: cores");
  cmd->add_option("--log-level", flags->log_level, "trace | debug | info | warn | error | off");
  cmd->add_option("--log-format", flags->log_format, "text | json (one JSON object per line)");
  cmd->add_option("--recover", flags->recover, "strict | skip-corrupt");
  cmd->callback([flags, cmd] {
    config::Flags f;
    if (cmd->count("--config")) f.config_file = flags->config_file;
    if (cmd->count("--stomp")) f.stomp = flags->stomp;
    if (cmd->count("--mqtt")) f.mqtt = flags->mqtt;
    if (cmd->count("--http")) f.http = flags->http;
    if (cmd->count("--stomp-tls")) f.stomp_tls = flags->stomp_tls;
    if (cmd->count("--mqtt-tls")) f.mqtt_tls = flags->mqtt_tls;
    if (cmd->count("--https")) f.https = flags->https;
    if (cmd->count("--federation")) f.federation = flags->federation;
    if (cmd->count("--data-dir")) f.data_dir = flags->data_dir;
    if (cmd->count("--store")) f.store = flags->store;
    if (cmd->count("--postgres")) f.postgres = flags->postgres;
    if (cmd->count("--shards")) f.shards = flags->shards;
    if (cmd->count("--log-level")) f.log_level = flags->log_level;
    if (cmd->count("--log-format")) f.log_format = flags->log_format;
    if (cmd->count("--recover")) f.recover = flags->recover;
    std::exit(serve(f));
  });
}

}  // namespace carrier::cli
