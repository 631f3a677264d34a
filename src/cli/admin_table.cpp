#include "cli/admin_table.hpp"

#include <algorithm>
#include <ctime>
#include <vector>

#include <fmt/format.h>

namespace carrier::cli {

namespace {

using nlohmann::json;

struct Column {
  std::string_view title;
  std::string_view field;
  bool number;
};

constexpr std::size_t kBodyPreviewChars = 40;

// "2026-12-01T06:00:00Z" from epoch milliseconds.
std::string utc(std::int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// "850ms", "42s", "17m", "5h", "3d": an age as `ls -l` readers take it in at a glance.
std::string age(std::int64_t ms) {
  if (ms < 1000) return fmt::format("{}ms", ms);
  const std::int64_t s = ms / 1000;
  if (s < 120) return fmt::format("{}s", s);
  if (s < 120 * 60) return fmt::format("{}m", s / 60);
  if (s < 48 * 3600) return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

// One cell as text: control characters (a body preview's newlines) shown as spaces, cut to width.
std::string cell(const json& row, const Column& c) {
  const auto it = row.find(std::string(c.field));
  if (it == row.end() || it->is_null()) return c.field == "oldest_age_ms" ? "-" : "";
  if (c.field == "since_ms") return utc(it->get<std::int64_t>());
  if (c.field == "oldest_age_ms") return age(it->get<std::int64_t>());
  if (c.field.ends_with("_per_second")) return fmt::format("{:.1f}", it->get<double>());
  if (it->is_string() && it->get_ref<const std::string&>().empty() && (c.field == "client_id" || c.field == "user")) {
    return "-";
  }
  std::string text = it->is_string() ? it->get<std::string>() : it->dump();
  if (c.field == "body_preview") {
    std::replace_if(text.begin(), text.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20; }, ' ');
    if (text.size() > kBodyPreviewChars) text = text.substr(0, kBodyPreviewChars - 3) + "...";
  }
  return text;
}

std::string table(const json& rows, const std::vector<Column>& columns) {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::size_t> width;
  for (const auto& c : columns) width.push_back(c.title.size());
  for (const auto& row : rows) {
    auto& line = cells.emplace_back();
    for (std::size_t i = 0; i < columns.size(); ++i) {
      line.push_back(cell(row, columns[i]));
      width[i] = std::max(width[i], line.back().size());
    }
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& line) {
    std::string text;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (i != 0) text += "  ";
      const bool right = columns[i].number;
      text += right ? fmt::format("{:>{}}", line[i], width[i]) : fmt::format("{:<{}}", line[i], width[i]);
    }
    text.erase(text.find_last_not_of(' ') + 1);  // no trailing blanks
    out += text + "\n";
  };
  std::vector<std::string> titles;
  for (const auto& c : columns) titles.emplace_back(c.title);
  emit(titles);
  for (const auto& line : cells) emit(line);
  return out;
}

}  // namespace

Result<std::string> format_admin_table(std::string_view view, const json& answer) {
  static const std::vector<Column> kQueues = {{"NAME", "name", false},         {"DEPTH", "depth", true},
                                              {"BYTES", "bytes", true},        {"UNACKED", "unacked", true},
                                              {"CONSUMERS", "consumers", true}, {"ENQUEUED", "enqueued", true},
                                              {"OLDEST", "oldest_age_ms", true}};
  static const std::vector<Column> kTopics = {{"NAME", "name", false},       {"SUBSCRIPTIONS", "subscriptions", true},
                                              {"CONSUMERS", "consumers", true}, {"DEPTH", "depth", true},
                                              {"UNACKED", "unacked", true},  {"ENQUEUED", "enqueued", true}};
  static const std::vector<Column> kSubscriptions = {{"NAME", "name", false},       {"DEPTH", "depth", true},
                                                     {"UNACKED", "unacked", true},  {"CONSUMERS", "consumers", true},
                                                     {"DURABLE", "durable", false}};
  static const std::vector<Column> kConnections = {
      {"ID", "id", true},           {"PROTOCOL", "protocol", false},   {"PEER", "peer", false},
      {"CLIENT", "client_id", false}, {"USER", "user", false},          {"SHARD", "shard", true},
      {"SINCE", "since_ms", false}, {"IN/S", "in_per_second", true},    {"OUT/S", "out_per_second", true},
      {"QUEUED", "queued_bytes", true}};
  static const std::vector<Column> kBrowse = {{"ID", "id", false},           {"PRIORITY", "priority", true},
                                              {"REDELIVERED", "redelivered", false}, {"BYTES", "body_bytes", true},
                                              {"BODY", "body_preview", false}};
  const std::vector<Column>* columns = nullptr;
  std::string_view noun;
  if (view == "queues") {
    columns = &kQueues;
    noun = "queues";
  } else if (view == "subscriptions") {
    columns = &kSubscriptions;
    noun = "subscriptions";
  } else if (view == "topics") {
    columns = &kTopics;
    noun = "topics";
  } else if (view == "connections") {
    columns = &kConnections;
    noun = "connections";
  } else if (view == "browse") {
    columns = &kBrowse;
    noun = "messages";
  } else {
    return unexpected(Errc::invalid_argument, fmt::format("no table for '{}'", view));
  }
  // Lists come as {"total", "items"}, a browse as a bare array.
  const json* rows = &answer;
  if (answer.is_object()) {
    const auto it = answer.find("items");
    if (it == answer.end() || !it->is_array()) return unexpected(Errc::invalid_argument, "the answer has no items");
    rows = &*it;
  }
  if (!rows->is_array()) return unexpected(Errc::invalid_argument, "the answer is not a list");
  std::string out = table(*rows, *columns);
  if (answer.is_object() && answer.contains("total")) {
    const auto total = answer["total"].get<std::size_t>();
    if (total != rows->size()) out += fmt::format("({} of {} {})\n", rows->size(), total, noun);
  }
  return out;
}

}  // namespace carrier::cli
