#include "core/destination_tree.hpp"

#include <algorithm>

namespace carrier::core {

struct DestinationTree::Node {
  std::unordered_map<std::string, std::unique_ptr<Node>> children;
  std::unique_ptr<Node> star;
  std::vector<TopicSubscriber> here;  // filters that end at this node
  std::vector<TopicSubscriber> rest;  // filters ending in `>` after this node

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

bool erase_subscriber(std::vector<TopicSubscriber>& v, const std::function<bool(const TopicSubscriber&)>& pred) {
  auto it = std::find_if(v.begin(), v.end(), pred);
  if (it == v.end()) return false;
  v.erase(it);
  return true;
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
      node->rest.push_back(subscriber);
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
  node->here.push_back(subscriber);
  ++size_;
}

bool DestinationTree::remove(std::string_view filter, ConsumerId id) {
  return remove_if(filter, [id](const TopicSubscriber& s) { return s.queue_key.empty() && s.id == id; });
}

bool DestinationTree::remove_named(std::string_view filter, std::string_view queue_key) {
  return remove_if(filter, [queue_key](const TopicSubscriber& s) { return s.queue_key == queue_key; });
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

bool DestinationTree::remove_if(std::string_view filter, const std::function<bool(const TopicSubscriber&)>& pred) {
  // Walk down remembering the path so emptied nodes can be pruned on the way back.
  std::vector<std::pair<Node*, std::string>> path;
  Node* node = root_.get();
  std::string_view rest = filter;
  bool more = true;
  bool removed = false;
  while (more) {
    auto level = next_level(rest, more);
    if (level == ">") {
      removed = erase_subscriber(node->rest, pred);
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
    if (!more) removed = erase_subscriber(node->here, pred);
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
    if (wildcards) out.insert(out.end(), s.node->rest.begin(), s.node->rest.end());
    key.assign(level);
    auto it = s.node->children.find(key);
    for (const Node* next : {it != s.node->children.end() ? it->second.get() : nullptr,
                             wildcards ? s.node->star.get() : nullptr}) {
      if (next == nullptr) continue;
      if (more) {
        stack.push_back({next, s.rest});
      } else {
        out.insert(out.end(), next->here.begin(), next->here.end());
      }
    }
  }
}

}  // namespace carrier::core
