#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace carrier::admin {

// A listener as the overview shows it.
struct ListenerInfo {
  std::string protocol;  // "stomp"
  std::string address;
  std::uint16_t port = 0;
};

// What `carrier serve` tells the admin API about the broker it runs; fixed once serving.
struct BrokerInfo {
  std::string version;
  std::string store_kind;  // log | sqlite | postgres | memory
  std::uint32_t shards = 0;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::vector<ListenerInfo> listeners;
};

}  // namespace carrier::admin
