#include "net/transport.hpp"

#include <algorithm>
#include <atomic>

#include <fmt/format.h>

namespace carrier::net {

namespace {

std::atomic<std::uint64_t> g_next_transport_id{1};

// An output buffer grown by a burst is given back once writes are small again; below this
// capacity it is kept, so steady small writes reuse their two buffers without allocating.
constexpr std::size_t kKeepWriteCapacityBelow = 64 * 1024;
constexpr std::size_t kSmallWrite = 4 * 1024;

}  // namespace

std::unordered_set<Transport*>& Transport::on_this_shard() {
  thread_local std::unordered_set<Transport*> transports;
  return transports;
}

Transport::Transport(asio::any_io_executor executor, model::ShardId shard, std::string protocol, std::string peer)
    : executor_(std::move(executor)),
      shard_(shard),
      id_(g_next_transport_id.fetch_add(1, std::memory_order_relaxed)),
      peer_(std::move(peer)),
      protocol_(std::move(protocol)),
      log_prefix_(fmt::format("[{} c{} {}]", protocol_, id_, peer_)),
      last_read_(std::chrono::steady_clock::now()),
      last_write_(last_read_),
      connected_at_(last_read_) {}

Transport::~Transport() {
  if (registered_) on_this_shard().erase(this);
}

std::string Transport::log_prefix(std::string_view destination) const {
  return fmt::format("[{} c{} {} {}]", protocol_, id_, peer_, destination);
}

void Transport::register_on_shard() {
  registered_ = true;
  on_this_shard().insert(this);
}

void Transport::close_after_flush() {
  closing_ = true;
  wake_writer();
}

void Transport::close() {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  if (registered_) {
    registered_ = false;
    on_this_shard().erase(this);
  }
  close_io();
  if (handler_ != nullptr) handler_->on_closed();
}

MessageRates Transport::sample_rates(std::chrono::steady_clock::time_point now) {
  if (!rate_sampled_) {
    rate_sampled_ = true;
    rate_window_start_ = connected_at_;
  }
  const std::chrono::duration<double> elapsed = now - rate_window_start_;
  if (elapsed >= std::chrono::seconds(1)) {
    in_per_second_ = static_cast<double>(messages_in_ - rate_window_in_) / elapsed.count();
    out_per_second_ = static_cast<double>(messages_out_ - rate_window_out_) / elapsed.count();
    rate_window_start_ = now;
    rate_window_in_ = messages_in_;
    rate_window_out_ = messages_out_;
  } else if (elapsed.count() > 0 && rate_window_start_ == connected_at_) {
    // Younger than a second: what it did so far, per second of it.
    in_per_second_ = static_cast<double>(messages_in_) / std::max(elapsed.count(), 1.0);
    out_per_second_ = static_cast<double>(messages_out_) / std::max(elapsed.count(), 1.0);
  }
  return MessageRates{messages_in_, messages_out_, in_per_second_, out_per_second_};
}

void Transport::resume_reading() {
  if (!paused_) return;
  paused_ = false;
  // The peer could not be heard while we were not reading: its silence then does not count
  // against heart-beats or keep-alives.
  note_read();
  wake_reader();
}

bool Transport::take_output() {
  if (pending_.empty()) return false;
  std::swap(pending_, writing_);
  if (handler_ != nullptr) handler_->on_write_started();
  return true;
}

void Transport::output_written() {
  last_write_ = std::chrono::steady_clock::now();
  // Keep a moderate buffer for the next batch; release a huge one, and a large one after a
  // small write (the burst that grew it is over).
  const std::size_t written = writing_.size();
  const std::size_t capacity = writing_.capacity();
  writing_.clear();
  if (capacity > (4u << 20) || (capacity > kKeepWriteCapacityBelow && written < kSmallWrite)) {
    std::string().swap(writing_);
  }
  if (handler_ != nullptr) handler_->on_write_done();
}

}  // namespace carrier::net
