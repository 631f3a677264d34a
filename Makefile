# The two commands of the README, and the rest of the developer loop.
BUILD ?= build
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc)
# The integration areas mostly wait (restarts, timers, clients' round trips: the MQTT area spends
# under 5% of its time on a CPU), so twice as many run side by side as there are cores.
INTEGRATION_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))
FUZZ_SECONDS ?= 10
# -g1 (line tables): backtraces and perf keep file:line; full debug information would add about
# 15% to every compile of this tree. Configure a Debug tree for gdb sessions that need locals.
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"

.PHONY: run test build bootstrap unit integration sanitize fuzz bench package clean

bootstrap:
	@scripts/bootstrap

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

# The binary, benchmarks and corpus replays (`all`) and the unit tests beside them.
build: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target all unit_tests

run: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)
	$(BUILD)/carrier serve

# Every test: the integration tests and corpus replays through ctest against the optimised
# binary, every unit test under ASan+UBSan (and the threaded ones under TSan), then each fuzz
# target for a bounded time. The unit tests are compiled only in the sanitizer builds here,
# which keeps a clean clone's suite well inside its time budget on two cores.
test: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -LE unit -j $(INTEGRATION_JOBS)
	$(MAKE) sanitize
	$(MAKE) fuzz

unit: build
	cd $(BUILD) && ctest --output-on-failure -L unit -j $(JOBS)

integration: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -L integration

# ASan+UBSan over every unit test (build-asan), TSan over core, net, protocol, auth and store (build-tsan).
sanitize: bootstrap
	JOBS=$(JOBS) scripts/sanitize all

fuzz: bootstrap
	scripts/fuzz $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	scripts/bench $(BUILD)

# The Debian package (docs/install.md): $(BUILD)/package/carrier_VERSION_ARCH.deb.
package: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && cpack --config CPackConfig.cmake -B package

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) build-asan build-tsan
