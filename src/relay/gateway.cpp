#include "relay/gateway.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "auth/authenticator.hpp"
#include "core/broker.hpp"
#include "core/disk_alarm.hpp"
#include "core/memory_gauge.hpp"
#include "relay/pipe_id.hpp"
#include "relay/pipe_message.hpp"

namespace carrier::relay {

namespace {

constexpr std::string_view kProxy = "proxy";
constexpr std::string_view kRelay = "relay";
constexpr std::string_view kUnicast = "JxtaUnicast";
constexpr std::string_view kPropagate = "JxtaPropagate";
// The seed's net peer group id: the first half of every peer id it hands out (Listing 4).
constexpr std::string_view kNetGroupHex = "59616261646162614A78746150325033";

// Hands a listened pipe's deliveries to its peer's mailbox, if the gateway still runs.
// Runs on: the peer's shard.
class PipeConsumer : public core::Consumer {
 public:
  PipeConsumer(std::weak_ptr<Gateway> gateway, std::string peer) : gateway_(std::move(gateway)), peer_(std::move(peer)) {}
  void deliver(core::ConsumerId id, std::vector<core::Delivery> batch) override {
    if (auto g = gateway_.lock()) g->deliver(peer_, id, std::move(batch));
  }

 private:
  std::weak_ptr<Gateway> gateway_;
  std::string peer_;
};

std::string field(const codec::Message& m, std::string_view name) {
  auto v = m.find(kProxy, name);
  return v ? std::string(*v) : std::string();
}

void add_endpoints(codec::Message& m, const std::string& to, const std::string& from) {
  m.add("jxta", "EndpointDestinationAddress", to);
  m.add("jxta", "EndpointSourceAddress", from);
}

std::string encoded(const codec::Message& m) {
  std::string out;
  // Every field here is bounded by the request that caused it (at most max_request_bytes).
  if (!encode(m, out)) out.clear();
  return out;
}

}  // namespace

Gateway::Gateway(RelayService& service, model::ShardId shard, std::size_t max_peers)
    : service_(service),
      shard_(shard),
      broker_(service.broker(shard)),
      max_peers_(max_peers),
      random_(std::random_device{}()) {}

Gateway::Peer* Gateway::find(const std::string& id) {
  auto it = peers_.find(id);
  return it == peers_.end() ? nullptr : it->second.get();
}

Gateway::Peer* Gateway::add_peer(const std::string& id, const std::string& user) {
  auto& acl = permissions_[user];
  if (!acl) {
    acl = std::make_unique<auth::Permissions>(service_.authenticator().access(), shard_);
    acl->set_identity(user, "");
  }
  auto p = std::make_unique<Peer>(id, user, *acl);
  Peer* peer = p.get();
  // Answer batches numbered from the clock: a client's Carrier-Relay-Ack from before a restart
  // names a smaller number than any batch handed out after it.
  peer->batch_seq = static_cast<std::uint64_t>(std::max<std::int64_t>(broker_.now_ms(), 0)) * 1000;
  peers_.emplace(id, std::move(p));
  return peer;
}

// --- the ACL -----------------------------------------------------------------------------------

bool Gateway::may(Peer& peer, auth::Right right, const model::Destination& destination) {
  return peer.permissions->allows(right, destination);
}

bool Gateway::may_use_group(Peer& peer, const std::string& group) {
  // A group is the namespace of its pipes: some right on all of them, as queues or as topics.
  const std::string all = group + ".>";
  for (auto kind : {auth::AclKind::queue, auth::AclKind::topic}) {
    for (auto right : {auth::Right::read, auth::Right::write}) {
      if (peer.permissions->allows(right, kind, all)) return true;
    }
  }
  return false;
}

bool Gateway::may_see(Peer& peer, const Directory::Entry& entry) {
  if (entry.type == "GROUP") return may_use_group(peer, entry.name);
  auto d = pipe_destination(entry.id);
  return d && (may(peer, auth::Right::read, *d) || may(peer, auth::Right::write, *d));
}

std::string Gateway::denied(const Peer& peer, std::string_view action, const model::Destination& destination) const {
  const std::string what = (destination.kind == model::DestinationKind::topic ? "topic " : "queue ") + destination.name;
  return auth::access_denied_detail(peer.user, action, what);
}

// --- pid and connect ---------------------------------------------------------------------------

RelayAnswer Gateway::pid(const codec::RelayTarget& target) {
  const auto hi = random_();
  const auto lo = random_();
  const std::string peer = fmt::format("uuid-{}{:016X}{:016X}03", kNetGroupHex, hi, lo);
  codec::Message m;
  m.namespaces = {std::string(kRelay)};
  m.add(std::string(kRelay), "response", "pid");
  m.add(std::string(kRelay), "peerid", peer);
  add_endpoints(m, "jxta://" + peer, target.relay_address);
  return RelayAnswer{200, encoded(m), {}};
}

namespace {

RelayAnswer not_yours(const std::string& peer) {
  return RelayAnswer{403, {}, fmt::format("peer {} was connected by another user", peer.substr(0, 80))};
}

}  // namespace

void Gateway::connect(const RelayCall& call, RelayService::Reply reply) {
  const codec::RelayTarget& target = call.target;
  Peer* peer = find(target.peer);
  if (peer != nullptr && peer->user != call.user) return reply(not_yours(peer->id));
  if (peer == nullptr) {
    if (peers_.size() >= max_peers_) {
      reply(RelayAnswer{503, {}, fmt::format("the relay holds its maximum of peers (relay.max_peers = {})",
                                             service_.options().max_peers)});
      return;
    }
    peer = add_peer(target.peer, call.user);
  }
  const auto max_lease = static_cast<std::int64_t>(service_.options().max_lease_ms);
  const std::int64_t lease = target.lease_ms <= 0 ? max_lease : std::min(target.lease_ms, max_lease);
  peer->relay_address = target.relay_address;
  peer->lease_ms = lease;
  peer->expires_ms = broker_.now_ms() + lease;
  arm_lease(*peer);
  record_peer(*peer);
  codec::Message m;
  m.namespaces = {std::string(kRelay)};
  m.add(std::string(kRelay), "response", "connected");
  m.add(std::string(kRelay), "lease", std::to_string(lease));
  add_endpoints(m, "jxta://" + peer->id, peer->relay_address);
  reply(RelayAnswer{200, encoded(m), {}});
}

// --- leases and redelivery ---------------------------------------------------------------------

void Gateway::arm_lease(Peer& peer) {
  if (peer.lease_timer) return;  // the armed check re-arms for a later expiry
  peer.lease_timer = true;
  check_at(peer.expires_ms, peer.id, &Gateway::lease_check);
}

void Gateway::check_at(std::int64_t due_ms, const std::string& peer, void (Gateway::*check)(const std::string&)) {
  const auto delay = static_cast<std::uint64_t>(std::max<std::int64_t>(due_ms - broker_.now_ms(), 0)) + 1;
  std::weak_ptr<Gateway> weak = weak_from_this();
  service_.executor().post_after(shard_, delay, [weak, peer, check] {
    if (auto g = weak.lock()) (g.get()->*check)(peer);
  });
}

void Gateway::lease_check(const std::string& id) {
  Peer* peer = find(id);
  if (peer == nullptr) return;
  peer->lease_timer = false;
  if (broker_.now_ms() < peer->expires_ms) {
    arm_lease(*peer);
    return;
  }
  forget(*peer);
}

void Gateway::forget(Peer& peer) {
  // Unpolled messages are discarded with the lease (seed 000's connect): a propagate pipe's
  // subscription goes with what waits in it; a unicast pipe's consumer is detached, and what it
  // held unacked goes back to the queue for its other consumers.
  std::vector<core::StateRecord> removals;
  for (auto& item : peer.mailbox.clear()) {
    if (!item.record.is_nil()) removals.push_back({std::string(kMailQueue), nullptr, item.record});
  }
  for (auto& [pipe, l] : peer.listens) {
    broker_.unsubscribe(l.consumer, nullptr);
    if (!l.subscription.empty()) broker_.remove_subscription(l.subscription, nullptr);
    if (!l.record.is_nil()) removals.push_back({std::string(kListensQueue), nullptr, l.record});
  }
  if (!peer.record.is_nil()) removals.push_back({std::string(kPeersQueue), nullptr, peer.record});
  remove_records(std::move(removals));
  if (peer.waiting) {
    peer.waiting->reply(RelayAnswer{404, {}, "the peer's lease ran out"});
    peer.waiting.reset();
  }
  peers_.erase(peer.id);
}

void Gateway::arm_redeliver(Peer& peer) {
  if (peer.redeliver_timer || !peer.mailbox.has_in_flight()) return;
  peer.redeliver_timer = true;
  check_at(peer.mailbox.oldest_in_flight_ms() + service_.options().redeliver_ms, peer.id, &Gateway::redeliver_check);
}

void Gateway::redeliver_check(const std::string& id) {
  Peer* peer = find(id);
  if (peer == nullptr) return;
  peer->redeliver_timer = false;
  if (peer->mailbox.redeliver_older_than(broker_.now_ms() - service_.options().redeliver_ms + 1) > 0) {
    answer_waiting(*peer);
  }
  arm_redeliver(*peer);
}

// --- polls -----------------------------------------------------------------------------------

void Gateway::poll(const RelayCall& call, std::vector<codec::Message> requests, RelayService::Reply reply) {
  const codec::RelayTarget& target = call.target;
  const std::uint32_t max = call.max;
  Peer* peer = find(target.peer);
  if (peer == nullptr) {
    reply(RelayAnswer{404, {}, fmt::format("peer {} is not connected (its lease ran out, or it never connected): "
                                           "connect first",
                                           target.peer.substr(0, 80))});
    return;
  }
  if (peer->user != call.user) return reply(not_yours(peer->id));
  const auto& options = service_.options();
  // A poll acknowledges what the previous ones handed out: all of it (a seed client), or the
  // batches up to the one it names as received (Carrier-Relay-Ack); later ones go out again.
  std::map<std::uint64_t, std::vector<std::uint64_t>> acks;
  std::vector<core::StateRecord> removals;
  for (auto& item : peer->mailbox.acknowledge(call.received)) {
    if (item.from_pipe) acks[item.consumer.value()].push_back(item.tag);
    if (!item.record.is_nil()) removals.push_back({std::string(kMailQueue), nullptr, item.record});
  }
  for (auto& [consumer, tags] : acks) broker_.ack(core::ConsumerId(consumer), std::move(tags), nullptr);
  remove_records(std::move(removals));
  if (!requests.empty() && peer->mailbox.size() + requests.size() > options.max_pending) {
    reply(RelayAnswer{429, {}, fmt::format("the peer's mailbox holds {} messages (relay.max_pending = {}): poll "
                                           "without requests to collect them",
                                           peer->mailbox.size(), options.max_pending)});
    return;
  }
  // Using the relay renews the lease for the length connect granted.
  peer->expires_ms = broker_.now_ms() + peer->lease_ms;
  renew_record(*peer);
  if (peer->waiting) {
    // One poll waits per peer: the newer one takes over, the older answers empty.
    peer->waiting->reply(RelayAnswer{200, {}, {}});
    peer->waiting.reset();
  }
  const std::uint64_t seq = ++peer->poll_seq;
  const std::string id = peer->id;
  for (const auto& r : requests) {
    handle_request(*peer, r);
    peer = find(id);
    if (peer == nullptr) return;  // cannot happen: requests do not end the lease
  }
  if (max == 0) {
    // Carrier-Relay-Max: 0 only acknowledges (a Carrier-aware client leaving): nothing handed out.
    reply(RelayAnswer{200, {}, {}});
    return;
  }
  const std::uint64_t wait_ms = std::min<std::uint64_t>(target.wait_ms, options.max_poll_wait_ms);
  peer->waiting = WaitingPoll{std::move(reply), std::max<std::uint32_t>(1, std::min(max, options.max_poll_messages)), seq,
                              wait_ms == 0};
  // Requests still being worked out hold the answer back (at most max_poll_wait_ms), so that
  // all their responses (every search result) leave together.
  if (peer->in_progress == 0 && (peer->mailbox.has_pending() || wait_ms == 0)) {
    answer_waiting(*peer);
    return;
  }
  // Waits for a message, or (wait 0) for its own requests' responses, at most max_poll_wait_ms.
  std::weak_ptr<Gateway> weak = weak_from_this();
  service_.executor().post_after(shard_, wait_ms == 0 ? options.max_poll_wait_ms : wait_ms, [weak, id, seq] {
    auto g = weak.lock();
    if (!g) return;
    Peer* p = g->find(id);
    if (p != nullptr && p->waiting && p->waiting->seq == seq) g->answer_waiting(*p);
  });
}

void Gateway::answer_waiting(Peer& peer) {
  if (!peer.waiting) return;
  std::string body;
  const std::uint64_t batch = peer.batch_seq + 1;
  if (peer.mailbox.hand_out(peer.waiting->max, broker_.now_ms(), batch, body) > 0) peer.batch_seq = batch;
  const std::uint64_t numbered = body.empty() ? 0 : batch;
  auto reply = std::move(peer.waiting->reply);
  peer.waiting.reset();
  arm_redeliver(peer);
  reply(RelayAnswer{200, std::move(body), {}, numbered});
}

void Gateway::push(Peer& peer, codec::Message message, Mailbox::Item item) {
  add_endpoints(message, "jxta://" + peer.id, peer.relay_address);
  item.bytes = encoded(message);
  if (!item.from_pipe) item.record = record_mail(peer, item.bytes);
  peer.mailbox.push(std::move(item));
  if (peer.waiting && peer.in_progress == 0) answer_waiting(peer);
}

void Gateway::later(const std::string& id, std::function<void(Peer&)> fn) {
  Peer* peer = find(id);
  if (peer == nullptr) return;  // gone meanwhile: its responses with it
  fn(*peer);
  finished(*peer);
}

void Gateway::finished(Peer& peer) {
  if (peer.in_progress > 0) --peer.in_progress;
  if (peer.in_progress == 0 && peer.waiting && (peer.waiting->until_answered || peer.mailbox.has_pending())) {
    answer_waiting(peer);
  }
}

void Gateway::respond(Peer& peer, std::string_view kind, const std::string& request_id,
                      std::vector<std::pair<std::string, std::string>> fields) {
  codec::Message m;
  m.namespaces = {std::string(kProxy)};
  m.add(std::string(kProxy), "response", std::string(kind));
  m.add(std::string(kProxy), "requestId", request_id);
  for (auto& [name, value] : fields) m.add(std::string(kProxy), std::move(name), std::move(value));
  push(peer, std::move(m));
}

void Gateway::respond_error(Peer& peer, const std::string& request_id, std::string reason) {
  respond(peer, "error", request_id, {{"reason", std::move(reason)}});
}

// --- requests ----------------------------------------------------------------------------------

void Gateway::handle_request(Peer& peer, const codec::Message& request) {
  const std::string request_id = field(request, "requestId");
  const std::string kind = field(request, "request");
  if (kind == "create") return create(peer, request, request_id);
  if (kind == "search") return search(peer, request, request_id);
  if (kind == "join") return join(peer, request, request_id);
  if (kind == "listen") return listen(peer, request, request_id);
  if (kind == "send") return send(peer, request, request_id);
  respond_error(peer, request_id,
                kind.empty() ? std::string("the message has no proxy:request element")
                             : fmt::format("unknown request '{}' (create, search, join, listen, send)",
                                           kind.substr(0, 64)));
}

void Gateway::create(Peer& peer, const codec::Message& request, const std::string& request_id) {
  const std::string type = field(request, "type");
  const std::string name = field(request, "name");
  const std::string arg = field(request, "arg");
  if (name.empty()) return respond_error(peer, request_id, "create needs a name");
  Directory::Entry entry{type, name, {}, {}};
  if (type == "GROUP") {
    if (name.find_first_of(".*>#+$") != std::string::npos) {
      return respond_error(peer, request_id, "a group name may not contain . * > # + $");
    }
    if (!may_use_group(peer, name)) {
      return respond_error(peer, request_id, auth::access_denied_detail(peer.user, "create", "group " + name));
    }
    entry.id = group_id(name);
  } else if (type == "PIPE") {
    model::Destination d;
    if (arg == kPropagate) {
      d.kind = model::DestinationKind::topic;
    } else if (arg == kUnicast || arg == "Unicast" || arg.empty()) {
      d.kind = model::DestinationKind::queue;
    } else {
      return respond_error(peer, request_id, fmt::format("a pipe's arg is JxtaUnicast or JxtaPropagate, not '{}'",
                                                         arg.substr(0, 64)));
    }
    d.name = peer.group.empty() ? name : peer.group + "." + name;
    if (d.name.front() == '$' || d.name.find_first_of("*>#+") != std::string::npos) {
      return respond_error(peer, request_id, "a pipe name may not start with $ or contain * > # +");
    }
    if (auto st = broker_.check_destination(d, false); !st) return respond_error(peer, request_id, st.error().detail);
    // Whoever may use a pipe may name it in the directory.
    if (!may(peer, auth::Right::read, d) && !may(peer, auth::Right::write, d)) {
      return respond_error(peer, request_id, denied(peer, "create", d));
    }
    entry.id = pipe_id(d);
    entry.arg = d.kind == model::DestinationKind::topic ? std::string(kPropagate) : std::string(kUnicast);
  } else {
    return respond_error(peer, request_id, fmt::format("create makes a PIPE or a GROUP, not '{}'", type.substr(0, 64)));
  }
  ++peer.in_progress;
  std::weak_ptr<Gateway> weak = weak_from_this();
  service_.with_directory<Status>(
      shard_,
      [entry, &service = service_](Directory& dir) -> Status {
        auto added = dir.add(entry);
        if (!added) return unexpected(added.error());
        if (*added) service.record_entry(entry);
        return {};
      },
      [weak, id = peer.id, entry, request_id](Status st) {
        auto g = weak.lock();
        if (!g) return;
        g->later(id, [&](Peer& p) {
          if (!st) return g->respond_error(p, request_id, st.error().detail);
          std::vector<std::pair<std::string, std::string>> fields{{"type", entry.type}, {"name", entry.name},
                                                                  {"id", entry.id}};
          if (!entry.arg.empty()) fields.emplace_back("arg", entry.arg);
          g->respond(p, "success", request_id, std::move(fields));
        });
      });
}

void Gateway::search(Peer& peer, const codec::Message& request, const std::string& request_id) {
  const std::string type = field(request, "type");
  std::string attr = field(request, "attr");
  std::string value = field(request, "value");
  // The seed's demos spell it "Name".
  std::transform(attr.begin(), attr.end(), attr.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (attr.empty()) attr = "name";
  if (value.empty()) value.push_back('*');  // not `= "*"`: g++ 12 -O3's false -Wrestrict (GCC bug 105329)
  if (type != "PIPE" && type != "GROUP") {
    return respond_error(peer, request_id, fmt::format("search finds a PIPE or a GROUP, not '{}'", type.substr(0, 64)));
  }
  if (attr != "name" && attr != "id") return respond_error(peer, request_id, "search's attr is name or id");
  std::size_t limit = service_.options().max_search_results;
  if (const auto t = field(request, "threshold"); !t.empty()) {
    std::size_t n = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
    if (ec != std::errc() || end != t.data() + t.size()) {
      return respond_error(peer, request_id, "search's threshold is a number");
    }
    if (n > 0) limit = std::min(limit, n);
  }
  ++peer.in_progress;
  std::weak_ptr<Gateway> weak = weak_from_this();
  service_.with_directory<std::vector<Directory::Entry>>(
      shard_, [type, attr, value, limit](Directory& dir) { return dir.search(type, attr, value, limit); },
      [weak, id = peer.id, request_id](std::vector<Directory::Entry> found) {
        auto g = weak.lock();
        if (!g) return;
        // One result message per match, then nothing more (seed 000's search). What the
        // peer's user may not use is not shown.
        g->later(id, [&](Peer& p) {
          for (auto& e : found) {
            if (!g->may_see(p, e)) continue;
            std::vector<std::pair<std::string, std::string>> fields{{"type", e.type}, {"name", e.name}, {"id", e.id}};
            if (!e.arg.empty()) fields.emplace_back("arg", e.arg);
            g->respond(p, "result", request_id, std::move(fields));
          }
        });
      });
}

void Gateway::join(Peer& peer, const codec::Message& request, const std::string& request_id) {
  auto group = group_name(field(request, "id"));
  if (!group) return respond_error(peer, request_id, "join's id is not a group id of this relay");
  if (!may_use_group(peer, *group)) {
    return respond_error(peer, request_id, auth::access_denied_detail(peer.user, "join", "group " + *group));
  }
  auth::Authenticator& auth = service_.authenticator();
  if (!auth.has_users()) {
    peer.group = *group;
    record_peer(peer);
    return respond(peer, "success", request_id);
  }
  // A group's password is the broker user of the group's name (docs/relay.md).
  auth::Credentials credentials;
  credentials.username = *group;
  credentials.password = field(request, "arg");
  credentials.source = "relay:" + peer.id;
  ++peer.in_progress;
  std::weak_ptr<Gateway> weak = weak_from_this();
  auto done = [weak, id = peer.id, request_id, name = *group](auth::Outcome outcome) {
    auto g = weak.lock();
    if (!g) return;
    g->later(id, [&](Peer& p) {
      if (outcome.verdict != auth::Verdict::accepted || outcome.user != name) {
        return g->respond_error(p, request_id, fmt::format("joining group '{}' was refused: wrong password", name));
      }
      p.group = name;
      g->record_peer(p);
      g->respond(p, "success", request_id);
    });
  };
  if (auto outcome = auth.authenticate(std::move(credentials), shard_, done)) done(std::move(*outcome));
}

void Gateway::listen(Peer& peer, const codec::Message& request, const std::string& request_id) {
  const std::string pipe = field(request, "id");
  auto destination = pipe_destination(pipe);
  if (!destination) return respond_error(peer, request_id, "listen's id is not a pipe id of this relay");
  if (peer.listens.contains(pipe)) return respond(peer, "success", request_id);
  // The relay's subscription lives only as long as the peer's lease: read suffices, as for a
  // plain subscription, also on a propagate pipe.
  if (!may(peer, auth::Right::read, *destination)) {
    return respond_error(peer, request_id, denied(peer, "listen to", *destination));
  }
  ++peer.in_progress;
  std::weak_ptr<Gateway> weak = weak_from_this();
  auto consumer = subscribe_pipe(peer, pipe, *destination, [weak, id = peer.id, request_id, pipe](Status st) {
    auto g = weak.lock();
    if (!g) return;
    g->later(id, [&](Peer& p) {
      if (!st) {
        if (auto it = p.listens.find(pipe); it != p.listens.end()) {
          p.pipe_of.erase(it->second.consumer.value());
          p.listens.erase(it);
        }
        return g->respond_error(p, request_id, st.error().detail);
      }
      if (auto it = p.listens.find(pipe); it != p.listens.end() && it->second.record.is_nil()) {
        it->second.record = g->record_listen(p, it->second);
      }
      g->respond(p, "success", request_id);
    });
  });
  if (!consumer) {
    --peer.in_progress;
    return respond_error(peer, request_id, consumer.error().detail);
  }
  peer.listens[pipe].request_id = request_id;
}

Result<core::ConsumerId> Gateway::subscribe_pipe(Peer& peer, const std::string& pipe,
                                                 const model::Destination& destination, core::Completion done) {
  core::SubscribeRequest sub{destination, core::AckMode::client_individual,
                             static_cast<std::uint32_t>(std::min<std::size_t>(service_.options().max_pending, UINT32_MAX)),
                             std::make_shared<PipeConsumer>(weak_from_this(), peer.id)};
  if (destination.kind == model::DestinationKind::topic) {
    // Durable: what is sent to the pipe while the peer is between polls (or the broker
    // restarts) waits for it.
    sub.subscription_name = fmt::format("relay:{}:{}", peer.id, destination.name);
    sub.durable = true;
  }
  const std::string subscription = sub.subscription_name;
  auto consumer = broker_.subscribe(std::move(sub), std::move(done));
  if (!consumer) return consumer;
  peer.listens[pipe] = Listen{*consumer, subscription, {}, pipe, {}};
  peer.pipe_of[consumer->value()] = pipe;
  return consumer;
}

void Gateway::send(Peer& peer, const codec::Message& request, const std::string& request_id) {
  auto destination = pipe_destination(field(request, "id"));
  if (!destination) return respond_error(peer, request_id, "send's id is not a pipe id of this relay");
  if (auto st = broker_.check_destination(*destination, false); !st) {
    return respond_error(peer, request_id, st.error().detail);
  }
  if (!may(peer, auth::Right::write, *destination)) {
    return respond_error(peer, request_id, denied(peer, "send to", *destination));
  }
  // A relay send is persistent, and a thin client feels no TCP back-pressure: while the broker
  // holds its producers back it is told to send again later, as an HTTP POST gets 429.
  if (const auto* disk = broker_.disk_alarm(); disk != nullptr && disk->holding()) {
    return respond_error(peer, request_id,
                         "the store's disk is under its free-space limit (disk_free_limit_bytes); send again later");
  }
  if (auto* memory = broker_.memory(); memory != nullptr && memory->over_limit()) {
    return respond_error(peer, request_id, "the broker is at its memory limit (memory_limit_bytes); send again later");
  }
  auto m = std::make_shared<model::Message>();
  m->id = broker_.next_message_id();
  m->destination = *destination;
  m->timestamp_ms = broker_.now_ms();
  m->persistent = true;  // success means stored
  fill_message(application_elements(request), *m);
  ++peer.in_progress;
  std::weak_ptr<Gateway> weak = weak_from_this();
  broker_.send({std::move(m)}, [weak, id = peer.id, request_id](Status st) {
    auto g = weak.lock();
    if (!g) return;
    g->later(id, [&](Peer& p) {
      if (!st) return g->respond_error(p, request_id, st.error().detail);
      g->respond(p, "success", request_id);
    });
  });
}

// --- pipe messages -------------------------------------------------------------------------------

void Gateway::deliver(const std::string& id, core::ConsumerId consumer, std::vector<core::Delivery> batch) {
  Peer* peer = find(id);
  if (peer == nullptr) return;  // forgotten: the consumer is being detached, the queue takes them back
  auto pipe = peer->pipe_of.find(consumer.value());
  if (pipe == peer->pipe_of.end()) return;
  const Listen& listen = peer->listens[pipe->second];
  for (auto& d : batch) {
    codec::Message m;
    m.namespaces = {std::string(kProxy)};
    m.add(std::string(kProxy), "response", "message");
    m.add(std::string(kProxy), "requestId", listen.request_id);
    m.add(std::string(kProxy), "id", listen.pipe_id);
    for (auto& e : elements_of(*d.message)) m.elements.push_back(std::move(e));
    push(*peer, std::move(m), Mailbox::Item{{}, consumer, d.tag, true});
  }
}

}  // namespace carrier::relay
