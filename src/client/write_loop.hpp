#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "net/socket_stream.hpp"

namespace carrier::client {

// The output half of a client connection, shared by the STOMP and MQTT clients: bytes appended
// while a write is in flight leave together in the next write (one syscall for many frames),
// and an idle writer sleeps on a timer that append() cancels.
// Runs on: the client's I/O thread only (append, discard, run).
class WriteLoop {
 public:
  explicit WriteLoop(net::asio::io_context& io) : wakeup_(io) {}

  void append(std::string_view bytes);
  // Nothing queued and nothing being written.
  bool idle() const { return !writing_ && output_.empty(); }
  // Drops what is queued (the connection is ending); returns its size.
  std::size_t discard();
  // Wakes an idle run() to check `closed`.
  void wake() { wakeup_.cancel(); }

  struct Hooks {
    std::function<bool()> closed;           // checked before each batch: true ends run()
    std::function<bool()> drained;          // nothing queued: true ends run() (e.g. DISCONNECT sent)
    std::function<void(std::size_t)> wrote;  // after each write, failed or not, with its size
    // Optional: what goes on the wire for a batch (a WebSocket frame around it); `wrote` still
    // counts the batch.
    std::function<void(std::string_view batch, std::string& wire)> frame;
  };
  // Writes until `closed` or `drained` says stop (returns no error) or a write fails (returns it).
  net::asio::awaitable<boost::system::error_code> run(net::SocketStream& stream, Hooks hooks);

 private:
  net::asio::steady_timer wakeup_;
  std::string output_;
  bool writing_ = false;
};

}  // namespace carrier::client
