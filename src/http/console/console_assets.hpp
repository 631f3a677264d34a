#pragma once

#include <optional>
#include <string_view>

namespace carrier::http::console {

// One file of the web console, embedded at build time (embed_assets.cmake).
struct Asset {
  std::string_view path;          // under /console/, e.g. "index.html", "vendor/uPlot.iife.min.js"
  std::string_view content_type;  // with charset for text
  std::string_view etag;          // quoted, a hash of the bytes
  std::string_view body;
};

// The asset at `path` (relative to /console/), or nullopt.
std::optional<Asset> find_asset(std::string_view path);

}  // namespace carrier::http::console
