#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "cli/bench_histogram.hpp"
#include "cli/bench_ledger.hpp"
#include "cli/bench_options.hpp"

namespace carrier::cli::bench {

using Clock = std::chrono::steady_clock;

inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

// What every worker of one run shares: the options, the start, the stop flag, the error list.
class RunControl {
 public:
  explicit RunControl(const Options& options) : options_(options) {}

  const Options& options() const { return options_; }
  // Set once, before any producer starts.
  void set_start(std::uint64_t ns) { start_ns_.store(ns); }
  std::uint64_t start_ns() const { return start_ns_.load(); }
  // Producers stop issuing new messages (SIGINT); the run still drains and reports.
  void request_stop() { stop_.store(true); }
  bool stop_requested() const { return stop_.load(std::memory_order_relaxed); }

  void error(std::string text);
  std::vector<std::string> errors() const;

 private:
  const Options& options_;
  std::atomic<std::uint64_t> start_ns_{0};
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> errors_;
};

// One producing connection. run() is the body of its thread: it sends its quota (or until the
// duration or a stop), then finish()es — waits for every confirmation and flushes the
// connection — and closes it.
class Producer {
 public:
  Producer(RunControl& control, std::uint32_t index, std::uint64_t quota)
      : control_(control), index_(index), quota_(quota) {}
  virtual ~Producer() = default;

  virtual Status connect() = 0;
  void run();

  std::uint32_t index() const { return index_; }
  std::uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }
  std::uint64_t confirmed() const { return confirmed_.load(std::memory_order_relaxed); }
  std::uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }
  std::uint64_t produce_done_ns() const { return produce_done_ns_.load(); }
  std::uint64_t confirm_done_ns() const { return confirm_done_ns_.load(); }
  // "receipt", "puback", ... : what `confirmed` counts.
  virtual std::string confirmed_by() const = 0;

 protected:
  // Sends one message; may block for a window slot or buffer space. An error ends the run of
  // this producer.
  virtual Status send(std::string_view body) = 0;
  // Waits for outstanding confirmations, flushes (so the broker has read everything), closes.
  virtual Status finish() = 0;

  // From a confirmation callback (any thread).
  void confirm(bool ok);
  void confirm_all_sent();  // after a flush that proves the broker read every message

  RunControl& control_;
  const std::uint32_t index_;
  const std::uint64_t quota_;  // 0: until the duration ends or a stop

 private:
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> confirmed_{0};
  std::atomic<std::uint64_t> failed_{0};
  std::atomic<std::uint64_t> produce_done_ns_{0};
  std::atomic<std::uint64_t> confirm_done_ns_{0};
};

// One consuming connection with one subscription. Deliveries are checked and recorded on the
// client's I/O thread; ledger() and latency() may be read only after stop().
class Consumer {
 public:
  Consumer(RunControl& control, std::uint32_t index)
      : control_(control), index_(index), ledger_(control.options().producers) {}
  virtual ~Consumer() = default;

  // Connects and subscribes; returns once the broker confirmed the subscription.
  virtual Status start() = 0;
  // Acknowledges what is left, disconnects, and joins the client's thread.
  virtual void stop() = 0;

  std::uint64_t received() const { return received_.load(std::memory_order_relaxed); }
  std::uint64_t last_delivery_ns() const { return last_delivery_ns_.load(std::memory_order_relaxed); }
  std::uint64_t foreign() const { return foreign_.load(std::memory_order_relaxed); }
  const Ledger& ledger() const { return ledger_; }
  const Histogram& latency() const { return latency_; }

 protected:
  // One delivery's body, on the I/O thread.
  void on_body(std::string_view body);

  RunControl& control_;
  const std::uint32_t index_;

 private:
  Ledger ledger_;
  Histogram latency_;
  std::atomic<std::uint64_t> received_{0};
  std::atomic<std::uint64_t> last_delivery_ns_{0};
  std::atomic<std::uint64_t> foreign_{0};
};

std::unique_ptr<Producer> make_stomp_producer(RunControl& control, std::uint32_t index, std::uint64_t quota);
std::unique_ptr<Consumer> make_stomp_consumer(RunControl& control, std::uint32_t index);
std::unique_ptr<Producer> make_mqtt_producer(RunControl& control, std::uint32_t index, std::uint64_t quota);
std::unique_ptr<Consumer> make_mqtt_consumer(RunControl& control, std::uint32_t index);
std::unique_ptr<Producer> make_http_producer(RunControl& control, std::uint32_t index, std::uint64_t quota);
std::unique_ptr<Consumer> make_http_consumer(RunControl& control, std::uint32_t index);

}  // namespace carrier::cli::bench
