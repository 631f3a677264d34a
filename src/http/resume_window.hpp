#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>
#include <vector>

#include "core/consumer.hpp"

namespace carrier::http {

// The written but unconfirmed events of a durable subscription's event stream (docs/http.md,
// "Resuming an event stream"). SSE has no acknowledgement: an event counts as received once
// `size` newer ones were written after it; until then its delivery stays unacked, so that it
// goes back to the subscription when the connection ends and a reconnect with Last-Event-ID can
// find it.
// Runs on: its session's shard.
class ResumeWindow {
 public:
  explicit ResumeWindow(std::size_t size) : size_(size == 0 ? 1 : size) {}

  // `tags` were written, oldest first: returns those now past the window (to ack), oldest first.
  std::vector<std::uint64_t> written(const std::vector<std::uint64_t>& tags);
  std::size_t unconfirmed() const { return tags_.size(); }

 private:
  std::size_t size_;
  std::deque<std::uint64_t> tags_;
};

// Where `batch` holds the message whose id is `last_event_id` (the UUID text the stream's `id:`
// lines carry); nullopt if it holds none or the text is no message id.
std::optional<std::size_t> find_last_event(const std::vector<core::Delivery>& batch, std::string_view last_event_id);

}  // namespace carrier::http
