# Helpers that give every Carrier library, test, fuzzer and benchmark the same settings.

# Aggregates with in-class defaults are meant to be brace-initialised partially.
set(CARRIER_WARNINGS -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # g++ 12 misreads Boost.Asio 1.18's sized operator delete of coroutine frames as a mismatch
  # (a false positive that depends on the optimisation level).
  list(APPEND CARRIER_WARNINGS -Wno-mismatched-new-delete)
endif()

# Unity builds: a module's sources compile in batches, so the Boost.Asio, Beast, JSON and CLI11
# code most of them include is parsed and instantiated once per batch instead of once per file
# (a batch of six HTTP handlers: about a third of their separate compiles). File-local names must
# therefore be unique within a module. Off: every file on its own, as an editor's tooling sees it.
option(CARRIER_UNITY_BUILD "Compile each module's sources in batches" ON)
set(CARRIER_UNITY_BATCH 8 CACHE STRING "Source files per unity batch")

function(carrier_unity target)
  if(CARRIER_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${CARRIER_UNITY_BATCH})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # In a batch every source is an included file, so g++'s check meant for headers (a class
      # with a member of a file-local type) fires on the sources' own file-local types.
      target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
    endif()
  endif()
endfunction()

# carrier_library(NAME SOURCES ... DEPS ...)
function(carrier_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  carrier_unity(${name})
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
  carrier_unity(${name})
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
