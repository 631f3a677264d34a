#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

// A broken invariant: log and abort in every build. Bad input is never an assert.
#define CARRIER_ASSERT(cond, ...)                                                   \
  do {                                                                              \
    if (!(cond)) [[unlikely]] {                                                     \
      std::fprintf(stderr, "assertion failed at %s:%d: %s: %s\n", __FILE__, __LINE__, \
                   #cond, ::fmt::format(__VA_ARGS__).c_str());                      \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)

#ifdef NDEBUG
#define CARRIER_DASSERT(cond, ...) \
  do {                             \
  } while (0)
#else
#define CARRIER_DASSERT(cond, ...) CARRIER_ASSERT(cond, __VA_ARGS__)
#endif
