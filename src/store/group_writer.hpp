#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/result.hpp"
#include "store/commit_queue.hpp"
#include "store/encoded_batch.hpp"
#include "store/store.hpp"

namespace carrier::store {

// The writer-thread scaffolding the SQL stores share: appends are encoded on the caller's
// thread and queued; one named thread takes everything queued at once (a group), hands it to
// the backend's `write` (one transaction), then answers every batch in append order: a batch
// that did not encode gets its own error, the rest the group's outcome.
// Runs on: append from any thread; start/close on the start-up/shutdown thread; `write` and the
// callbacks on the writer thread.
class GroupWriter {
 public:
  struct Pending {
    EncodedBatch encoded;
    DurableCallback done;
    LocatedCallback located;          // instead of done, from append_located()
    std::vector<Location> locations;  // with `located`: one per record, filled by `write`
    // Not a batch but work for the writer thread (a read): run with ok() after the group's
    // transaction and callbacks, or with the reason it never will run.
    std::function<void(Status)> task;
  };
  // Writes the group in one transaction and, on success, sets the locations of the message rows
  // of every Pending with `located` (sized to its batch before the call).
  using Write = std::function<Status(std::vector<Pending>& group)>;

  // `thread_name` names the thread (at most 15 characters); `what` names the store in errors.
  GroupWriter(std::string thread_name, std::string what, Write write);
  ~GroupWriter();

  void append(Batch batch, DurableCallback on_durable);
  void append_located(Batch batch, LocatedCallback on_durable);
  // Queues `task` for the writer thread, which owns the connection: it runs after the group it
  // arrives with is written (so it sees that group), or with an error if the writer is closed.
  void run_on_writer(std::function<void(Status)> task);
  void start();
  bool running() const { return thread_.joinable(); }
  bool has_queued() { return !queue_.empty(); }
  // Refuses later appends (they fail at once); what is queued stays for the writer.
  void refuse_appends() { queue_.close(); }
  // Waits for a started writer to drain the queue; refuse_appends() first, or it never ends.
  void join();
  void stop() {
    refuse_appends();
    join();
  }
  // Appends nobody ran (the writer never started): each fails with `reason`.
  void fail_queued(const Error& reason);

  std::uint64_t batches() const { return batches_.load(std::memory_order_relaxed); }
  std::uint64_t failed_batches() const { return failed_batches_.load(std::memory_order_relaxed); }
  std::uint64_t transactions() const { return transactions_.load(std::memory_order_relaxed); }

 private:
  void run();
  void commit(std::vector<Pending>& group);

  const std::string thread_name_;
  const std::string what_;
  const Write write_;
  CommitQueue<Pending> queue_;
  std::thread thread_;
  std::atomic<std::uint64_t> batches_{0}, failed_batches_{0}, transactions_{0};
};

}  // namespace carrier::store
