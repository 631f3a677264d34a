// Runs a libFuzzer target over saved inputs without libFuzzer, so the g++ build and ctest
// replay the corpus (and past crashes) on every test run. Arguments are files or directories;
// options starting with '-' are ignored so a libFuzzer command line also works.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool replay(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t count = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.starts_with("-")) continue;
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg, ec)) {
        if (!entry.is_regular_file()) continue;
        ok = replay(entry.path()) && ok;
        ++count;
      }
    } else {
      ok = replay(arg) && ok;
      ++count;
    }
    if (ec) {
      std::fprintf(stderr, "cannot list %s: %s\n", arg.c_str(), ec.message().c_str());
      ok = false;
    }
  }
  std::printf("replayed %zu inputs\n", count);
  // An empty run would pass silently if the corpus path were wrong.
  return ok && count > 0 ? 0 : 1;
}
