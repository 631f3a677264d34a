#pragma once

#include <cstdio>
#include <cstdlib>

// An invariant a fuzz target checks on every input: a failure aborts, which libFuzzer reports
// as a crash with the input that caused it. (assert() is compiled out in release fuzz builds.)
#define FUZZ_CHECK(cond)                                                             \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)
