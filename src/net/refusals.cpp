#include "net/refusals.hpp"

#include <atomic>

namespace carrier::net {
namespace {

std::array<std::atomic<std::uint64_t>, kRefusalKinds> g_refusals{};

}  // namespace

std::string_view to_string(Refusal refusal) {
  switch (refusal) {
    case Refusal::connections: return "connections";
    case Refusal::connections_per_source: return "connections_per_source";
    case Refusal::connection_rate: return "connection_rate";
    case Refusal::connecting: return "connecting";
    case Refusal::login_failures: return "login_failures";
    case Refusal::subscriptions: return "subscriptions";
    case Refusal::destinations: return "destinations";
    case Refusal::message_rate: return "message_rate";
  }
  return "unknown";
}

void count_refusal(Refusal refusal) {
  g_refusals[static_cast<std::size_t>(refusal)].fetch_add(1, std::memory_order_relaxed);
}

std::array<std::uint64_t, kRefusalKinds> refusal_counts() {
  std::array<std::uint64_t, kRefusalKinds> out{};
  for (std::size_t i = 0; i < kRefusalKinds; ++i) out[i] = g_refusals[i].load(std::memory_order_relaxed);
  return out;
}

}  // namespace carrier::net
