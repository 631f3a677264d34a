#include "core/destination_tree.hpp"

#include <algorithm>
#include <cstdint>

namespace carrier::core {

namespace {

// Where a subscriber sits in its node: its consumer id (private) or a hash of its queue key
// (named). Two may share one; remove() checks the subscriber itself.
std::uint64_t key_of(ConsumerId id) { return id.value(); }
std::uint64_t key_of(std::string_view queue_key) { return std::hash<std::string_view>{}(queue_key); }
std::uint64_t key_of(const TopicSubscriber& s) { return s.queue_key.empty() ? key_of(s.id) : key_of(s.queue_key); }

// From this many subscribers on, a node's list keeps an index of positions: a topic thousands
// of connections subscribe to would otherwise cost a scan and a shift per unsubscribe, and a
// storm of them leaving quadratic time.
constexpr std::size_t kIndexFrom = 32;

}  // namespace

// The subscribers of one filter: a vector, walked by every match (the hot path), plus positions
// by key once it is long.
struct DestinationTree::Subscribers {
  using Positions = std::unordered_multimap<std::uint64_t, std::uint32_t>;
  std::vector<TopicSubscriber> list;
  std::unique_ptr<Positions> at;  // null below kIndexFrom (a pointer: most nodes never need it)

  bool empty() const { return list.empty(); }

  void add(TopicSubscriber s) {
    list.push_back(std::move(s));
    if (at) {
      at->emplace(key_of(list.back()), static_cast<std::uint32_t>(list.size() - 1));
    } else if (list.size() >= kIndexFrom) {
      at = std::make_unique<Positions>();
      at->reserve(list.size() * 2);
      for (std::size_t i = 0; i < list.size(); ++i) at->emplace(key_of(list[i]), static_cast<std::uint32_t>(i));
    }
  }

  bool remove(std::uint64_t key, const std::function<bool(const TopicSubscriber&)>& pred) {
    if (!at) {
      // Short: keep the order (erase shifts a few).
      auto it = std::find_if(list.begin(), list.end(), pred);
      if (it == list.end()) return false;
      list.erase(it);
      return true;
    }
    auto [first, last] = at->equal_range(key);
    auto hit = std::find_if(first, last, [&](const auto& kv) { return pred(list[kv.second]); });
    if (hit == last) return false;
    const std::uint32_t pos = hit->second;
    at->erase(hit);
    const auto back = static_cast<std::uint32_t>(list.size() - 1);
    if (pos != back) {
      // The last one takes the freed place; its position entry follows it.
      auto [f, l] = at->equal_range(key_of(list[back]));
      for (; f != l; ++f) {
        if (f->second == back) {
          f->second = pos;
          break;
        }
      }
      list[pos] = std::move(list[back]);
    }
    list.pop_back();
    if (list.size() < kIndexFrom / 2) at.reset();
    return true;
  }
};

struct DestinationTree::Node {
  std::unordered_map<std::string, std::unique_ptr<Node>> children;
  std::unique_ptr<Node> star;
  Subscribers here;  // filters that end at this node
  Subscribers rest;  // filters ending in `>` after this node

  bool empty() const { return children.empty() && !star && here.empty() && rest.empty(); }
};

namespace {

// Splits off the first level: "a.b.c" -> "a", rest "b.c"; last level -> rest is npos-marked.
std::string_view next_level(std::string_view& name, bool& more) {
  auto dot = name.find('.');
  if (dot == std::string_view::npos) {
    auto level = name;
    name = {};
    more = false;
    return level;
  }
  auto level = name.substr(0, dot);
  name.remove_prefix(dot + 1);
  more = true;
  return level;
}

}  // namespace

DestinationTree::DestinationTree() : root_(std::make_unique<Node>()) {}
DestinationTree::~DestinationTree() = default;

bool DestinationTree::has_wildcards(std::string_view name) {
  std::string_view rest = name;
  bool more = true;
  while (more) {
    auto level = next_level(rest, more);
    if (level == "*" || level == ">") return true;
  }
  return false;
}

bool DestinationTree::is_valid_filter(std::string_view filter) {
  if (filter.empty()) return false;
  std::string_view rest = filter;
  bool more = true;
  while (more) {
    auto level = next_level(rest, more);
    if (level.empty()) return false;
    if (level == ">" && more) return false;
    if (level.size() > 1 && (level.find('*') != std::string_view::npos || level.find('>') != std::string_view::npos)) {
      return false;
    }
  }
  return true;
}

void DestinationTree::add(std::string_view filter, TopicSubscriber subscriber) {
  Node* node = root_.get();
  std::string_view rest = filter;
  bool more = true;
  while (more) {
    auto level = next_level(rest, more);
    if (level == ">") {
      node->rest.add(std::move(subscriber));
      ++size_;
      return;
    }
    if (level == "*") {
      if (!node->star) node->star = std::make_unique<Node>();
      node = node->star.get();
    } else {
      auto& child = node->children[std::string(level)];
      if (!child) child = std::make_unique<Node>();
      node = child.get();
    }
  }
  node->here.add(std::move(subscriber));
  ++size_;
}

bool DestinationTree::remove(std::string_view filter, ConsumerId id) {
  return remove_if(filter, key_of(id), [id](const TopicSubscriber& s) { return s.queue_key.empty() && s.id == id; });
}

bool DestinationTree::remove_named(std::string_view filter, std::string_view queue_key) {
  return remove_if(filter, key_of(queue_key), [queue_key](const TopicSubscriber& s) { return s.queue_key == queue_key; });
}

bool DestinationTree::filter_matches(std::string_view filter, std::string_view name) {
  bool fmore = true, nmore = true;
  while (fmore) {
    auto f = next_level(filter, fmore);
    if (f == ">") return nmore;  // one or more levels left
    if (!nmore) return false;
    auto n = next_level(name, nmore);
    if (f != "*" && f != n) return false;
  }
  return !nmore;
}

bool DestinationTree::remove_if(std::string_view filter, std::uint64_t key,
                                const std::function<bool(const TopicSubscriber&)>& pred) {
  // Walk down remembering the path so emptied nodes can be pruned on the way back.
  std::vector<std::pair<Node*, std::string>> path;
  Node* node = root_.get();
  std::string_view rest = filter;
  bool more = true;
  bool removed = false;
  while (more) {
    auto level = next_level(rest, more);
    if (level == ">") {
      removed = node->rest.remove(key, pred);
      break;
    }
    Node* next = nullptr;
    if (level == "*") {
      next = node->star.get();
    } else {
      auto it = node->children.find(std::string(level));
      if (it != node->children.end()) next = it->second.get();
    }
    if (next == nullptr) return false;
    path.emplace_back(node, std::string(level));
    node = next;
    if (!more) removed = node->here.remove(key, pred);
  }
  if (!removed) return false;
  --size_;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    Node* parent = it->first;
    Node* child = it->second == "*" ? parent->star.get() : parent->children[it->second].get();
    if (!child->empty()) break;
    if (it->second == "*") {
      parent->star.reset();
    } else {
      parent->children.erase(it->second);
    }
  }
  return true;
}

void DestinationTree::match(std::string_view name, std::vector<TopicSubscriber>& out) const {
  // Iterative walk over (node, remaining name) pairs; `*` branches fork the walk.
  struct Step {
    const Node* node;
    std::string_view rest;
  };
  std::vector<Step> stack;
  stack.push_back({root_.get(), name});
  std::string key;
  // A name starting with `$` is reached only by filters that spell its first level (MQTT's rule;
  // STOMP's exchanges live there too).
  const bool hidden = !name.empty() && name.front() == '$';
  while (!stack.empty()) {
    Step s = stack.back();
    stack.pop_back();
    bool more = true;
    auto level = next_level(s.rest, more);
    const bool wildcards = !hidden || s.node != root_.get();
    // `>` here matches this level and everything after it.
    if (wildcards) out.insert(out.end(), s.node->rest.list.begin(), s.node->rest.list.end());
    key.assign(level);
    auto it = s.node->children.find(key);
    for (const Node* next : {it != s.node->children.end() ? it->second.get() : nullptr,
                             wildcards ? s.node->star.get() : nullptr}) {
      if (next == nullptr) continue;
      if (more) {
        stack.push_back({next, s.rest});
      } else {
        out.insert(out.end(), next->here.list.begin(), next->here.list.end());
      }
    }
  }
}

}  // namespace carrier::core
