#pragma once

// What the config tests share: parsing a TOML text that must pass or fail, and a config file in
// a temporary directory.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace carrier::config::testing {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::string_view kFile = "carrier.toml";

// The detail of the error parse_toml returns for `text`; fails the test if it parsed.
inline std::string toml_error(std::string_view text) {
  auto parsed = parse_toml(text, kFile);
  if (parsed) {
    ADD_FAILURE() << "parsed, expected an error:\n" << text;
    return {};
  }
  EXPECT_EQ(parsed.error().code, Errc::invalid_argument) << parsed.error().to_string();
  return parsed.error().detail;
}

inline Config parse_ok(std::string_view text) {
  auto parsed = parse_toml(text, kFile);
  if (!parsed) {
    ADD_FAILURE() << parsed.error().to_string() << "\nfor:\n" << text;
    return {};
  }
  return *parsed;
}

// A config file in a fresh temporary directory, removed with the object.
class TempFile {
 public:
  explicit TempFile(std::string_view text) {
    dir_ = std::filesystem::temp_directory_path() /
           ("carrier-config-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    std::ofstream(path()) << text;
  }
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::filesystem::path path() const { return dir_ / "carrier.toml"; }
  // Another file beside the config file.
  std::filesystem::path write(std::string_view name, std::string_view text) const {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
};

}  // namespace carrier::config::testing
