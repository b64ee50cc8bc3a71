# jobrunner — `make run` runs the sample jobs, `make test` the test suite, `make bench` the benchmarks,
# `make torture` the attacks from outside (kill -9, lock deletion, a full disk, damaged databases),
# `make install` / `make uninstall` put jobrunner on this machine and take it off again.
SWIFT ?= swift
APT_PACKAGES := liblmdb-dev zlib1g-dev pkg-config

.PHONY: postgres-tools setup build release run test test-python systemd-tools torture asan tsan bench fixtures fuzz \
	format lint clean manual install uninstall test-api test-browser api-tools browser-tools

# Installs the C libraries LMDB and zlib (and pkg-config, which finds them) when missing.
setup:
	@if ! dpkg -s liblmdb-dev zlib1g-dev >/dev/null 2>&1 || ! command -v pkg-config >/dev/null 2>&1; then \
		echo "installing $(APT_PACKAGES) with apt-get"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $(APT_PACKAGES); \
	fi

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build -c release

# The state directory goes under .build/, like everything else a build or a run writes, so
# `make run` leaves the repository's tree as it was (the default, ./.jobrunner, would be in it).
run: build
	.build/debug/jobrunner run --state .build/jobrunner-state jobs/

# Builds every product first: the tests run the jobrunner binary and load the example plugins
# (libnoop.so, libhello.so, ...) built beside it. Their own plugins (Tests/Plugins: libtestkit.so,
# the malformed ones) are no products: the build tool plugin Tests/TestPluginLibraries builds them
# with the test target, under .build/plugins/. SchemaTests validates the job files against
# docs/jobrunner.schema.json with the Python packages jsonschema and PyYAML; InstallTests runs
# systemd-analyze on the example's systemd unit. The test that builds examples/greet-plugin as a
# package of its own runs after the suite, alone (it takes both cores for minutes).
test: setup test-python systemd-tools postgres-tools
	$(SWIFT) build
	$(SWIFT) test
	JOBRUNNER_PLUGIN_PACKAGE_TEST=1 $(SWIFT) test --skip-build --filter PluginPackageTests
	python3 bench/torture.py --jobrunner .build/debug/jobrunner --short
	$(MAKE) test-api test-browser

# The dashboard's API checked against its OpenAPI document by schemathesis (installed with pip
# for this test only, when missing).
api-tools:
	@command -v schemathesis >/dev/null 2>&1 || python3 -m pip install -q schemathesis

test-api: api-tools
	$(SWIFT) build
	Tests/api/check_openapi.sh .build/debug/jobrunner

# The dashboard in a real browser (Tests/browser/run.py: headless chromium through selenium),
# screenshots under .build/screenshots. chromium, chromium-driver and python3-selenium are
# installed with apt-get when missing; the script runs with Debian's python3, where apt puts
# selenium (a python3 earlier in PATH, such as pyenv's, does not see it).
BROWSER_PYTHON ?= /usr/bin/python3
browser-tools:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 \
		|| ! $(BROWSER_PYTHON) -c "import selenium" 2>/dev/null; then \
		echo "installing chromium chromium-driver python3-selenium with apt-get"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium chromium-driver python3-selenium; \
	fi

test-browser: browser-tools
	$(SWIFT) build
	@if [ -f Tests/browser/run.py ]; then \
		$(BROWSER_PYTHON) Tests/browser/run.py --jobrunner .build/debug/jobrunner --out .build/screenshots; \
	else \
		echo "Tests/browser/run.py is not there yet: no browser test to run"; \
	fi

# kill -9 at 1,000 jobs (100 kills), kill -9 at scale (a 100,000-job plugin run killed 5 times
# at random moments, then finished: nothing lost, nothing done twice), lock deletion, a full
# disk (a 2 MiB tmpfs; skipped with a message where mounting is not allowed), 200 seeds of
# damaged databases and 200 of one byte changed inside a stored record (status, runs and run must
# judge each file alike; a refused file is never written), logs on a disk a job fills (3 MiB tmpfs), --events /dev/full, a 70 KB control
# file and the tests' hostile plugin (checks that crash, hang or exit; floods; huge outputs and
# messages), against the built binary. Everything it writes goes to temporary directories.
# The run at scale and the hostile plugin are the tests' (testkit, hostile): built with the
# tests, found by their directory.
torture: setup
	$(SWIFT) build --build-tests
	$(SWIFT) build -c release
	JOBRUNNER_PLUGIN_PATH="$$(echo $(CURDIR)/.build/plugins/outputs/*/JobRunnerCLITests/*/TestPluginLibraries/lib)" \
		python3 bench/torture.py --jobrunner .build/debug/jobrunner --jobs 1000 --kills 100 --seeds 200 \
		--scale-kills 5 --release-jobrunner .build/release/jobrunner

# PostgreSQL 15's server programs (initdb, pg_ctl, postgres, psql) for the PostgreSQL store's tests,
# installed when missing. The tests start a throwaway cluster of their own (initdb into a temporary
# directory, a unix socket there, no TCP): no server is assumed, and none that runs is touched.
postgres-tools:
	@if [ ! -x /usr/lib/postgresql/15/bin/initdb ]; then \
		echo "installing postgresql-15 with apt-get"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql-15; \
	fi

test-python:
	@python3 -c "import jsonschema, yaml" 2>/dev/null || python3 -m pip install -q jsonschema pyyaml

# systemd-analyze, for the test that verifies examples/periodic-refresh's unit; installed (the
# systemd package) only when missing. Where it cannot run, that test says so and is skipped.
systemd-tools:
	@if ! command -v systemd-analyze >/dev/null 2>&1; then \
		echo "installing systemd (for systemd-analyze) with apt-get"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq systemd; \
	fi

# The test suite under AddressSanitizer and under ThreadSanitizer, each in a build directory of
# its own (.build/asan, .build/tsan) so the normal build stays as it is. The end-to-end tests run
# the instrumented jobrunner binary and plugins of that directory (JOBRUNNER_BINARY), so the
# runner and its child processes are checked too. One test at a time: slowed down several times,
# the end-to-end tests, which block a thread while a child runs, would starve the in-process
# tests beside them of threads on 2 cores. Options and suppressions: sanitizers/README.md.
SANITIZER_TESTS ?=
asan: setup
	$(SWIFT) build --build-tests --sanitize=address --build-path .build/asan
	ASAN_OPTIONS="$$(cat sanitizers/asan.options)" LSAN_OPTIONS="suppressions=$(CURDIR)/sanitizers/lsan.supp" \
		JOBRUNNER_BINARY=$(CURDIR)/.build/asan/debug/jobrunner \
		$(SWIFT) test --skip-build --no-parallel --sanitize=address --build-path .build/asan $(if $(SANITIZER_TESTS),--filter '$(SANITIZER_TESTS)')

# --export-dynamic: the instrumented plugins that jobrunner loads with dlopen call into the
# ThreadSanitizer runtime linked into the executable, which exports too little of it otherwise
# (`undefined symbol: __tsan_ignore_thread_begin`).
tsan: setup
	$(SWIFT) build --build-tests --sanitize=thread --build-path .build/tsan -Xlinker --export-dynamic
	TSAN_OPTIONS="$$(cat sanitizers/tsan.options) suppressions=$(CURDIR)/sanitizers/tsan.supp" \
		JOBRUNNER_BINARY=$(CURDIR)/.build/tsan/debug/jobrunner \
		$(SWIFT) test --skip-build --no-parallel --sanitize=thread --build-path .build/tsan $(if $(SANITIZER_TESTS),--filter '$(SANITIZER_TESTS)')

bench: release
	@if ! command -v ninja >/dev/null 2>&1; then \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq ninja-build; \
	fi
	@python3 -c "import huey" 2>/dev/null || python3 -m pip install -q huey
	python3 bench/bench.py --jobrunner .build/release/jobrunner

# Remakes Tests/JobRunnerCoreTests/Fixtures/cron-reference.json, the cron dates the tests compare
# with, from the Python library croniter (installed when missing, at the version the script pins).
# The tests read the committed JSON and need no Python.
CRONITER_VERSION := 7.0.0
fixtures:
	@python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('croniter') != '$(CRONITER_VERSION)')" 2>/dev/null \
		|| python3 -m pip install -q "croniter==$(CRONITER_VERSION)"
	python3 Tests/JobRunnerCoreTests/Fixtures/make_cron_fixture.py

# Fuzzes job-file loading with libFuzzer for FUZZ_SECONDS, seeded with every job file of the
# repository (jobs/, examples/, the test fixtures). Everything it writes stays under .build/fuzz:
# its own build (instrumented for coverage and AddressSanitizer), the seeds, the corpus it grows,
# and any input that crashed or hung it (artifacts/, printed at the end).
FUZZ_SECONDS ?= 60
FUZZ_DIR := .build/fuzz
FUZZ_BUILD_FLAGS := -c release --scratch-path $(FUZZ_DIR)/build --product jobrunner-fuzz \
	-Xswiftc -sanitize=fuzzer,address -Xswiftc -DJOBRUNNER_FUZZING \
	-Xswiftc -use-ld=lld -Xcc -fsanitize=fuzzer-no-link,address
fuzz:
	$(SWIFT) build $(FUZZ_BUILD_FLAGS)
	@mkdir -p $(FUZZ_DIR)/seeds $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	@find jobs examples Tests -type f \( -name '*.yaml' -o -name '*.yml' \) | while read -r file; do \
		cp "$$file" "$(FUZZ_DIR)/seeds/$$(echo "$$file" | tr / _)"; done
	$$($(SWIFT) build $(FUZZ_BUILD_FLAGS) --show-bin-path)/jobrunner-fuzz $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds \
		-dict=Fuzz/job-file.dict -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix=$(FUZZ_DIR)/artifacts/ -print_final_stats=1
	@ls $(FUZZ_DIR)/artifacts | sed 's|^|crash or hang kept: $(FUZZ_DIR)/artifacts/|'

format:
	$(SWIFT) format --in-place --recursive Sources Tests plugins PluginAPI PluginLogging examples Package.swift

lint:
	$(SWIFT) format lint --recursive Sources Tests plugins PluginAPI PluginLogging examples Package.swift

# `make install [PREFIX=/usr/local] [DESTDIR=]` builds for release and installs:
#   PREFIX/lib/jobrunner/jobrunner         the binary, with the example plugins beside it
#   PREFIX/lib/jobrunner/lib{noop,files,hello}.so   (its plugin search looks in the binary's
#                                          directory, symbolic links resolved)
#   PREFIX/bin/jobrunner                   a symbolic link to ../lib/jobrunner/jobrunner
#   PREFIX/share/man/man1/jobrunner.1      the manual, every command in one page
#   PREFIX/share/bash-completion/completions/jobrunner, PREFIX/share/zsh/site-functions/_jobrunner,
#   PREFIX/share/fish/vendor_completions.d/jobrunner.fish
# `make uninstall` with the same PREFIX and DESTDIR removes exactly these files, and the
# directory PREFIX/lib/jobrunner once it is empty. The plugins of jobrunner's own tests are no
# products of the package: a release build has none, and nothing installs them. The binary uses
# the Swift runtime of the toolchain that built it.
PREFIX ?= /usr/local
DESTDIR ?=
# What `install` copies: the release build, and the manual `manual` makes (another BUILT lets a
# test install a debug build, with `make -o release -o manual install`).
BUILT ?= .build/release
MANUAL ?= .build/manual/jobrunner.1
EXAMPLE_PLUGINS := noop files hello
INSTALL_LIB := $(DESTDIR)$(PREFIX)/lib/jobrunner
INSTALL_BIN := $(DESTDIR)$(PREFIX)/bin
INSTALL_MAN := $(DESTDIR)$(PREFIX)/share/man/man1
INSTALL_BASH := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
INSTALL_ZSH := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
INSTALL_FISH := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
INSTALLED := $(INSTALL_LIB)/jobrunner $(EXAMPLE_PLUGINS:%=$(INSTALL_LIB)/lib%.so) $(INSTALL_BIN)/jobrunner \
	$(INSTALL_MAN)/jobrunner.1 $(INSTALL_BASH)/jobrunner $(INSTALL_ZSH)/_jobrunner $(INSTALL_FISH)/jobrunner.fish

# The manual page, by swift-argument-parser's generate-manual plugin (it builds the package for
# release first, offline, and writes under .build/plugins/), copied to .build/manual/.
manual: setup
	$(SWIFT) package plugin generate-manual
	@mkdir -p .build/manual
	cp .build/plugins/GenerateManual/outputs/jobrunner/jobrunner.1 $(MANUAL)

install: release manual
	install -d $(INSTALL_LIB) $(INSTALL_BIN) $(INSTALL_MAN) $(INSTALL_BASH) $(INSTALL_ZSH) $(INSTALL_FISH)
	install -m 755 $(BUILT)/jobrunner $(INSTALL_LIB)/jobrunner
	for plugin in $(EXAMPLE_PLUGINS); do install -m 644 $(BUILT)/lib$$plugin.so $(INSTALL_LIB)/; done
	ln -sfn ../lib/jobrunner/jobrunner $(INSTALL_BIN)/jobrunner
	install -m 644 $(MANUAL) $(INSTALL_MAN)/jobrunner.1
	$(BUILT)/jobrunner --generate-completion-script bash > $(INSTALL_BASH)/jobrunner
	$(BUILT)/jobrunner --generate-completion-script zsh > $(INSTALL_ZSH)/_jobrunner
	$(BUILT)/jobrunner --generate-completion-script fish > $(INSTALL_FISH)/jobrunner.fish
	@echo "installed:"; for file in $(INSTALLED); do echo "  $$file"; done

uninstall:
	rm -f $(INSTALLED)
	@if [ -d $(INSTALL_LIB) ]; then rmdir $(INSTALL_LIB) || echo "kept $(INSTALL_LIB): it holds files jobrunner did not install"; fi

clean:
	rm -rf .build .jobrunner
