#pragma once

#include <string>
#include <string_view>

#include "base/error.hpp"

namespace carrier::http::codec {

inline constexpr std::string_view kProblemMediaType = "application/problem+json";

// The one mapping from Carrier's error codes to HTTP statuses (exhaustive: a new Errc does not
// compile until it is decided here). Refusals that are not an Errc (401, 405, 411, 415, 429
// for a throttled login) are chosen where they happen.
int status_for(Errc code);

// "Not Found" for 404: the standard reason phrase ("Unknown" for a status not listed).
std::string_view reason_phrase(int status);

// An RFC 9457 problem details document: {"type":"about:blank","title":<reason phrase>,
// "status":<status>,"detail":<detail>}. `detail` may be any bytes: it is made valid UTF-8.
std::string problem_json(int status, std::string_view detail);

}  // namespace carrier::http::codec
