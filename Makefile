# Courier: every set-up step a fresh Debian machine needs lives here.
SWIFT ?= swift
APT_PACKAGES := libcurl4-openssl-dev pkg-config python3-httpbin gunicorn python3-jsonschema python3-yaml openssl nginx-light \
  chromium python3-pil python3-prometheus-client
BENCH_PACKAGES := wrk
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps bench-deps build release install test test-deps sanitize fuzz soak demo bench lint clean

PREFIX ?= /usr/local

all: build

# Installs the Debian packages that are missing (libcurl headers, httpbin and gunicorn for the
# test servers). Skipped where there is no dpkg (macOS): install libcurl there yourself.
deps:
	@command -v dpkg-query >/dev/null || exit 0; \
	missing=""; \
	for p in $(APT_PACKAGES) $(EXTRA_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

bench-deps:
	@$(MAKE) --no-print-directory deps EXTRA_PACKAGES="$(BENCH_PACKAGES)"

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Puts a release build of courier in $(PREFIX)/bin (for cron), with the Swift standard library
# and Foundation linked in (--static-swift-stdlib) and stripped: `courier validate` starts in
# 1.26 x the time of `curl --version` against 2.05 x linked dynamically (docs/benchmarks.md),
# at 62 MB instead of 10. Its own build folder, so the benchmark's build is left as it is.
install: deps
	$(SWIFT) build -c release --product courier --static-swift-stdlib --scratch-path .build-static
	install -d $(PREFIX)/bin
	install -m 755 -s .build-static/release/courier $(PREFIX)/bin/courier

# The hostile-size suites (endless bodies, huge header blocks, the runs that meet them): a
# flood keeps both cores busy after the caller has its error (FoundationNetworking drains it
# until its own cancel lands), which starved tests running beside them into their time bounds.
HOSTILE_SUITES := EndlessBodyConformanceTests|HeaderBlockConformanceTests|HostileServerRunTests

# Every test (the hostile-size suites alone, after the rest), then the transport tests again
# under the thread sanitizer (own build folder). The hostile-size suites check bounds, not
# races: slowed by the sanitizer they held the process up for a minute, so they are not in it.
# Each run goes through Tests/Harness/swift-test.sh, which keeps its output in .build/test-logs/
# and ends a failed run with a short account (a crash's reason and frames, the tests failed and
# the tests still running): a CI page shows only a run's last lines.
TEST := SWIFT=$(SWIFT) Tests/Harness/swift-test.sh
# Test servers from PyPI, in a virtual environment under .build (never committed): Datasette,
# a real third-party API server for the sync tests (pinned, so that CI runs what was tested).
PYVENV := .build/pyvenv
PY_TEST_PACKAGES := datasette==0.65.1

test-deps: deps
	@[ -x $(PYVENV)/bin/datasette ] || { \
	  echo "make: installing $(PY_TEST_PACKAGES) into $(PYVENV)"; \
	  python3 -m venv $(PYVENV) && $(PYVENV)/bin/pip install -q $(PY_TEST_PACKAGES); }

test: deps test-deps
	$(TEST) plain --skip "$(HOSTILE_SUITES)"
	$(TEST) hostile --skip-build --filter "$(HOSTILE_SUITES)"
	$(TEST) tsan --sanitize=thread --scratch-path .build-tsan --filter "CourierCurlTests|ConformanceTests" \
	  --skip "$(HOSTILE_SUITES)"

# The library, transport and runner tests under AddressSanitizer with leak checking (own build
# folder; slow: about 5 minutes of tests after the build). Leaks in libcurl, FoundationNetworking
# and Foundation's Process are suppressed (Tests/Sanitizers/lsan.supp says why); any other
# leak fails the run.
sanitize: deps
	COURIER_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Sanitizers/lsan.supp:print_suppressions=0 \
	  $(SWIFT) test --sanitize=address \
	  --scratch-path .build-asan --filter "CourierTests|CourierCurlTests|ConformanceTests|CourierJobsTests"

# Each libFuzzer target (Sources/courier-fuzz) for FUZZ_SECONDS, with AddressSanitizer, in its
# own build folder (lld links it: gold fails on the fuzzer's objects). New inputs collect in
# .build-fuzz/corpus; a finding stops the run and leaves the input in .build-fuzz/. Keep it as
# Tests/Fuzz/TARGET/crash-WHAT once fixed: `make test` replays that folder.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := jobfile template logline headers events
fuzz: deps
	$(SWIFT) build -c release --scratch-path .build-fuzz --product courier-fuzz \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p .build-fuzz/corpus/$$t; \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s (full output: .build-fuzz/$$t.log)"; \
	  touch .build-fuzz/$$t.started; \
	  SWIFT_BACKTRACE=enable=no .build-fuzz/release/courier-fuzz $$t .build-fuzz/corpus/$$t \
	    Tests/Fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=.build-fuzz/$$t- > .build-fuzz/$$t.log 2>&1 \
	    || { tail -n 40 .build-fuzz/$$t.log; \
	         for a in $$(find .build-fuzz -maxdepth 1 -name "$$t-*" -newer .build-fuzz/$$t.started); do \
	           echo "the input, $$a, as base64 (a CI log is enough to reproduce it):"; \
	           base64 -w0 "$$a"; echo; \
	         done; exit 1; }; \
	  tail -n 1 .build-fuzz/$$t.log; \
	done

# Transport throughput against nginx on loopback, with wrk measured in the same run.
bench: bench-deps
	$(SWIFT) build -c release --product courier
	$(SWIFT) build -c release --product courier-rawloop
	$(SWIFT) build -c release --product courier --static-swift-stdlib --scratch-path .build-static
	bash -c 'set -o pipefail; Tests/Benchmarks/run.sh | tee .build/bench-latest.txt'
	python3 Tests/Benchmarks/record.py .build/bench-latest.txt docs/benchmarks.md

# 1,000,000 tasks at 256 in flight on each backend against nginx with ~1 % faulty URLs: every
# task logged once with its outcome, peak RSS under 150 MiB, no descriptor growth. Several
# minutes (URLSession is the slow one); TASKS=N and BACKENDS=curl shorten it.
soak: bench-deps
	$(SWIFT) build -c release --product courier
	@# The figures are recorded whether the checks pass or not; the status is the script's.
	bash -c 'set -o pipefail; Tests/Soak/run.sh | tee .build/soak-latest.txt; status=$$?; \
	  python3 Tests/Benchmarks/record.py .build/soak-latest.txt docs/benchmarks.md soak; \
	  exit $$status'

# Runs jobs/demo.json against the fixture server on 127.0.0.1:18765 and prints the log path.
demo: build
	@Tests/Fixtures/demo.sh

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

clean:
	rm -rf .build
