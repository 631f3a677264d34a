#pragma once

// JMS message selectors: the SQL-92 subset of JMS 1.1/2.0 section 3.8.1, compiled once per
// subscription and evaluated for every message the subscription is offered.
//
//   auto selector = selector::parse("color = 'red' AND amount > 100");
//   if (!selector) reject(selector.error());      // "selector: ... at position N"
//   if (selector::matches(**selector, message)) deliver(message);
//
// See docs/selectors.md for the language and src/selector/README.md for the internals.

#include <memory>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "model/message.hpp"
#include "selector/parser.hpp"

namespace carrier::selector {

class Selector;

// Compiles a selector. An empty selector is an error here: JMS treats "" as "no selector", and
// that is the caller's decision (do not build a Selector at all).
Result<std::shared_ptr<const Selector>> parse(std::string_view text, const Limits& limits = {});

// An immutable compiled selector. Runs on: any thread; share one across threads and shards
// freely (matches() only reads it).
class Selector {
 public:
  // The selector as the subscriber wrote it.
  const std::string& text() const { return text_; }
  const Tree& tree() const { return tree_; }

 private:
  friend Result<std::shared_ptr<const Selector>> parse(std::string_view text,
                                                       const Limits& limits);
  Selector(std::string text, Tree tree);

  std::string text_;
  Tree tree_;
};

// Whether `message` is selected: the expression is TRUE. FALSE and UNKNOWN (NULL involved, types
// that do not compare, division by zero) do not match. Allocates nothing.
bool matches(const Selector& selector, const model::Message& message);

}  // namespace carrier::selector
