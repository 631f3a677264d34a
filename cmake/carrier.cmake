# Helpers that give every Carrier library, test, fuzzer and benchmark the same settings.

# Aggregates with in-class defaults are meant to be brace-initialised partially.
set(CARRIER_WARNINGS -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # g++ 12 misreads Boost.Asio 1.18's sized operator delete of coroutine frames as a mismatch
  # (a false positive that depends on the optimisation level).
  list(APPEND CARRIER_WARNINGS -Wno-mismatched-new-delete)
endif()

# carrier_library(NAME SOURCES ... DEPS ...)
function(carrier_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${CARRIER_WARNINGS})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# The unit tests are not part of `all`: `make test` runs them in the sanitizer build only (so the
# clean-clone suite compiles them once, not twice); `make build` and `cmake --build B --target
# all unit_tests` build them beside the binary.
if(CARRIER_TESTS AND NOT CARRIER_FUZZ AND NOT TARGET unit_tests)
  add_custom_target(unit_tests)
endif()

# carrier_test(NAME SOURCES ... DEPS ...): one GoogleTest binary per module.
function(carrier_test name)
  if(NOT CARRIER_TESTS OR CARRIER_FUZZ)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} EXCLUDE_FROM_ALL ${ARG_SOURCES})
  add_dependencies(unit_tests ${name})
  target_compile_options(${name} PRIVATE ${CARRIER_WARNINGS})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # g++ 12 misreads the string temporaries tests build inline (GCC bug 105329: -Wrestrict at
    # -O3; and -Wmaybe-uninitialized in aggregates of std::optional<std::string>, at -O2 too,
    # e.g. bench_test's RawOptions). Tests and benchmarks only: the libraries and the binary
    # keep every warning.
    target_compile_options(${name} PRIVATE -Wno-restrict -Wno-maybe-uninitialized)
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 LABELS unit)
endfunction()

# carrier_bench(NAME SOURCES ... DEPS ...): Google Benchmark binaries, never run by ctest.
function(carrier_bench name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  find_package(benchmark REQUIRED)
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${CARRIER_WARNINGS})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE STREQUAL "Release")
    target_compile_options(${name} PRIVATE -Wno-restrict -Wno-maybe-uninitialized)  # as for tests
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark benchmark::benchmark_main)
endfunction()
