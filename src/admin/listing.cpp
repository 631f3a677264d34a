#include "admin/listing.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "model/queue_key.hpp"

namespace carrier::admin {

namespace {

// Sorts by `less` (ties by the secondary order already in place), reversed on request, and
// cuts the page.
template <class Row, class Less>
Page<Row> cut(std::vector<Row> rows, const PageRequest& request, Less less) {
  Page<Row> page;
  page.total = rows.size();
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    return request.descending ? less(b, a) : less(a, b);
  });
  const std::size_t from = std::min(request.offset, rows.size());
  const std::size_t to = from + std::min(request.limit, rows.size() - from);
  page.rows.assign(std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(from)),
                   std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(to)));
  return page;
}

template <class Row>
using Key = std::function<bool(const Row&, const Row&)>;

template <class Row>
Result<Key<Row>> key_for(std::string_view sort, std::initializer_list<std::pair<std::string_view, Key<Row>>> keys) {
  std::string names;
  for (const auto& [name, less] : keys) {
    if (name == sort) return less;
    names += names.empty() ? "" : ", ";
    names += name;
  }
  return unexpected(Errc::invalid_argument, fmt::format("cannot sort by '{}' (one of: {})", sort.substr(0, 64), names));
}

// Orders queues by their oldest ready message's age without a clock: an older timestamp ranks higher.
std::int64_t age_key(const QueueRow& q) {
  return q.oldest_timestamp_ms == 0 ? INT64_MIN : -q.oldest_timestamp_ms;
}

}  // namespace

std::vector<DestinationRow> destination_rows(std::vector<QueueRow> queues) {
  std::vector<DestinationRow> rows;
  rows.reserve(queues.size());
  for (auto& q : queues) {
    const auto key = model::QueueKey::parse(q.key);
    if (!key) continue;
    std::string_view k;
    switch (key->kind()) {
      case model::QueueKind::queue: k = "queue"; break;
      case model::QueueKind::temp_queue: k = "temp-queue"; break;
      case model::QueueKind::subscription: k = "subscription"; break;
      default: continue;  // the broker's own bookkeeping
    }
    if (!key->name().empty() && key->name().front() == '$') continue;
    rows.push_back(DestinationRow{std::string(k), key->name(), std::move(q)});
  }
  // Sorted as indices, then moved once: a row is three strings and moving them inside the sort
  // cost more than the comparisons.
  std::vector<std::uint32_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&rows](std::uint32_t a, std::uint32_t b) {
    return std::tie(rows[a].name, rows[a].kind) < std::tie(rows[b].name, rows[b].kind);
  });
  std::vector<DestinationRow> sorted;
  sorted.reserve(rows.size());
  for (const auto i : order) sorted.push_back(std::move(rows[i]));
  return sorted;
}

Result<Page<DestinationRow>> list_destinations(const std::vector<DestinationRow>& by_name, std::string_view kind,
                                               const PageRequest& request) {
  using R = DestinationRow;
  auto less = key_for<R>(request.sort, {
      {"name", [](const R&, const R&) { return false; }},  // by_name's order already
      {"depth", [](const R& a, const R& b) { return a.stats.depth < b.stats.depth; }},
      {"bytes", [](const R& a, const R& b) { return a.stats.bytes < b.stats.bytes; }},
      {"unacked", [](const R& a, const R& b) { return a.stats.unacked < b.stats.unacked; }},
      {"consumers", [](const R& a, const R& b) { return a.stats.consumers < b.stats.consumers; }},
      {"enqueued", [](const R& a, const R& b) { return a.stats.enqueued < b.stats.enqueued; }},
      // Age: an empty queue (no timestamp) is the youngest; an older timestamp is a greater age.
      {"age", [](const R& a, const R& b) { return age_key(a.stats) < age_key(b.stats); }},
  });
  if (!less) return unexpected(less.error());
  // Pointers into by_name, still in name order: their position breaks ties.
  std::vector<const R*> rows;
  rows.reserve(kind.empty() && request.filter.empty() ? by_name.size() : 0);
  for (const auto& r : by_name) {
    if (!kind.empty() && kind != r.kind) continue;
    if (!request.filter.empty() && r.name.find(request.filter) == std::string::npos) continue;
    rows.push_back(&r);
  }
  Page<R> page;
  page.total = rows.size();
  const std::size_t from = std::min(request.offset, rows.size());
  const std::size_t to = from + std::min(request.limit, rows.size() - from);
  const bool by_name_order = request.sort == "name";
  if (by_name_order && request.descending) std::reverse(rows.begin(), rows.end());
  if (!by_name_order) {
    const auto& key_less = *less;
    const bool descending = request.descending;
    std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(to), rows.end(),
                      [&key_less, descending](const R* a, const R* b) {
                        if (descending ? key_less(*b, *a) : key_less(*a, *b)) return true;
                        if (descending ? key_less(*a, *b) : key_less(*b, *a)) return false;
                        return a < b;  // equal keys: name order
                      });
  }
  page.rows.reserve(to - from);
  for (std::size_t i = from; i < to; ++i) page.rows.push_back(*rows[i]);
  return page;
}

Result<Page<DestinationRow>> list_destinations(std::vector<QueueRow> queues, std::string_view kind,
                                               const PageRequest& request) {
  return list_destinations(destination_rows(std::move(queues)), kind, request);
}

Result<Page<ConnectionRow>> list_connections(std::vector<ConnectionRow> connections, const PageRequest& request) {
  using R = ConnectionRow;
  auto less = key_for<R>(request.sort.empty() || request.sort == "name" ? "id" : request.sort, {
      {"id", [](const R& a, const R& b) { return a.id < b.id; }},
      {"protocol", [](const R& a, const R& b) { return a.protocol < b.protocol; }},
      {"peer", [](const R& a, const R& b) { return a.peer < b.peer; }},
      {"since", [](const R& a, const R& b) { return a.connected_at_ms < b.connected_at_ms; }},
      {"queued", [](const R& a, const R& b) { return a.queued_bytes < b.queued_bytes; }},
      {"client", [](const R& a, const R& b) { return a.client_id < b.client_id; }},
      {"user", [](const R& a, const R& b) { return a.user < b.user; }},
      {"in", [](const R& a, const R& b) { return a.messages.in_per_second < b.messages.in_per_second; }},
      {"out", [](const R& a, const R& b) { return a.messages.out_per_second < b.messages.out_per_second; }},
  });
  if (!less) return unexpected(less.error());
  std::vector<R> rows;
  for (auto& c : connections) {
    const auto& f = request.filter;
    if (!f.empty() && c.peer.find(f) == std::string::npos && c.protocol != f &&
        c.client_id.find(f) == std::string::npos && c.user.find(f) == std::string::npos) {
      continue;
    }
    rows.push_back(std::move(c));
  }
  std::sort(rows.begin(), rows.end(), [](const R& a, const R& b) { return a.id < b.id; });
  return cut(std::move(rows), request, *less);
}

Result<Page<TopicRow>> list_topics(std::vector<TopicRow> topics, const PageRequest& request) {
  using R = TopicRow;
  auto less = key_for<R>(request.sort, {
      {"name", [](const R& a, const R& b) { return a.filter < b.filter; }},
      {"subscriptions", [](const R& a, const R& b) { return a.subscriptions < b.subscriptions; }},
      {"consumers", [](const R& a, const R& b) { return a.consumers < b.consumers; }},
      {"depth", [](const R& a, const R& b) { return a.depth < b.depth; }},
      {"bytes", [](const R& a, const R& b) { return a.bytes < b.bytes; }},
      {"unacked", [](const R& a, const R& b) { return a.unacked < b.unacked; }},
      {"enqueued", [](const R& a, const R& b) { return a.enqueued < b.enqueued; }},
  });
  if (!less) return unexpected(less.error());
  std::vector<R> rows;
  for (auto& t : topics) {
    if (!t.filter.empty() && t.filter.front() == '$') continue;  // the broker's own
    if (!request.filter.empty() && t.filter.find(request.filter) == std::string::npos) continue;
    rows.push_back(std::move(t));
  }
  std::sort(rows.begin(), rows.end(), [](const R& a, const R& b) { return a.filter < b.filter; });
  return cut(std::move(rows), request, *less);
}

}  // namespace carrier::admin
