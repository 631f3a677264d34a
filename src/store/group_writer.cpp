#include "store/group_writer.hpp"

#include <pthread.h>

#include <utility>

namespace carrier::store {

GroupWriter::GroupWriter(std::string thread_name, std::string what, Write write)
    : thread_name_(std::move(thread_name)), what_(std::move(what)), write_(std::move(write)) {}

GroupWriter::~GroupWriter() { stop(); }

void GroupWriter::append(Batch batch, DurableCallback on_durable) {
  Pending p{EncodedBatch::encode(std::move(batch)), std::move(on_durable)};
  if (!queue_.push(p) && p.done) p.done(unexpected(Errc::shutting_down, what_ + " is closed"));
}

void GroupWriter::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void GroupWriter::join() {
  if (thread_.joinable()) thread_.join();
}

void GroupWriter::fail_queued(const Error& reason) {
  std::vector<Pending> rest;
  while (queue_.try_take_all(rest)) {
    for (Pending& p : rest) {
      if (p.done) p.done(unexpected(reason));
    }
    rest.clear();
  }
}

void GroupWriter::run() {
  pthread_setname_np(pthread_self(), thread_name_.c_str());
  std::vector<Pending> group;
  while (queue_.take_all(group)) {
    commit(group);
    group.clear();
  }
}

void GroupWriter::commit(std::vector<Pending>& group) {
  bool any = false;
  for (const Pending& p : group) any = any || (p.encoded.valid && !p.encoded.batch.empty());
  Status written = ok();
  if (any) {
    transactions_.fetch_add(1, std::memory_order_relaxed);
    written = write_(group);
  }
  std::uint64_t failed = 0;
  for (Pending& p : group) {
    Status outcome = !p.encoded.valid ? p.encoded.valid : written;
    if (!outcome) ++failed;
    if (p.done) p.done(std::move(outcome));
  }
  batches_.fetch_add(group.size(), std::memory_order_relaxed);
  failed_batches_.fetch_add(failed, std::memory_order_relaxed);
}

}  // namespace carrier::store
