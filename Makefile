# pushtrace — make demo, make test. Everything a fresh machine needs is installed from here.
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Debian packages the build and the tests need: SQLite and zlib headers, libcurl's (Foundation's URLSession, linked
# in by the release build), the sqlite3 shell (benchmarks, crash test), curl (scripts talking to the server).
DEBS := libsqlite3-dev zlib1g-dev libcurl4-openssl-dev sqlite3 curl
# Prometheus, promtool and Alertmanager, for the dashboards' checks (make check-dashboards).
DASHBOARD_DEBS := prometheus prometheus-alertmanager
# Debian's PostgreSQL server and PgBouncer, which scripts/with-postgres.sh runs as a private throwaway cluster and pooler.
POSTGRES_DEBS := postgresql pgbouncer
# nginx (TLS in front of the server), openssl (its certificate), systemd-analyze, and the curl and sqlite3 the
# walk-through of docs/deploy.md installs, for make deploy-test.
DEPLOY_DEBS := nginx openssl systemd curl sqlite3
# Debian's chromium and its chromedriver (headless, driven by selenium from PyPI), for make ui-test.
UI_DEBS := chromium chromium-driver
# dpkg-dev (dpkg-shlibdeps), lintian and debootstrap, for make dist and make dist-test.
DIST_DEBS := dpkg-dev lintian debootstrap
# The release build links Swift's standard library and Foundation in: the binary runs on a host with no Swift.
RELEASE_BUILD = $(SWIFT) build -c release --static-swift-stdlib

.PHONY: all deps dashboard-deps postgres-deps deploy-deps ui-deps ui-test dist-deps dist dist-test deploy-test api-test format format-check check-postgres bench-deps build release test check-dashboards demo bench bench-ingest bench-release bench-http bench-reports bench-agent fuzz load-test crash-test crash-test-postgres attack-test check-apple-build clean

all: build

deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

dashboard-deps:
	@$(MAKE) -s deps DEBS="$(DASHBOARD_DEBS)"

postgres-deps:
	@$(MAKE) -s deps DEBS="$(POSTGRES_DEBS)"

deploy-deps:
	@$(MAKE) -s deps DEBS="$(DEPLOY_DEBS)"

dist-deps:
	@$(MAKE) -s deps DEBS="$(DIST_DEBS)"

ui-deps:
	@$(MAKE) -s deps DEBS="$(UI_DEBS) $(DEPLOY_DEBS)"

# A private PostgreSQL cluster in a temporary folder on a free loopback port, started, asked for its version, stopped
# and deleted: the server the PostgreSQL engine's tests will run beside (scripts/with-postgres.sh).
check-postgres: postgres-deps
	scripts/with-postgres.sh sh -c 'psql "$$PUSHTRACE_TEST_POSTGRES" -Atc "SELECT version()"'

build: deps
	$(SWIFT) build

release: deps
	$(RELEASE_BUILD) --product pushtrace
	$(RELEASE_BUILD) --product pushtrace-load

# dist/pushtrace_VERSION-1_amd64.deb and a .tar.gz of its files: the binary, a man page per command (made by
# swift-argument-parser's generate-manual), the unit, the env file as a conffile, the examples; lintian must report
# no error (scripts/dist.sh).
dist: release dist-deps
	$(RELEASE_BUILD) --product generate-manual
	scripts/dist.sh

# The .deb on a minimal Debian 12 (debootstrapped once into /var/cache/pushtrace-dist-test) with no Swift: install,
# the unit's ExecStart run as systemd would, a token, an upload and a why; an upgrade keeping the store and the
# edited config; remove, then purge (scripts/dist-test.sh).
dist-test: dist
	$(SUDO) scripts/dist-test.sh

# The Swift tests, then the agent's Apple-only code and docs/agent.md's samples type-checked against the SDK stand-in.
# The whole suite beside a throwaway PostgreSQL cluster: the store-interface tests run on both engines (a test
# fails if the cluster is missing), and the server's on PostgreSQL too. That cluster skips fsync: the tests stop
# PostgreSQL's processes, never the machine, so the kernel keeps every committed write, and the checkpoint each
# DROP DATABASE forces does not wait on the disk.
test: deps postgres-deps
	POSTGRES_OPTIONS="-c fsync=off" scripts/with-postgres.sh env PUSHTRACE_REQUIRE_POSTGRES=1 $(SWIFT) test
	SWIFT=$(SWIFT) scripts/check-apple-build.sh

# The agent's Apple-only code and docs/agent.md's samples, type-checked on Linux (Tests/AppleSDKStandIn).
check-apple-build: deps
	SWIFT=$(SWIFT) scripts/check-apple-build.sh

# promtool check/test of dashboards/pushtrace-rules.yml, then a real Prometheus scraping a live server: every panel
# query of dashboards/pushtrace-dashboard.json must return data; then the alert through a real Alertmanager to a
# webhook receiver, and resolved (scripts/check-alerting.py).
check-dashboards: build dashboard-deps
	scripts/check-dashboards.sh

# deploy/pushtrace.service checked by systemd-analyze; deploy/nginx.conf run by nginx with TLS in front of a live
# server: uploads (curl, urllib, Expect: 100-continue), 413 as JSON, a why read back, the client's address logged.
# Then docs/deploy.md's walk-through from a fresh Debian host, every command of it run as written, as root, in a
# private namespace (scripts/walkthrough-test.sh).
deploy-test: build release deploy-deps
	scripts/deploy-test.sh
	$(SUDO) scripts/walkthrough-test.sh

# The toolchain's swift-format, with .swift-format: `make format` formats the tree, `make format-check` (CI) fails
# on any line it would change, and on the lint rules .swift-format turns on.
SWIFT_FORMAT ?= swift-format
format:
	$(SWIFT_FORMAT) format --in-place --recursive --parallel Package.swift Sources Tests

format-check:
	$(SWIFT_FORMAT) lint --strict --recursive --parallel Package.swift Sources Tests

# schemathesis (PyPI, pinned, in a virtualenv under .build) against a live server and openapi.json, every check;
# API_EXAMPLES examples per operation and phase (default 200; CI runs fewer).
api-test: build
	scripts/api-test.sh

# The console in headless chromium (selenium and axe-selenium-python from PyPI, pinned, in a virtualenv under
# .build) over the demo's apps: sign-in, every demo example's why page against the CLI, the report against its JSON,
# live follow, tenancy, headers, origins, console errors, axe-core; then again through deploy/nginx.conf's TLS site.
# Retakes docs/screenshots/ (scripts/ui-test.sh; UI_SCREENSHOTS=0 leaves them).
ui-test: build ui-deps
	scripts/ui-test.sh

# Simulated bundles into ./pushtrace.sqlite, then the answer for one notification of each cause family.
demo: release
	scripts/demo.sh

BENCH_DIR ?= bench-data
# sqlite-utils (PyPI) in a virtualenv of the bench folder: the Datasette user's way of loading NDJSON, a floor of make bench.
bench-deps: deps
	@[ -x $(BENCH_DIR)/venv/bin/sqlite-utils ] || { mkdir -p $(BENCH_DIR) && python3 -m venv $(BENCH_DIR)/venv \
		&& $(BENCH_DIR)/venv/bin/pip install -q sqlite-utils==3.38; }

# Every figure with its target, in one run (scripts/bench.sh: PARTS, CORPUS, SCALE; docs/PERFORMANCE.md).
# PARTS=postgres: the same figures on PostgreSQL beside SQLite's, with a throwaway cluster and perf for the profile.
bench: release bench-deps postgres-deps
	@[ -z "$(findstring postgres,$(PARTS))" ] || command -v perf >/dev/null || $(MAKE) -s deps DEBS=linux-perf
	BENCH_DIR=$(BENCH_DIR) scripts/bench.sh

# Parts of make bench: ingest against sqlite3's .import and sqlite-utils; HTTP with 1, 8 and 64 uploaders.
bench-ingest: release bench-deps
	BENCH_DIR=$(BENCH_DIR) PARTS=ingest scripts/bench.sh

# report and alerts over a store of 10,000,000 notifications (NOTIFICATIONS=…), against their targets (docs/PERFORMANCE.md).
bench-reports: release
	scripts/bench-reports.sh

# 200 uploaders for 5 minutes against a release server: no error but 429s, every acknowledged bundle stored once.
load-test: release
	scripts/load-test.sh

# libFuzzer on the bundle and record decoders (FUZZ_SECONDS each, default 60; FUZZ_RUNS to stop at a count).
fuzz: deps build
	scripts/fuzz.sh

# The agent's record call (median, p99) and the memory it adds to a process recording 10,000 events.
bench-agent: deps
	$(SWIFT) build -c release --product pushtrace-agent-probe
	scripts/bench-agent.sh

# A hostile-client suite against a live release server: every attack with its expected answer, the server alive and
# serving another app after each, memory within the upload budget while 50 connections hold uploads open
# (scripts/attack-test.py; docs/security.md). Then the attacks on the store's own bounds on a throwaway PostgreSQL.
attack-test: release postgres-deps
	scripts/attack-test.sh
	scripts/with-postgres.sh scripts/attack-test.sh postgres

# Kill the server with SIGKILL mid-upload, ROUNDS times (default 20): every acknowledged bundle stored once, none partial.
crash-test: build
	scripts/crash-test.sh

# The same on PostgreSQL: two servers on one database, one killed each round; then PostgreSQL restarted mid-upload
# (ROUNDS, RESTARTS).
crash-test-postgres: build postgres-deps
	scripts/with-postgres.sh scripts/crash-test-postgres.sh

bench-http: release
	BENCH_DIR=$(BENCH_DIR) PARTS=http scripts/bench.sh

# This build's `pushtrace ingest` against an earlier revision's (BASE=<git revision>, built once in a worktree under
# the bench folder), alternated, on the corpus and on short notifications (docs/PERFORMANCE.md).
bench-release: release
	@test -n "$(BASE)" || { echo "usage: make bench-release BASE=<git revision of the earlier release>"; exit 1; }
	mkdir -p $(BENCH_DIR)
	[ -d $(BENCH_DIR)/base-$(BASE) ] || git worktree add --detach $(BENCH_DIR)/base-$(BASE) $(BASE)
	cd $(BENCH_DIR)/base-$(BASE) && swift build -c release --product pushtrace
	BENCH_DIR=$(BENCH_DIR) PARTS=release BASE_BIN=$(abspath $(BENCH_DIR))/base-$(BASE)/.build/release/pushtrace scripts/bench.sh

clean:
	rm -rf .build dist demo-bundles pushtrace.sqlite pushtrace.sqlite-wal pushtrace.sqlite-shm
