#pragma once

#include <filesystem>
#include <memory>

#include "base/result.hpp"
#include "federation/options.hpp"
#include "net/options.hpp"
#include "net/shard_pool.hpp"
#include "net/tls_context.hpp"
#include "protocol/protocol.hpp"

namespace carrier::federation {

// Federation as one of the protocols `carrier serve` runs: its listener accepts links (each
// moved to shard 0, where the Node lives), its start on shard 0 dials the configured links, and
// every shard's Broker tells it of consumers coming and going. The node id is read from (or
// made in) `data_dir`. `tls` set: the listener speaks TLS with that certificate. Null
// (nothing to run) when federation is off: no listener, no links.
Result<std::unique_ptr<protocol::Protocol>> make_protocol(const protocol::Context& context, net::ShardPool& pool,
                                                          net::ListenerOptions listener, Options options,
                                                          const std::filesystem::path& data_dir,
                                                          std::shared_ptr<net::TlsServer> tls = nullptr);

}  // namespace carrier::federation
