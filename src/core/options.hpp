#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace carrier::core {

struct Options {
  bool auto_create = true;               // create destinations on first use
  std::vector<std::string> queues;       // queues that exist from the start (needed without auto_create)
  std::uint32_t prefetch_auto = 1000;    // default credit for ack:auto subscriptions
  std::uint32_t prefetch_client = 100;   // default credit for client and client-individual
};

}  // namespace carrier::core
