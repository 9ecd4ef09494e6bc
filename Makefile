# Front door for the common verbs; meson and ninja do the work. Every target that builds
# first runs scripts/install-deps.sh, which is instant when everything is installed.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
PREFIX     ?= /usr/local
PYTEST     ?= python3 -m pytest

.PHONY: all deps build test test-unit test-asan test-tsan test-integration test-integration-qemu test-under-load test-qemu bench-qemu demo bench bench-doc install deb clean fuzz-passthru \
	fuzz-build test-fuzz fuzz crash soak reliability

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) --prefix=$(abspath $(PREFIX))

# PREFIX given (command line or environment) to a build configured with another prefix: the
# build takes it (meson configure), so `make install PREFIX=...` installs there at any time.
PREFIX_GIVEN := $(filter command% environment%,$(origin PREFIX))
define apply_prefix
	@if [ -n "$(PREFIX_GIVEN)" ]; then \
		cur=$$(meson introspect $(BUILD) --buildoptions | python3 -c 'import json, sys; \
			print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))'); \
		if [ "$$cur" != "$(abspath $(PREFIX))" ]; then \
			echo "meson configure $(BUILD) -Dprefix=$(abspath $(PREFIX)) (was $$cur)"; \
			meson configure $(BUILD) -Dprefix=$(abspath $(PREFIX)) >/dev/null || exit 1; \
		fi; \
	fi
endef

build: deps $(BUILD)/build.ninja
	$(apply_prefix)
	ninja -C $(BUILD)

# All tests: unit tests, the same under ASan+UBSan, the threaded ones under TSan, the fuzzers'
# short runs, then the integration tests that drive the tools as a user would side by side with
# the QEMU guest's tests (test-integration-qemu).
test: build test-unit test-asan test-tsan test-fuzz test-integration-qemu

test-unit: build
	meson test -C $(BUILD) --no-suite integration --print-errorlogs

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) -Dbuildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false

test-asan: deps $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C $(ASAN_BUILD) --no-suite integration --print-errorlogs

$(TSAN_BUILD)/build.ninja:
	meson setup $(TSAN_BUILD) -Dbuildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false

test-tsan: deps $(TSAN_BUILD)/build.ninja
	ninja -C $(TSAN_BUILD)
	TSAN_OPTIONS=halt_on_error=1 meson test -C $(TSAN_BUILD) --suite threaded --print-errorlogs

# tests/python in a session of its own: its modules set the library's environment (state
# directory, configuration file) at import, which the tools that tests/integration starts
# would inherit
test-integration: build
	UNVME_BUILD=$(BUILD) $(PYTEST) -q tests/integration
	UNVME_BUILD=$(BUILD) $(PYTEST) -q tests/python

# The unit suite, its ASan/UBSan build (whose driver_qpair_split once passed a 120 s limit under
# load) and the integration suite while `stress-ng --cpu 4` keeps every CPU busy beside them
# (issue 29): no test may depend on a wall-clock budget a loaded machine can miss.
test-under-load: build
	@stress-ng --cpu 4 --quiet & pid=$$!; \
	trap 'kill -INT $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT; \
	$(MAKE) --no-print-directory test-unit test-asan test-integration

# The integration suite and the QEMU guest's tests at the same time: each spends much of its
# wall time waiting (for its tools' deadlines, for the emulated guest), and every test is
# proven under a loaded machine (test-under-load), so together they take the time of the
# longer one instead of their sum (make test stays near its ~20 minutes). The guest's lines are
# printed when both are done; its whole log is $(BUILD)/qemu/test-run.log.
test-integration-qemu: build
	@mkdir -p $(BUILD)/qemu; log=$(BUILD)/qemu/test-run.log; \
	echo "test-qemu: the QEMU guest runs beside the integration tests (log $$log)"; \
	BUILD=$(BUILD) timeout 900 scripts/qemu/run.sh > $$log 2>&1 & qpid=$$!; \
	$(MAKE) --no-print-directory test-integration; irc=$$?; \
	wait $$qpid; qrc=$$?; \
	grep -E "^(UNVME-TEST FAIL|qemu-rig:|    )" $$log; \
	if [ $$qrc -ne 0 ]; then tail -n 40 $$log; echo "test-qemu failed (exit $$qrc; $$log)"; fi; \
	[ $$irc -eq 0 ] && [ $$qrc -eq 0 ]

# The VFIO driver against real NVMe hardware emulation: a QEMU guest (TCG, intel-iommu) with four
# emulated NVMe controllers; artifacts are cached under ~/.cache/unvme/qemu. See docs/vfio.md.
test-qemu: build
	BUILD=$(BUILD) timeout 900 scripts/qemu/run.sh

# In the guest: every way to reach one controller, 4 KiB random reads QD 1..128: our io_uring
# passthrough and block transports against fio io_uring_cmd / io_uring / libaio through the
# kernel, polled and not, and our VFIO transport (docs/performance.md, docs/kernel-backends.md).
bench-qemu: build
	BUILD=$(BUILD) timeout 1800 scripts/qemu/run.sh --bench

# libFuzzer targets (tests/fuzz): the tree built with clang, coverage instrumentation, ASan and
# UBSan. test-fuzz runs each target over its kept corpus and then a few seconds; fuzz runs each
# until FUZZ_RUNS executions or FUZZ_SECONDS (docs/reliability.md has the figures).
FUZZ_RUNS    ?= 10000000
FUZZ_SECONDS ?= 14400
FUZZ_JOBS    ?= 1
$(FUZZ_BUILD)/build.ninja:
	CC=clang-14 meson setup $(FUZZ_BUILD) -Dfuzz=true -Dbuildtype=debugoptimized \
		-Db_sanitize=address,undefined -Db_lundef=false -Dfio=disabled

fuzz-build: deps $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD) fuzzers

test-fuzz: fuzz-build
	python3 scripts/fuzz.py --build $(FUZZ_BUILD) --seconds 8

fuzz: fuzz-build
	python3 scripts/fuzz.py --build $(FUZZ_BUILD) --seconds $(FUZZ_SECONDS) --runs $(FUZZ_RUNS) \
		--jobs $(FUZZ_JOBS) --json $(BUILD)/reliability/fuzz.json

# The crash harness (tests/crash) in its long mode: at least 1000 kill points per component
# (make test-integration runs the short mode). Figures in $(BUILD)/reliability/crash.json.
crash: build
	python3 tests/crash/crash.py --build $(BUILD) --mode long --json $(BUILD)/reliability/crash.json \
		--keep $(BUILD)/reliability/crash-failures

# The soak run (tests/soak) for SOAK_SECONDS: threads on several queue pairs, block and KV,
# with controller resets injected; figures in $(BUILD)/reliability/soak.json.
SOAK_SECONDS ?= 600
soak: build
	@mkdir -p $(BUILD)/reliability
	$(BUILD)/tests/soak/soak --seconds $(SOAK_SECONDS) --json $(BUILD)/reliability/soak.json

# docs/reliability.md: its figures from the newest results of make crash / fuzz / soak (the
# short mode of each that has none yet) and the bad-input matrices, run afresh.
# RELIABILITY_MODE=short reruns everything briefly, =long everything in its long mode.
RELIABILITY_MODE ?= existing
reliability: build
	python3 scripts/reliability.py --build $(BUILD) --fuzz-build $(FUZZ_BUILD) --mode $(RELIABILITY_MODE)

# The long run of the random-SQE passthru fuzz (make test runs 20000 commands): 10 million
# random admin and I/O commands, every tracker handed back (about 7 minutes). UNVME_FUZZ_SEED
# repeats a run.
FUZZ_CMDS ?= 10000000
fuzz-passthru: build
	UNVME_QUIET=1 UNVME_FUZZ_CMDS=$(FUZZ_CMDS) $(BUILD)/tests/unit/driver/test_driver_passthru_fuzz

demo: build
	BUILD=$(BUILD) scripts/demo.sh

# Every figure next to its baseline of the same run (docs/performance.md), 26 minutes on 2 CPUs (25.9 in the run of 2026-11-30; under 30);
# BENCH_QUICK=1 for a short run whose figures are not worth reading.
bench: build
	BUILD=$(BUILD) python3 scripts/bench.py

# The newest make bench results into docs/performance.md (tables between its bench markers)
# and its plots into docs/img.
bench-doc:
	python3 scripts/bench_doc.py

# PREFIX (default /usr/local, or what the build was configured with) and DESTDIR (a staging
# root prepended to every path, for packages) are honoured whenever they are given.
install: build
	meson install -C $(BUILD) --no-rebuild $(if $(DESTDIR),--destdir "$(abspath $(DESTDIR))")

# Debian packages (libunvme0, libunvme-dev, unvme-tools, unvme-fio, unvme-rocksdb,
# python3-unvme) from the build, with dpkg-deb; in $(BUILD)/deb (scripts/deb.py).
deb: build
	python3 scripts/deb.py --build $(BUILD) --out $(BUILD)/deb

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
