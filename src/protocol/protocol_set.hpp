#pragma once

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "net/listener.hpp"
#include "net/shard_pool.hpp"
#include "net/tls_context.hpp"
#include "protocol/protocol.hpp"

namespace carrier::protocol {

// A protocol's second listener, TLS ("stomp-tls" on 61614): the same sessions over TLS.
struct TlsListener {
  std::string name;
  net::ListenerOptions listener{false, "127.0.0.1", 0};
  std::shared_ptr<net::TlsServer> server;  // set when listener.enabled
};

// The protocols a broker runs, each with its listener, driven through the broker's life in
// registration order: recover() before the shards run, open() to bind, start() on each shard,
// start_listening() once they all run, then at shutdown stop_listening() and idle().
// Runs on: the main thread (start() on each shard; listeners accept on shard 0).
class ProtocolSet {
 public:
  explicit ProtocolSet(net::ShardPool& pool) : pool_(pool) {}
  ProtocolSet(const ProtocolSet&) = delete;
  ProtocolSet& operator=(const ProtocolSet&) = delete;

  void add(std::unique_ptr<Protocol> protocol, TlsListener tls = {});
  // Every listener opened after this counts its connections in `sources` (per-source limits).
  void limit_sources(net::SourceLimiter* sources) { sources_ = sources; }
  // The protocol registered as `name` ("stomp"), or null. Any shard may ask once start-up is over.
  Protocol* find(std::string_view name) const;

  // Start-up, before the shards run: hands the record to the first protocol that takes it
  // (true); false: no protocol did, it is the core's.
  bool recover(std::string_view queue_key, const model::Message& message);
  // Binds each enabled protocol's listener now, so an address in use stops start-up with the
  // listener's error ("stomp: cannot listen on HOST:PORT: ..."); the first failure is returned.
  Status open();
  // On `shard`, once it runs: each protocol's per-shard start.
  void start(model::ShardId shard);
  // Once every shard runs: the open listeners accept.
  void start_listening();
  // What listens where (open listeners only, in registration order), for the log and tests.
  std::vector<std::pair<std::string_view, net::tcp::endpoint>> listening() const;
  // Shutdown: stops accepting; established connections are untouched.
  void stop_listening();
  // Shutdown: every protocol has handed the store what it must.
  bool idle() const;

 private:
  struct Entry {
    std::unique_ptr<Protocol> protocol;
    TlsListener tls;
    // Made by open() when the protocol (its TLS listener) is enabled. Declared after
    // `protocol`, so destroyed before it: their accept handlers point at it.
    std::unique_ptr<net::Listener> listener;
    std::unique_ptr<net::Listener> tls_listener;
  };

  net::ShardPool& pool_;
  net::SourceLimiter* sources_ = nullptr;
  std::vector<Entry> entries_;
};

}  // namespace carrier::protocol
