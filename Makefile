# The two commands of the README, and the rest of the developer loop.
BUILD ?= build
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 10
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: run test build bootstrap unit integration sanitize fuzz bench clean

bootstrap:
	@scripts/bootstrap

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/carrier serve

# Every test: unit and integration through ctest, the unit tests again under sanitizers, then
# each fuzz target for a bounded time.
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) sanitize
	$(MAKE) fuzz

unit: build
	cd $(BUILD) && ctest --output-on-failure -L unit -j $(JOBS)

integration: build
	cd $(BUILD) && ctest --output-on-failure -L integration

# ASan+UBSan over every unit test (build-asan), TSan over core, net, protocol, auth and store (build-tsan).
sanitize: bootstrap
	JOBS=$(JOBS) scripts/sanitize all

fuzz: bootstrap
	scripts/fuzz $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	scripts/bench $(BUILD)

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) build-asan build-tsan
