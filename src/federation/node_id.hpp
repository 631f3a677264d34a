#pragma once

#include <filesystem>
#include <string>

#include "base/result.hpp"
#include "federation/codec/id128.hpp"

namespace carrier::federation {

// The node's 128-bit id, stable across restarts: read from `federation-node-id` in the data
// directory (32 hex digits), or generated at random and written there on first start.
// Runs on: the main thread, at start-up.
Result<codec::Id128> load_or_create_node_id(const std::filesystem::path& data_dir);

std::string to_hex(const codec::Id128& id);
Result<codec::Id128> from_hex(std::string_view text);

}  // namespace carrier::federation
