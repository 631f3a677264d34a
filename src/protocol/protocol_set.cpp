#include "protocol/protocol_set.hpp"

#include "net/connection.hpp"

namespace carrier::protocol {

void ProtocolSet::add(std::unique_ptr<Protocol> protocol, TlsListener tls) {
  entries_.push_back(Entry{std::move(protocol), std::move(tls), nullptr, nullptr});
}

Protocol* ProtocolSet::find(std::string_view name) const {
  for (const auto& entry : entries_) {
    if (entry.protocol->name() == name) return entry.protocol.get();
  }
  return nullptr;
}

bool ProtocolSet::recover(std::string_view queue_key, const model::Message& message) {
  for (auto& entry : entries_) {
    if (entry.protocol->recover(queue_key, message)) return true;
  }
  return false;
}

void Protocol::accept(net::tcp::socket socket, model::ShardId shard, net::Admission admission) {
  auto connection = std::make_shared<net::Connection>(std::move(socket), shard, name());
  connection->admit(std::move(admission));
  start_session(std::move(connection));
}

Status ProtocolSet::open() {
  for (auto& entry : entries_) {
    if (entry.protocol->listener().enabled && !entry.listener) {
      auto listener = std::make_unique<net::Listener>(
          pool_, entry.protocol->name(),
          [protocol = entry.protocol.get()](net::tcp::socket socket, model::ShardId shard, net::Admission admission) {
            protocol->accept(std::move(socket), shard, std::move(admission));
          },
          sources_);
      if (auto st = listener->open(entry.protocol->listener()); !st) return st;
      entry.listener = std::move(listener);
    }
    if (entry.tls.listener.enabled && !entry.tls_listener) {
      // Each connection takes the context current when it is accepted (reload: SIGHUP).
      auto listener = std::make_unique<net::Listener>(
          pool_, entry.tls.name,
          [protocol = entry.protocol.get(), name = entry.tls.name, server = entry.tls.server](
              net::tcp::socket socket, model::ShardId shard, net::Admission admission) {
            auto connection = std::make_shared<net::Connection>(std::move(socket), shard, name, server->accept());
            connection->admit(std::move(admission));
            protocol->start_session(std::move(connection));
          },
          sources_);
      if (auto st = listener->open(entry.tls.listener); !st) return st;
      entry.tls_listener = std::move(listener);
    }
  }
  return ok();
}

void ProtocolSet::start(model::ShardId shard) {
  for (auto& entry : entries_) entry.protocol->start(shard);
}

void ProtocolSet::start_listening() {
  for (auto& entry : entries_) {
    if (entry.listener) entry.listener->start();
    if (entry.tls_listener) entry.tls_listener->start();
  }
}

std::vector<std::pair<std::string_view, net::tcp::endpoint>> ProtocolSet::listening() const {
  std::vector<std::pair<std::string_view, net::tcp::endpoint>> out;
  for (const auto& entry : entries_) {
    if (entry.listener) out.emplace_back(entry.protocol->name(), entry.listener->local_endpoint());
    if (entry.tls_listener) out.emplace_back(entry.tls.name, entry.tls_listener->local_endpoint());
  }
  return out;
}

void ProtocolSet::stop_listening() {
  for (auto& entry : entries_) {
    if (entry.listener) entry.listener->stop();
    if (entry.tls_listener) entry.tls_listener->stop();
  }
}

bool ProtocolSet::idle() const {
  for (const auto& entry : entries_) {
    if (!entry.protocol->idle()) return false;
  }
  return true;
}

}  // namespace carrier::protocol
