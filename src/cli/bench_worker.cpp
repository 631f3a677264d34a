#include "cli/bench_worker.hpp"

#include <algorithm>
#include <thread>

namespace carrier::cli::bench {

void RunControl::error(std::string text) {
  std::lock_guard lock(mutex_);
  // A broken broker can fail thousands of sends the same way: keep the first few, once each.
  if (errors_.size() >= 20 || std::find(errors_.begin(), errors_.end(), text) != errors_.end()) return;
  errors_.push_back(std::move(text));
}

std::vector<std::string> RunControl::errors() const {
  std::lock_guard lock(mutex_);
  return errors_;
}

void Producer::confirm(bool ok) {
  if (ok) {
    confirmed_.fetch_add(1, std::memory_order_relaxed);
  } else {
    failed_.fetch_add(1, std::memory_order_relaxed);
  }
  confirm_done_ns_.store(now_ns(), std::memory_order_relaxed);
}

void Producer::confirm_all_sent() {
  confirmed_.store(sent_.load());
  confirm_done_ns_.store(now_ns());
}

void Producer::run() {
  const Options& o = control_.options();
  // The filler is printable, so a body stays readable in a broker's console; the stamp is not.
  std::string body(o.size, ' ');
  for (std::size_t i = kStampSize; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 26);
  const std::uint64_t start = control_.start_ns();
  const std::uint64_t end = start + static_cast<std::uint64_t>(o.duration_s * 1e9);
  // Each producer offers its share of --rate; message k is due at start + k / share.
  const double interval_ns = o.rate > 0 ? 1e9 * o.producers / o.rate : 0;
  Stamp stamp{o.run_id, index_, 0, 0};
  for (std::uint64_t seq = 0;; ++seq) {
    if (quota_ > 0 && seq >= quota_) break;
    if (control_.stop_requested()) break;
    std::uint64_t when = 0;
    if (interval_ns > 0) {
      // The stamp carries the intended time, so a late send counts against latency (no
      // coordinated omission).
      when = start + static_cast<std::uint64_t>(static_cast<double>(seq) * interval_ns);
      if (quota_ == 0 && when >= end) break;
      const std::uint64_t now = now_ns();
      if (when > now) std::this_thread::sleep_for(std::chrono::nanoseconds(when - now));
    } else {
      when = now_ns();
      if (quota_ == 0 && when >= end) break;
    }
    stamp.sequence = seq;
    stamp.send_ns = when;
    write_stamp(body.data(), stamp);
    if (auto s = send(body); !s) {
      control_.error("producer " + std::to_string(index_) + ": send " + std::to_string(seq) + ": " +
                     s.error().to_string());
      break;
    }
    sent_.store(seq + 1, std::memory_order_relaxed);
  }
  produce_done_ns_.store(now_ns());
  if (auto s = finish(); !s) {
    control_.error("producer " + std::to_string(index_) + ": " + s.error().to_string());
  }
  if (confirm_done_ns_.load() == 0) confirm_done_ns_.store(now_ns());
}

void Consumer::on_body(std::string_view body) {
  const auto stamp = read_stamp(body);
  const std::uint64_t now = now_ns();
  if (!stamp || stamp->run_id != control_.options().run_id) {
    foreign_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ledger_.record(stamp->producer, stamp->sequence);
  latency_.record(now > stamp->send_ns ? now - stamp->send_ns : 0);
  // Single writer (this I/O thread): a plain store is enough for the progress reader.
  received_.store(received_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  last_delivery_ns_.store(now, std::memory_order_relaxed);
}

}  // namespace carrier::cli::bench
