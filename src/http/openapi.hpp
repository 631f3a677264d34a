#pragma once

#include <string_view>

namespace carrier::http {

// The OpenAPI 3 description of the HTTP API (src/http/openapi.json, compiled in; the same file
// is docs/http-openapi.json), served at GET /v1/openapi.json.
std::string_view openapi_json();

}  // namespace carrier::http
