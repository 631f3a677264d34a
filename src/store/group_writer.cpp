#include "store/group_writer.hpp"

#include <pthread.h>

#include <utility>

namespace carrier::store {

GroupWriter::GroupWriter(std::string thread_name, std::string what, Write write)
    : thread_name_(std::move(thread_name)), what_(std::move(what)), write_(std::move(write)) {}

GroupWriter::~GroupWriter() { stop(); }

void GroupWriter::append(Batch batch, DurableCallback on_durable) {
  Pending p{EncodedBatch::encode(std::move(batch)), std::move(on_durable), nullptr, {}, nullptr};
  if (!queue_.push(p) && p.done) p.done(unexpected(Errc::shutting_down, what_ + " is closed"));
}

void GroupWriter::append_located(Batch batch, LocatedCallback on_durable) {
  Pending p{EncodedBatch::encode(std::move(batch)), nullptr, std::move(on_durable), {}, nullptr};
  if (!queue_.push(p) && p.located) p.located(unexpected(Errc::shutting_down, what_ + " is closed"), {});
}

void GroupWriter::run_on_writer(std::function<void(Status)> task) {
  Pending p{EncodedBatch{}, nullptr, nullptr, {}, std::move(task)};
  if (!queue_.push(p) && p.task) p.task(unexpected(Errc::shutting_down, what_ + " is closed"));
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
      if (p.located) p.located(unexpected(reason), {});
      if (p.task) p.task(unexpected(reason));
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
  // Tasks are taken out first: they run after the group's callbacks, and `write` sees batches only.
  std::vector<std::function<void(Status)>> tasks;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (group[i].task) {
      tasks.push_back(std::move(group[i].task));
      continue;
    }
    if (kept != i) group[kept] = std::move(group[i]);
    ++kept;
  }
  group.resize(kept);
  bool any = false;
  for (Pending& p : group) {
    any = any || (p.encoded.valid && !p.encoded.batch.empty());
    if (p.located) p.locations.assign(p.encoded.batch.size(), Location{});
  }
  Status written = ok();
  if (any) {
    transactions_.fetch_add(1, std::memory_order_relaxed);
    written = write_(group);
  }
  std::uint64_t failed = 0;
  for (Pending& p : group) {
    Status outcome = !p.encoded.valid ? p.encoded.valid : written;
    if (!outcome) ++failed;
    if (p.done) {
      p.done(std::move(outcome));
    } else if (p.located) {
      if (!outcome) p.locations.clear();
      p.located(std::move(outcome), std::move(p.locations));
    }
  }
  batches_.fetch_add(group.size(), std::memory_order_relaxed);
  failed_batches_.fetch_add(failed, std::memory_order_relaxed);
  for (auto& task : tasks) task(ok());
}

}  // namespace carrier::store
