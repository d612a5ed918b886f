# Courier: every set-up step a fresh Debian machine needs lives here.
SWIFT ?= swift
# Each target installs only what it needs (docs/contributing.md lists them): building needs the headers
# of libcurl and of the brotli and zstd decoders it links (the curl transport decodes br and zstd
# bodies with them), and pkg-config, nothing else; the test servers and tools come with
# `make test`.
BUILD_PACKAGES := libcurl4-openssl-dev libbrotli-dev libzstd-dev zlib1g-dev pkg-config
# `make demo`: the fixture server (Python's standard library; openssl for its TLS port).
DEMO_PACKAGES := python3 openssl
# `make test`: the servers (httpbin under gunicorn, nginx, the fixture server), the brotli and
# zstd tools the fixture server compresses its br and zstd bodies with, the checkers of
# schemas, manifests, report screenshots and metrics files, the Prometheus Pushgateway the
# metrics are pushed to, the shells whose completion scripts are checked, systemd-analyze for
# the units in deploy/, groff for the manual page, dpkg-dev and lintian to build and check the
# Debian package, and python3-venv for the PyPI packages below.
TEST_PACKAGES := $(DEMO_PACKAGES) python3-venv python3-httpbin gunicorn nginx-light \
  python3-jsonschema python3-yaml chromium python3-pil python3-prometheus-client zsh fish \
  systemd groff-base brotli zstd sqlite3 prometheus-pushgateway dpkg-dev lintian
# `make bench` and `make soak`: nginx and wrk on loopback, curl for the side-by-side runs.
BENCH_PACKAGES := $(DEMO_PACKAGES) nginx-light wrk curl
# `make deb`: dpkg-shlibdeps (and strip) for the package's Depends, lintian to check it.
DEB_PACKAGES := dpkg-dev lintian
# `make image`: mmdebstrap makes the root file system from Debian's packages, podman turns it
# into an OCI archive; `make image-check` runs the fixture server (python3).
IMAGE_PACKAGES := $(DEB_PACKAGES) mmdebstrap podman python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps demo-deps bench-deps build release install deb image image-check man docs test test-deps pyvenv test-loaded sanitize fuzz soak demo bench lint clean

PREFIX ?= /usr/local

all: build

# Installs the Debian packages that are missing: the build's (BUILD_PACKAGES) and any the
# calling target adds (EXTRA_PACKAGES). Skipped where there is no dpkg (macOS): install
# libcurl there yourself.
deps:
	@command -v dpkg-query >/dev/null || exit 0; \
	missing=""; \
	for p in $(BUILD_PACKAGES) $(EXTRA_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

demo-deps:
	@$(MAKE) --no-print-directory deps EXTRA_PACKAGES="$(DEMO_PACKAGES)"

bench-deps:
	@$(MAKE) --no-print-directory deps EXTRA_PACKAGES="$(BENCH_PACKAGES)"

# The commit courier is built from, for `courier --version`: one small object that defines it,
# linked in with -Xlinker. Its name has the commit in it, so a new commit relinks and nothing
# recompiles; nothing generated is committed. A plain `swift build` links none ("unknown").
GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
GIT_COMMIT := $(GIT_COMMIT)$(if $(GIT_COMMIT),$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty))
COMMIT_OBJECT := $(if $(GIT_COMMIT),$(CURDIR)/.build/git/commit-$(GIT_COMMIT).o)
COMMIT_FLAGS := $(if $(COMMIT_OBJECT),-Xlinker $(COMMIT_OBJECT))
BUILD_CC := $(shell command -v clang || command -v cc)

$(COMMIT_OBJECT):
	@mkdir -p $(@D)
	printf 'const char *courier_build_commit(void) { return "%s"; }\n' '$(GIT_COMMIT)' \
	  | $(BUILD_CC) -x c -c -fPIC -o $@ -

build: deps $(COMMIT_OBJECT)
	$(SWIFT) build $(COMMIT_FLAGS)

release: deps $(COMMIT_OBJECT)
	$(SWIFT) build -c release $(COMMIT_FLAGS)

# Puts a release build of courier in $(PREFIX)/bin (for cron), with the Swift standard library
# and Foundation linked in (--static-swift-stdlib) and stripped: `courier validate` starts in
# 1.26 x the time of `curl --version` against 2.05 x linked dynamically (docs/benchmarks.md),
# at 62 MB instead of 10. Its own build folder, so the benchmark's build is left as it is.
install: deps $(COMMIT_OBJECT)
	$(SWIFT) build -c release --product courier --static-swift-stdlib --scratch-path .build-static \
	  $(COMMIT_FLAGS)
	install -d $(PREFIX)/bin $(PREFIX)/share/man/man1
	install -m 755 -s .build-static/release/courier $(PREFIX)/bin/courier
	@mkdir -p .build/man
	.build-static/release/courier man > .build/man/courier.1
	install -m 644 .build/man/courier.1 $(PREFIX)/share/man/man1/courier.1

# courier_<version>-1_<arch>.deb in this folder, from the binary `make install` builds (or
# COURIER_BINARY=path, packaged as it is), then lintian on it: packaging/build-deb.sh says what
# the package holds. `apt install ./courier_*.deb` installs it and makes the courier user.
COURIER_BINARY ?=
DEB_BINARY := $(or $(COURIER_BINARY),.build-static/release/courier)
deb: deps $(COMMIT_OBJECT)
	@$(MAKE) --no-print-directory deps EXTRA_PACKAGES="$(DEB_PACKAGES)"
	$(if $(COURIER_BINARY),,$(SWIFT) build -c release --product courier --static-swift-stdlib \
	  --scratch-path .build-static $(COMMIT_FLAGS))
	@rm -f courier_*.deb
	@deb=$$(packaging/build-deb.sh $(DEB_BINARY) .) && echo "make: $$deb" && \
	  lintian --fail-on error,warning "$$deb"

# An OCI image archive in .build/image (Debian bookworm, minbase, with the package above
# installed; no shell, apt or dpkg left; user 65532), made without running a container:
# packaging/build-image.sh. Needs root and Debian's package servers. `make image-check` runs
# courier from the image's root file system against a loopback server and checks its config.
image: deb
	@$(MAKE) --no-print-directory deps EXTRA_PACKAGES="$(IMAGE_PACKAGES)"
	packaging/build-image.sh courier_*_$$(dpkg --print-architecture).deb .build/image

image-check:
	@$(MAKE) --no-print-directory deps EXTRA_PACKAGES="$(IMAGE_PACKAGES)"
	packaging/check-image.py .build/image/courier-*.oci.tar

# The manual page, from the same text as --help (`courier man`), into .build/man (never
# committed): man -l .build/man/courier.1
man: build
	@mkdir -p .build/man
	.build/debug/courier man > .build/man/courier.1

# The hostile-size suites (endless bodies, huge header blocks, the runs that meet them): a
# flood keeps both cores busy after the caller has its error (FoundationNetworking drains it
# until its own cancel lands), which starved tests running beside them into their time bounds.
HOSTILE_SUITES := EndlessBodyConformanceTests|HeaderBlockConformanceTests|HostileServerRunTests|RecordsTests
TSAN_SKIP := $(HOSTILE_SUITES)|longSilenceWithinTheTimeout

# Every test (the hostile-size suites alone, after the rest), then the transport tests again
# under the thread sanitizer (own build folder). The hostile-size suites check bounds, not
# races: slowed by the sanitizer they held the process up for a minute, so they are not in it.
# The sanitizer's build leaves the runner and the CLI out (COURIER_PACKAGE_SCOPE=transport,
# Package.swift says how): it builds in 86 s instead of 204. Nor does it run the test that
# waits over a minute for a silent server (TSAN_SKIP): a timer, not a race, and 50 s of CI's
# ten minutes (the plain run has it).
# Each run goes through Tests/Harness/swift-test.sh, which keeps its output in .build/test-logs/
# and ends a failed run with a short account (a crash's reason and frames, the tests failed and
# the tests still running): a CI page shows only a run's last lines.
TEST := SWIFT=$(SWIFT) Tests/Harness/swift-test.sh
# Test servers from PyPI, in a virtual environment under .build (never committed): Datasette,
# a real third-party API server for the sync tests, with its GraphQL plugin for GraphQL
# cursor pagination; Kinto for incremental syncs; localstripe, a fake Stripe, for writes that
# happen once (pinned, so that CI runs what was tested).
PYVENV := .build/pyvenv
PY_TEST_PACKAGES := datasette==0.65.1 datasette-graphql==2.2 kinto==26.5.0 localstripe==1.15.10

test-deps:
	@$(MAKE) --no-print-directory deps EXTRA_PACKAGES="$(TEST_PACKAGES)"
	@$(MAKE) --no-print-directory pyvenv

pyvenv:
	@$(PYVENV)/bin/python -c "import datasette_graphql, kinto, localstripe" >/dev/null 2>&1 || { \
	  echo "make: installing $(PY_TEST_PACKAGES) into $(PYVENV)"; \
	  { [ -x $(PYVENV)/bin/pip ] || python3 -m venv $(PYVENV); } && \
	  $(PYVENV)/bin/pip install -q $(PY_TEST_PACKAGES); }

# The PyPI servers install while the tests build (half a minute of CI's ten on a clean clone,
# spent on downloads the build's two cores need not wait for); what pip said comes after the
# build's output.
test:
	@$(MAKE) --no-print-directory deps EXTRA_PACKAGES="$(TEST_PACKAGES)"
	@mkdir -p .build; \
	{ $(MAKE) --no-print-directory pyvenv > .build/pyvenv.log 2>&1; echo $$? > .build/pyvenv.status; } & \
	$(SWIFT) build --build-tests; built=$$?; wait; cat .build/pyvenv.log; \
	[ "$$built" = 0 ] && [ "$$(cat .build/pyvenv.status)" = 0 ]
	$(TEST) plain --skip "$(HOSTILE_SUITES)"
	$(TEST) hostile --skip-build --filter "$(HOSTILE_SUITES)"
	COURIER_PACKAGE_SCOPE=transport $(TEST) tsan --sanitize=thread --scratch-path .build-tsan --filter "CourierCurlTests|ConformanceTests" \
	  --skip "$(TSAN_SKIP)"

# `make test` on a busy machine: stress-ng keeps every core busy (LOAD_WORKERS, one a core)
# while the suite runs at nice TEST_NICE (2). The builds come first, without the load.
# Tests/Harness/loaded.sh says more; docs/contributing.md says how to write tests that hold.
test-loaded: test-deps
	@$(MAKE) --no-print-directory deps EXTRA_PACKAGES="stress-ng"
	SWIFT=$(SWIFT) MAKE=$(MAKE) Tests/Harness/loaded.sh

# The library, transport and runner tests under AddressSanitizer with leak checking (own build
# folder; slow: about 5 minutes of tests after the build). Leaks in libcurl, FoundationNetworking
# and Foundation's Process are suppressed (Tests/Sanitizers/lsan.supp says why); any other
# leak fails the run.
sanitize: test-deps
	COURIER_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/Sanitizers/lsan.supp:print_suppressions=0 \
	  $(SWIFT) test --sanitize=address \
	  --scratch-path .build-asan --filter "CourierTests|CourierCurlTests|ConformanceTests|CourierJobsTests"

# Each libFuzzer target (Sources/courier-fuzz) for FUZZ_SECONDS, with AddressSanitizer, in its
# own build folder (lld links it: gold fails on the fuzzer's objects). New inputs collect in
# .build-fuzz/corpus; a finding stops the run and leaves the input in .build-fuzz/. Keep it as
# Tests/Fuzz/TARGET/crash-WHAT once fixed: `make test` replays that folder.
# FUZZ_OPTIMIZE=-Onone builds in 44 s instead of 2 min 50 (whole-module optimisation of the
# runner is most of CI's fuzz step) and runs about half as many inputs a second: CI's short
# fuzz uses it; a long search keeps the optimised build.
FUZZ_SECONDS ?= 60
FUZZ_OPTIMIZE ?=
FUZZ_TARGETS := jobfile template logline headers events
fuzz: deps
	$(SWIFT) build -c release --scratch-path .build-fuzz --product courier-fuzz \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld \
	  $(if $(FUZZ_OPTIMIZE),-Xswiftc $(FUZZ_OPTIMIZE))
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
demo: build demo-deps
	@Tests/Fixtures/demo.sh

# The DocC documentation of the Courier and CourierCurl modules, built with the toolchain's
# docc (no plugin dependency): symbol graphs from a build, then one archive per module under
# .build/docs. Open them with `docc preview` or host them as static files.
docs: deps
	$(SWIFT) build --target CourierCurl -Xswiftc -emit-symbol-graph \
	  -Xswiftc -emit-symbol-graph-dir -Xswiftc .build/symbol-graphs
	@for module in Courier CourierCurl; do \
	  mkdir -p .build/docs; \
	  docc convert Sources/$$module/$$module.docc --fallback-display-name $$module \
	    --fallback-bundle-identifier org.courier.$$module \
	    --additional-symbol-graph-dir .build/symbol-graphs \
	    --output-path .build/docs/$$module.doccarchive || exit 1; \
	done
	@echo "make: documentation in .build/docs"

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

clean:
	rm -rf .build
