// carrier bench over STOMP: producers (plain sends, or async sends with a window of receipts)
// and consumers (one subscription each, acking as --ack says).

#include <condition_variable>
#include <mutex>
#include <optional>

#include "cli/bench_worker.hpp"
#include "client/stomp_client.hpp"

namespace carrier::cli::bench {

namespace {

// Receipts, acknowledgements and the final DISCONNECT receipt: a broker working through a
// backlog is slow, not broken, so this is generous; a run stays bounded all the same.
constexpr std::chrono::milliseconds kTimeout{60'000};
// Encoded messages a producer may have waiting for the socket: small, so a producer cannot run
// far ahead of a slow broker (the kernel's socket buffers add about as much again).
constexpr std::size_t kMaxBuffered = 1u << 20;

client::ConnectOptions connect_options(const Options& o) {
  client::ConnectOptions c;
  c.login = o.login;
  c.passcode = o.passcode;
  c.vhost = o.vhost;
  c.tls = o.tls;
  c.timeout = kTimeout;
  c.max_buffered_bytes = kMaxBuffered;
  if (o.websocket) c.websocket_path = "/ws";
  return c;
}

class StompProducer final : public Producer {
 public:
  using Producer::Producer;

  ~StompProducer() override { client_.reset(); }

  Status connect() override {
    const Options& o = control_.options();
    if (o.persistent) options_.headers.emplace_back("persistent", "true");
    client_ = std::make_unique<client::StompClient>();
    client_->on_error([this](const Error& e) {
      control_.error("producer " + std::to_string(index_) + ": " + e.to_string());
    });
    return client_->connect(o.host, o.port, connect_options(o));
  }

  std::string confirmed_by() const override {
    return control_.options().receipts > 0 ? "receipt" : "disconnect receipt";
  }

 protected:
  Status send(std::string_view body) override {
    const Options& o = control_.options();
    if (o.receipts == 0) return client_->send(o.dest, body, options_);
    {
      std::unique_lock lock(mutex_);
      slot_free_.wait(lock, [&] { return in_flight_ < o.receipts; });
      ++in_flight_;
    }
    // Not under the lock: on a closed client the callback runs right here.
    client_->async_send(o.dest, body, options_, [this](Status s) {
      if (!s && !reported_failure_.exchange(true)) {
        control_.error("producer " + std::to_string(index_) + ": send not confirmed: " + s.error().to_string());
      }
      confirm(s.has_value());
      // Notified under the lock: finish() may return and the waiter go away once it is free.
      std::lock_guard lock(mutex_);
      --in_flight_;
      slot_free_.notify_all();
    });
    return ok();
  }

  Status finish() override {
    const Options& o = control_.options();
    if (o.receipts > 0) {
      // Every receipt callback runs exactly once (RECEIPT, ERROR, timeout or disconnect).
      std::unique_lock lock(mutex_);
      slot_free_.wait(lock, [&] { return in_flight_ == 0; });
    }
    // DISCONNECT's receipt comes after the broker handled every earlier frame.
    Status s = client_->disconnect();
    if (s && o.receipts == 0) confirm_all_sent();
    client_.reset();
    return s;
  }

 private:
  client::SendOptions options_;
  std::mutex mutex_;
  std::condition_variable slot_free_;
  std::size_t in_flight_ = 0;
  std::atomic<bool> reported_failure_{false};
  std::unique_ptr<client::StompClient> client_;  // last: its callbacks use the members above
};

class StompConsumer final : public Consumer {
 public:
  using Consumer::Consumer;

  ~StompConsumer() override { client_.reset(); }

  Status start() override {
    const Options& o = control_.options();
    client_ = std::make_unique<client::StompClient>();
    client_->on_error([this](const Error& e) {
      control_.error("consumer " + std::to_string(index_) + ": " + e.to_string());
    });
    if (auto s = client_->connect(o.consumer_host, o.consumer_port, connect_options(o)); !s) return s;
    client::SubscribeOptions so;
    switch (o.ack) {
      case Ack::automatic: so.ack = client::AckMode::automatic; break;
      case Ack::client: so.ack = client::AckMode::client; break;
      case Ack::client_individual: so.ack = client::AckMode::client_individual; break;
    }
    so.prefetch = o.prefetch;
    so.receipt = true;  // deliveries can only be counted once the subscription is in place
    // With ack:client one ACK covers every earlier message: ack every quarter of the credit.
    ack_every_ = std::max<unsigned>(1, o.prefetch.value_or(100) / 4);
    auto id = client_->subscribe(o.dest, so, [this](const client::Message& m) { on_message(m); });
    if (!id) return unexpected(id.error());
    return ok();
  }

  void stop() override {
    if (!client_) return;
    std::optional<client::Message> tail;
    {
      std::lock_guard lock(ack_mutex_);
      tail = std::move(pending_ack_);
    }
    if (tail && client_->connected()) (void)client_->ack(*tail);
    if (auto s = client_->disconnect(); !s) {
      control_.error("consumer " + std::to_string(index_) + ": disconnect: " + s.error().to_string());
    }
    client_.reset();  // joins the I/O thread: the ledger is final after this
  }

 private:
  void on_message(const client::Message& m) {
    on_body(m.body);
    switch (control_.options().ack) {
      case Ack::automatic:
        return;
      case Ack::client_individual:
        (void)client_->ack(m);
        return;
      case Ack::client: {
        std::lock_guard lock(ack_mutex_);
        if (++unacked_ >= ack_every_) {
          (void)client_->ack(m);
          unacked_ = 0;
          pending_ack_.reset();
        } else {
          // What ack() needs of the last message, to ack the tail when the run ends.
          client::Message last;
          last.message_id = m.message_id;
          last.subscription = m.subscription;
          last.ack_id = m.ack_id;
          pending_ack_ = std::move(last);
        }
        return;
      }
    }
  }

  unsigned ack_every_ = 1;
  unsigned unacked_ = 0;
  std::mutex ack_mutex_;  // the I/O thread writes pending_ack_, stop() takes it
  std::optional<client::Message> pending_ack_;
  std::unique_ptr<client::StompClient> client_;
};

}  // namespace

std::unique_ptr<Producer> make_stomp_producer(RunControl& control, std::uint32_t index, std::uint64_t quota) {
  return std::make_unique<StompProducer>(control, index, quota);
}

std::unique_ptr<Consumer> make_stomp_consumer(RunControl& control, std::uint32_t index) {
  return std::make_unique<StompConsumer>(control, index);
}

}  // namespace carrier::cli::bench
