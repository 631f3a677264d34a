#include "mqtt/topic_map.hpp"

#include <algorithm>

#include "mqtt/codec/data_types.hpp"
#include "mqtt/codec/topic_syntax.hpp"

namespace carrier::mqtt {

namespace {

constexpr std::string_view kTopicPrefix = "/topic/";

void append_core_level(std::string& out, std::string_view level) {
  if (level.empty()) {
    out.push_back('%');
    return;
  }
  for (char c : level) {
    switch (c) {
      case '.': out.push_back('/'); break;
      case '%': out += "%25"; break;
      case '*': out += "%2A"; break;
      case '>': out += "%3E"; break;
      default: out.push_back(c);
    }
  }
}

void append_mqtt_level(std::string& out, std::string_view level) {
  if (level == "%") return;  // an empty level
  for (std::size_t i = 0; i < level.size(); ++i) {
    const char c = level[i];
    if (c == '/') {
      out.push_back('.');
      continue;
    }
    if (c == '%' && i + 2 < level.size()) {
      const std::string_view code = level.substr(i + 1, 2);
      if (code == "25" || code == "2A" || code == "3E") {
        out.push_back(code == "25" ? '%' : code == "2A" ? '*' : '>');
        i += 2;
        continue;
      }
    }
    out.push_back(c);  // anything else, a lone `%` included, is kept as it is
  }
}

// Splits on `sep` and maps each level with `fn`, joined by `join`.
template <class Fn>
std::string map_levels(std::string_view text, char sep, char join, Fn fn) {
  std::string out;
  out.reserve(text.size() + 8);
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    fn(out, text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    out.push_back(join);
    start = at + 1;
  }
}

}  // namespace

std::string to_core_name(std::string_view mqtt_topic) {
  return map_levels(mqtt_topic, '/', '.', append_core_level);
}

std::optional<std::string> to_mqtt_name(std::string_view core_name) {
  std::string out = map_levels(core_name, '.', '/', append_mqtt_level);
  if (out.size() > codec::kMaxStringBytes || !codec::is_valid_utf8(out) || !codec::is_valid_topic_name(out)) {
    return std::nullopt;
  }
  return out;
}

CoreFilters to_core_filters(std::string_view mqtt_filter) {
  CoreFilters out;
  out.main = map_levels(mqtt_filter, '/', '.', [](std::string& o, std::string_view level) {
    if (level == "+") {
      o.push_back('*');
    } else if (level == "#") {
      o.push_back('>');
    } else {
      append_core_level(o, level);
    }
  });
  if (mqtt_filter.size() >= 2 && mqtt_filter.ends_with("/#")) {
    out.parent = out.main.substr(0, out.main.size() - 2);
  }
  return out;
}

bool exceeds_levels(std::string_view topic, std::size_t max_levels) {
  if (topic.size() < max_levels) return false;
  return static_cast<std::size_t>(std::count(topic.begin(), topic.end(), '/')) >= max_levels;
}

bool starts_with_wildcard(std::string_view mqtt_filter) {
  return mqtt_filter.starts_with('+') || mqtt_filter.starts_with('#');
}

std::string to_reply_to(std::string_view response_topic) {
  return std::string(kTopicPrefix) + to_core_name(response_topic);
}

std::optional<std::string> to_response_topic(std::string_view reply_to) {
  if (reply_to.starts_with(kTopicPrefix)) return to_mqtt_name(reply_to.substr(kTopicPrefix.size()));
  if (reply_to.empty() || reply_to.size() > codec::kMaxStringBytes || !codec::is_valid_utf8(reply_to) ||
      !codec::is_valid_topic_name(reply_to)) {
    return std::nullopt;
  }
  return std::string(reply_to);
}

std::optional<std::string> reply_queue_of(std::string_view topic) {
  constexpr std::string_view kTempQueuePrefix = "/temp-queue/";
  if (!topic.starts_with(kTempQueuePrefix) || !topic.substr(kTempQueuePrefix.size()).starts_with("carrier-")) {
    return std::nullopt;
  }
  return std::string(topic.substr(kTempQueuePrefix.size()));
}

}  // namespace carrier::mqtt
