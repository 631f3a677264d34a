#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.hpp"

namespace carrier::cli {

// What `carrier admin` prints for an admin API answer: aligned columns with a header line, text
// left and numbers right aligned (like `rabbitmqctl list_queues`), and "N of TOTAL" under a page
// that is not the whole list. `view` is queues, subscriptions, connections or browse; `answer`
// the JSON the API sent for it. Pure: golden-file tests feed it fixed JSON
// (src/cli/testdata/admin_*).
Result<std::string> format_admin_table(std::string_view view, const nlohmann::json& answer);

}  // namespace carrier::cli
