// carrier bench over MQTT: producers publish at --qos (QoS 1/2 with a window of packet ids in
// flight), consumers hold one subscription each (a shared subscription for --kind queue with
// several consumers).

#include <cstdio>

#include "cli/bench_worker.hpp"
#include "client/mqtt_client.hpp"

namespace carrier::cli::bench {

namespace {

// Receipts, acknowledgements and the final DISCONNECT receipt: a broker working through a
// backlog is slow, not broken, so this is generous; a run stays bounded all the same.
constexpr std::chrono::milliseconds kMqttTimeout{60'000};
// Encoded messages a producer may have waiting for the socket: small, so a producer cannot run
// far ahead of a slow broker (the kernel's socket buffers add about as much again).
constexpr std::size_t kMqttMaxBuffered = 1u << 20;

std::string run_hex(const Options& o) {
  char text[16];
  std::snprintf(text, sizeof text, "%08x", o.run_id);
  return text;
}

client::MqttConnectOptions connect_options(const Options& o, std::string client_id) {
  client::MqttConnectOptions c;
  c.client_id = std::move(client_id);
  if (!o.login.empty()) {
    c.username = o.login;
    c.password = o.passcode;
  }
  c.tls = o.tls;
  c.version = o.mqtt_v5 ? mqtt::codec::Version::v5 : mqtt::codec::Version::v3_1_1;
  c.timeout = kMqttTimeout;
  c.max_buffered_bytes = kMqttMaxBuffered;
  c.max_in_flight = static_cast<std::uint16_t>(std::max(1u, std::min(o.receipts, 65534u)));
  if (o.websocket) c.websocket_path = "/ws";
  return c;
}

class MqttProducer final : public Producer {
 public:
  using Producer::Producer;

  ~MqttProducer() override { client_.reset(); }

  Status connect() override {
    const Options& o = control_.options();
    client_ = std::make_unique<client::MqttClient>();
    client_->on_error([this](const Error& e) {
      control_.error("producer " + std::to_string(index_) + ": " + e.to_string());
    });
    return client_->connect(o.host, o.port,
                            connect_options(o, "carrier-bench-" + run_hex(o) + "-p" + std::to_string(index_)));
  }

  std::string confirmed_by() const override {
    switch (control_.options().qos) {
      case 1: return "puback";
      case 2: return "pubcomp";
      default: return "pingresp";
    }
  }

 protected:
  Status send(std::string_view body) override {
    const Options& o = control_.options();
    if (o.qos == 0) return client_->async_publish(o.dest, body, 0, false, {});
    return client_->async_publish(o.dest, body, static_cast<std::uint8_t>(o.qos), false, [this](Status s) {
      if (!s && !reported_failure_.exchange(true)) {
        control_.error("producer " + std::to_string(index_) + ": publish not acknowledged: " + s.error().to_string());
      }
      confirm(s.has_value());
    });
  }

  Status finish() override {
    const Options& o = control_.options();
    Status result = ok();
    if (o.qos > 0) {
      result = client_->wait_for_acks();
    } else {
      // PINGRESP comes after the server read every PUBLISH before the PINGREQ.
      result = client_->ping();
      if (result) confirm_all_sent();
    }
    if (auto s = client_->disconnect(); !s && result) result = s;
    client_.reset();
    return result;
  }

 private:
  std::atomic<bool> reported_failure_{false};
  std::unique_ptr<client::MqttClient> client_;  // last: its callbacks use the members above
};

class MqttConsumer final : public Consumer {
 public:
  using Consumer::Consumer;

  ~MqttConsumer() override { client_.reset(); }

  Status start() override {
    const Options& o = control_.options();
    client_ = std::make_unique<client::MqttClient>();
    client_->on_error([this](const Error& e) {
      control_.error("consumer " + std::to_string(index_) + ": " + e.to_string());
    });
    client_->on_message([this](const client::MqttMessage& m) { on_body(m.payload); });
    if (auto s = client_->connect(o.consumer_host, o.consumer_port,
                                  connect_options(o, "carrier-bench-" + run_hex(o) + "-c" + std::to_string(index_)));
        !s) {
      return s;
    }
    // A queue shared by several consumers is MQTT 5's shared subscription (also understood by
    // Mosquitto, RabbitMQ and NATS over 3.1.1).
    std::string filter = o.dest;
    if (o.kind == Kind::queue && o.consumers > 1) filter = "$share/carrier-bench-" + run_hex(o) + "/" + o.dest;
    auto granted = client_->subscribe(filter, static_cast<std::uint8_t>(o.qos));
    if (!granted) return unexpected(granted.error());
    if (*granted < o.qos) {
      control_.error("consumer " + std::to_string(index_) + ": subscription granted QoS " + std::to_string(*granted) +
                     " < " + std::to_string(o.qos));
    }
    return ok();
  }

  void stop() override {
    if (!client_) return;
    if (auto s = client_->disconnect(); !s) {
      control_.error("consumer " + std::to_string(index_) + ": disconnect: " + s.error().to_string());
    }
    client_.reset();  // joins the I/O thread: the ledger is final after this
  }

 private:
  std::unique_ptr<client::MqttClient> client_;
};

}  // namespace

std::unique_ptr<Producer> make_mqtt_producer(RunControl& control, std::uint32_t index, std::uint64_t quota) {
  return std::make_unique<MqttProducer>(control, index, quota);
}

std::unique_ptr<Consumer> make_mqtt_consumer(RunControl& control, std::uint32_t index) {
  return std::make_unique<MqttConsumer>(control, index);
}

}  // namespace carrier::cli::bench
