#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "net/transport.hpp"

namespace carrier::net {

// A transport for tests: the test plays the peer and the writer. receive() feeds bytes to the
// session as a socket read would (kept while reading is paused, offered again on resume);
// what the session writes stays queued until write() plays the writer's turn
// (on_write_started, on_write_done), then is kept in written(). Closing is observable; a
// close_after_flush() completes at the write() that finds nothing left, as net::Connection's
// writer does. Resuming is posted to the executor (the test runs it), like a socket's.
// Runs on: the test's thread.
class FakeTransport : public Transport, public std::enable_shared_from_this<FakeTransport> {
 public:
  explicit FakeTransport(asio::any_io_executor executor, model::ShardId shard = model::ShardId(0),
                         std::string protocol = "test")
      : Transport(std::move(executor), shard, std::move(protocol), "127.0.0.1:40000") {}

  // The peer sends `bytes`.
  void receive(std::string_view bytes) {
    input_.append(bytes);
    if (is_closing() || is_paused()) return;
    note_read();
    deliver_input(input_);
  }
  // The writer's turn: sends what is queued, or completes a close_after_flush(). Returns
  // whether anything was written.
  bool write() {
    if (is_closed()) return false;
    if (!take_output()) {
      if (is_closing()) close();
      return false;
    }
    written_ += writing();
    output_written();
    return true;
  }
  // Everything written so far, and the same, emptied.
  const std::string& written() const { return written_; }
  std::string take_written() { return std::exchange(written_, {}); }
  // Bytes received and not consumed by the session yet.
  const std::string& unread() const { return input_; }
  std::size_t writer_wakeups() const { return wakeups_; }
  std::optional<std::chrono::milliseconds> linger() const { return linger_; }

  using Transport::close_after_flush;
  void close_after_flush(std::chrono::milliseconds grace) override {
    linger_ = grace;
    close_after_flush();
  }

 private:
  void wake_writer() override { ++wakeups_; }
  void wake_reader() override {
    asio::post(executor(), [weak = weak_from_this()] {
      auto self = weak.lock();
      if (!self || self->is_closing() || self->is_paused()) return;
      self->deliver_input(self->input_);
    });
  }
  void close_io() override {}

  std::string input_;
  std::string written_;
  std::size_t wakeups_ = 0;
  std::optional<std::chrono::milliseconds> linger_;
};

}  // namespace carrier::net
