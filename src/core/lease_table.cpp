#include "core/lease_table.hpp"

#include <charconv>
#include <random>

#include <fmt/format.h>

#include "core/broker.hpp"

namespace carrier::core {

namespace {

// A lease's secret: from the operating system's generator, not the shard's seeded one, whose
// outputs would tell the next.
std::uint64_t random_secret() {
  thread_local std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

template <class T>
bool parse_number(std::string_view text, int base, T& out) {
  if (text.empty()) return false;
  auto r = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

}  // namespace

std::string LeaseId::to_string() const { return fmt::format("{}-{:x}-{:016x}", shard.value(), seq, secret); }

std::optional<LeaseId> LeaseId::parse(std::string_view text) {
  const auto first = text.find('-');
  const auto second = first == std::string_view::npos ? first : text.find('-', first + 1);
  if (second == std::string_view::npos || text.size() - second - 1 != 16 || second - first - 1 > 16) return std::nullopt;
  std::uint32_t shard = 0;
  LeaseId id;
  if (!parse_number(text.substr(0, first), 10, shard) || !parse_number(text.substr(first + 1, second - first - 1), 16, id.seq) ||
      !parse_number(text.substr(second + 1), 16, id.secret)) {
    return std::nullopt;
  }
  id.shard = model::ShardId(shard);
  return id;
}

Result<std::uint32_t> LeaseTable::reserve(const std::string& user, std::uint32_t wanted, const LeaseLimits& limits) {
  std::size_t room = wanted;
  if (limits.max_total != 0) room = std::min(room, limits.max_total > total_ ? limits.max_total - total_ : 0);
  auto it = users_.find(user);
  const std::size_t mine = it == users_.end() ? 0 : it->second;
  if (limits.max_per_user != 0) room = std::min(room, limits.max_per_user > mine ? limits.max_per_user - mine : 0);
  if (room == 0) {
    return unexpected(Errc::limit_exceeded,
                      limits.max_per_user != 0 && mine >= limits.max_per_user
                          ? fmt::format("this user holds {} leases, the most allowed (http.max_leases_per_user)", mine)
                          : fmt::format("{} leases are held, the most allowed (http.max_leases)", total_));
  }
  users_[user] += room;
  total_ += room;
  return static_cast<std::uint32_t>(room);
}

void LeaseTable::unreserve(const std::string& user, std::uint32_t reserved) { uncount(user, reserved); }

void LeaseTable::uncount(const std::string& user, std::size_t n) {
  if (n == 0) return;
  auto it = users_.find(user);
  if (it != users_.end()) {
    it->second -= std::min(it->second, n);
    if (it->second == 0) users_.erase(it);
  }
  total_ -= std::min(total_, n);
}

std::vector<LeaseId> LeaseTable::grant(const std::string& user, std::uint32_t reserved, ConsumerId consumer,
                                       std::span<const Delivery> batch, std::uint64_t visibility_ms) {
  std::vector<LeaseId> ids;
  const std::size_t n = std::min<std::size_t>(batch.size(), reserved);
  uncount(user, reserved - n);  // the rest of the reservation is not used
  if (n == 0) return ids;
  const std::int64_t deadline = shard_.now_ms() + static_cast<std::int64_t>(visibility_ms);
  std::vector<std::uint64_t> seqs;
  ids.reserve(n);
  seqs.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t seq = next_seq_++;
    Lease lease{random_secret(), consumer, batch[i].tag, deadline, user};
    ids.push_back(LeaseId{shard_.self, seq, lease.secret});
    seqs.push_back(seq);
    leases_.emplace(seq, std::move(lease));
  }
  consumers_[consumer] += n;
  // The deliveries past the reservation (never more than the poll's max) are not leased.
  if (batch.size() > n) {
    std::vector<std::uint64_t> tags;
    for (std::size_t i = n; i < batch.size(); ++i) tags.push_back(batch[i].tag);
    broker_.nack(consumer, std::move(tags), nullptr);
  }
  // One schedule entry for the whole poll: its leases run out together.
  shard_.at(deadline, [this, seqs = std::move(seqs)]() { expire(seqs); });
  return ids;
}

std::optional<std::int64_t> LeaseTable::deadline(const LeaseId& id) const {
  auto it = leases_.find(id.seq);
  if (id.shard != shard_.self || it == leases_.end() || it->second.secret != id.secret) return std::nullopt;
  return it->second.deadline_ms;
}

void LeaseTable::end(const LeaseId& id, LeaseEnd how, Completion done) {
  auto it = leases_.find(id.seq);
  if (id.shard != shard_.self || it == leases_.end() || it->second.secret != id.secret) {
    shard_.complete_on(shard_.self, std::move(done),
                       unexpected(Errc::not_found, fmt::format("no lease '{}': never granted, run out, or ended already",
                                                               id.to_string())));
    return;
  }
  finish(it, how, std::move(done));
}

void LeaseTable::expire(const std::vector<std::uint64_t>& seqs) {
  for (auto seq : seqs) {
    auto it = leases_.find(seq);
    if (it != leases_.end()) finish(it, LeaseEnd::nack, nullptr);
  }
}

void LeaseTable::finish(std::unordered_map<std::uint64_t, Lease>::iterator it, LeaseEnd how, Completion done) {
  const ConsumerId consumer = it->second.consumer;
  std::vector<std::uint64_t> tags{it->second.tag};
  uncount(it->second.user, 1);
  leases_.erase(it);
  switch (how) {
    case LeaseEnd::ack: broker_.ack(consumer, std::move(tags), std::move(done)); break;
    case LeaseEnd::nack: broker_.nack(consumer, std::move(tags), std::move(done)); break;
    case LeaseEnd::reject: broker_.reject(consumer, std::move(tags), std::move(done)); break;
  }
  auto c = consumers_.find(consumer);
  if (c != consumers_.end() && --c->second == 0) {
    // Posted after the settlement: the queue never sees the delivery unacked without a consumer.
    consumers_.erase(c);
    broker_.unsubscribe(consumer, nullptr);
  }
  // Memory returns when leases end: a burst leaves no bucket array behind.
  if (leases_.empty() && leases_.bucket_count() > 1024) leases_.rehash(0);
}

}  // namespace carrier::core
