#include "protocol/protocol_set.hpp"

namespace carrier::protocol {

void ProtocolSet::add(std::unique_ptr<Protocol> protocol) { entries_.push_back(Entry{std::move(protocol), nullptr}); }

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

Status ProtocolSet::open() {
  for (auto& entry : entries_) {
    if (!entry.protocol->listener().enabled || entry.listener) continue;
    auto listener = std::make_unique<net::Listener>(
        pool_, entry.protocol->name(), [protocol = entry.protocol.get()](net::tcp::socket socket, model::ShardId shard) {
          protocol->start_session(std::move(socket), shard);
        });
    if (auto st = listener->open(entry.protocol->listener()); !st) return st;
    entry.listener = std::move(listener);
  }
  return ok();
}

void ProtocolSet::start(model::ShardId shard) {
  for (auto& entry : entries_) entry.protocol->start(shard);
}

void ProtocolSet::start_listening() {
  for (auto& entry : entries_) {
    if (entry.listener) entry.listener->start();
  }
}

std::vector<std::pair<std::string_view, net::tcp::endpoint>> ProtocolSet::listening() const {
  std::vector<std::pair<std::string_view, net::tcp::endpoint>> out;
  for (const auto& entry : entries_) {
    if (entry.listener) out.emplace_back(entry.protocol->name(), entry.listener->local_endpoint());
  }
  return out;
}

void ProtocolSet::stop_listening() {
  for (auto& entry : entries_) {
    if (entry.listener) entry.listener->stop();
  }
}

bool ProtocolSet::idle() const {
  for (const auto& entry : entries_) {
    if (!entry.protocol->idle()) return false;
  }
  return true;
}

}  // namespace carrier::protocol
