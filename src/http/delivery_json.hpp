#pragma once

#include <nlohmann/json.hpp>

#include "core/consumer.hpp"

namespace carrier::http {

// A delivered message as the HTTP API shows it (a long poll's array element, an event's data
// with format=json): id, destination, redelivered, delivery_count, headers (string values, as in
// STOMP), and body (valid UTF-8) or body_base64.
nlohmann::json delivery_json(const core::Delivery& d);

}  // namespace carrier::http
