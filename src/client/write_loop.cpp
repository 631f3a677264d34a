#include "client/write_loop.hpp"

namespace carrier::client {

namespace asio = net::asio;

void WriteLoop::append(std::string_view bytes) {
  output_.append(bytes);
  // Wakes the writer if it waits; while it writes, the bytes join the next batch.
  if (!writing_) wakeup_.cancel();
}

std::size_t WriteLoop::discard() {
  const std::size_t size = output_.size();
  output_.clear();
  return size;
}

asio::awaitable<boost::system::error_code> WriteLoop::run(net::SocketStream& stream, Hooks hooks) {
  std::string batch;
  std::string framed;
  for (;;) {
    if (hooks.closed()) co_return boost::system::error_code();
    if (output_.empty()) {
      if (hooks.drained && hooks.drained()) co_return boost::system::error_code();
      boost::system::error_code ignored;  // cancel() is the wake-up, not a failure
      wakeup_.expires_at(std::chrono::steady_clock::time_point::max());
      co_await wakeup_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
      continue;
    }
    batch.swap(output_);  // everything queued so far goes out in one write
    writing_ = true;
    boost::system::error_code ec;
    if (hooks.frame) hooks.frame(batch, framed);
    co_await stream.async_write(asio::buffer(hooks.frame ? framed : batch), asio::redirect_error(asio::use_awaitable, ec));
    writing_ = false;
    hooks.wrote(batch.size());
    batch.clear();
    if (ec) co_return ec;
  }
}

}  // namespace carrier::client
