# Kessai's commands. `make run` and `make test` are all a new user needs.
GO      ?= go
BIN     := bin/kessai
GOFILES := $(shell git ls-files '*.go' 2>/dev/null)

.PHONY: all build run test test-go conformance check bench clean wasm wasm-floor

all: build

## build: the widget's WebAssembly and wasm_exec.js (embedded), then the gateway binary
build: wasm
	$(GO) build -o $(BIN) ./server

# The widget's WebAssembly and the wasm_exec.js of the same toolchain (they
# must match) go to static/build/, which static.FS embeds. `go build` alone
# still works without them: the frame then runs on its plain JavaScript.
WASM_DIR   := static/build
WASM_FLAGS := -trimpath -ldflags="-s -w"
# The Go runtime's own floor for the budget report: an empty js/wasm program
# built the same way, kept out of the embedded files.
WASM_FLOOR ?= $(or $(TMPDIR),/tmp)/kessai-wasm-floor/floor.wasm

## wasm: static/build/widget.wasm and static/build/wasm_exec.js, and the
## wasm's gzip and brotli variants beside it (server/devtools/precompress), which the
## gateway serves instead of compressing it when it starts
wasm:
	@mkdir -p $(WASM_DIR)
	GOOS=js GOARCH=wasm $(GO) build $(WASM_FLAGS) -o $(WASM_DIR)/widget.wasm ./wasm/widget
	cp "$$($(GO) env GOROOT)/lib/wasm/wasm_exec.js" $(WASM_DIR)/wasm_exec.js
	$(GO) run ./server/devtools/precompress $(WASM_DIR)/widget.wasm

## wasm-floor: the empty js/wasm program ($(WASM_FLOOR)), the runtime's size floor
wasm-floor:
	@mkdir -p $(dir $(WASM_FLOOR))
	GOOS=js GOARCH=wasm $(GO) build $(WASM_FLAGS) -o $(WASM_FLOOR) ./wasm/floor
	@ls -l $(WASM_FLOOR)

## run: start the gateway with the demo storefront on an embedded store, and
## the console's local mailbox on (KESSAI_DEV_MAILBOX) to follow reset links
run: build
	KESSAI_DEV_MAILBOX="$${KESSAI_DEV_MAILBOX:-true}" ./$(BIN) serve

## test: every test suite: Go (with the race detector), each fuzz target briefly, the SDK conformance suite (on one process, then on two sharing PostgreSQL and Redis) and the browser suite
## They run in two lanes side by side: the Go tests (computing) beside the
## Node.js suites one after another (mostly waiting on gateways and a
## browser, with start-up deadlines that a starved gateway would miss), and
## then, in that second lane once the browser is done, the fuzz targets,
## which would starve the browser. Measured on a fresh clone on an unloaded
## 2-core machine: 584–654 s in two runs with the machine's warm build
## cache (Go lane 510–575 s; Node lane 564–633 s, the browser 386–433 s of
## it), 976 s with a cold one (Go
## 790 s, half of it compiling for the race detector; the fuzz targets
## 358 s, compiling each package for fuzzing). Each suite's output is
## printed whole when it ends. TEST_JOBS=1 runs them one after another, printing as they go.
TEST_JOBS ?= 2
TEST_SUITES := test-go fuzz-short conformance conformance-scaleout test-browser
test:
	@start=$$(date +%s); $(MAKE) --no-print-directory -j$(TEST_JOBS) $(if $(filter-out 1,$(TEST_JOBS)),--output-sync=target) \
		KESSAI_TEST_LANES=1 $(TEST_SUITES) && echo "make test: all suites passed in $$(( $$(date +%s) - start )) s"

# suite_clock says when a suite of make test started and ended, so that
# the lanes' lengths can be read off the log (each suite's output is
# printed whole when it ends).
suite_clock = @echo "$@: $(1) at $$(date +%T)"

# The lanes of make test (order only: each target alone still runs alone).
# The Go lane runs at a lower priority: its tests pass on a starved CPU,
# while a starved browser misses the browser suite's deadlines.
ifdef KESSAI_TEST_LANES
conformance-scaleout: | conformance
test-browser: | conformance-scaleout
fuzz-short: | test-browser
GO_LANE := nice -n 5
endif

## deps: install what the suites need and this machine lacks (Chromium, a
## Japanese font, Node.js, Go modules) and start PostgreSQL and Redis if down
.PHONY: deps
deps:
	@.ci/ensure-deps

test-go: deps wasm
	$(call suite_clock,started)
	$(GO_LANE) $(GO) test -race -count=1 ./...
	$(call suite_clock,ended)

## fuzz: every Go fuzz target, found by .ci/fuzz, for FUZZTIME each
## (default 30s), one after another; a failing input lands in the package's
## testdata/fuzz/ as a regression seed. fuzz-short: the same for 5,000
## executions each (a count, not a duration: see .ci/fuzz).
FUZZTIME ?= 30s
.PHONY: fuzz fuzz-short
fuzz:
	GO="$(GO)" FUZZTIME="$(FUZZTIME)" .ci/fuzz

# It builds test binaries of packages that embed static/build, so it waits
# for wasm, which writes there, when make test runs them side by side.
fuzz-short: wasm
	$(call suite_clock,started)
	GO="$(GO)" FUZZTIME=5000x $(GO_LANE) .ci/fuzz
	$(call suite_clock,ended)

# Each Node.js suite's packages, installed (npm ci) when its lockfile
# changes: both conformance targets share one node_modules, and two npm ci
# at once in one folder would pull it from under each other.
%/node_modules/.package-lock.json: %/package-lock.json | deps
	cd $* && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
CONFORMANCE_NPM := server/conformance/node_modules/.package-lock.json
BROWSER_NPM     := web/browser/node_modules/.package-lock.json

## conformance: drive a real gateway with the published univapay-node SDK,
## recording every exchange it makes (KESSAI_CONFORMANCE_TRAFFIC, a temp dir
## removed afterwards, pass or fail), then check those exchanges against the
## gateway's OpenAPI document (TestOpenAPIConformanceTraffic in server/api)
# Only this target records: the scale-out runs send the same requests to the
# same handlers, and a second `go test` build would add time, not coverage.
conformance: deps build $(CONFORMANCE_NPM)
	$(call suite_clock,started)
	$(call with_traffic_check,cd server/conformance && node --test --test-reporter=spec)
	$(call suite_clock,ended)

# with_traffic_check runs the shell command $(1) with KESSAI_CONFORMANCE_TRAFFIC
# naming a fresh temp dir, then validates every exchange recorded there
# against the OpenAPI document; the dir is removed, pass or fail.
define with_traffic_check
	traffic=$$(mktemp -d "$${TMPDIR:-/tmp}/kessai-traffic.XXXXXX") && \
	trap 'rm -rf "$$traffic"' EXIT && trap 'exit 130' INT TERM && \
	(export KESSAI_CONFORMANCE_TRAFFIC="$$traffic" && $(1)) && \
	KESSAI_OPENAPI_TRAFFIC="$$traffic" $(GO) test -count=1 -run '^TestOpenAPIConformanceTraffic$$' ./server/api/
endef

## conformance-scaleout: the same suite against two gateway processes on one
## fresh PostgreSQL schema and one Redis prefix, the SDK talking to the one
## that did not seed the demo account (KESSAI_TEST_DATABASE_URL and
## KESSAI_TEST_REDIS_URL say where they are; server/conformance/README.md)
.PHONY: conformance-scaleout
conformance-scaleout: deps build $(CONFORMANCE_NPM)
	$(call suite_clock,started)
	cd server/conformance && \
		node -e 'import("./harness.mjs").then((h) => h.scaleoutReachable()).catch((e) => { console.error(e.message); process.exit(1); })' && \
		KESSAI_CONFORMANCE_SCALEOUT=1 node --test --test-reporter=spec
	$(call suite_clock,ended)

## conformance-php: drive a real gateway with the published UnivaPay PHP SDK
## (server/conformance/php), recording and validating its exchanges against
## the OpenAPI document as conformance does. PHP comes from Debian
## (.ci/ensure-deps --php); the SDK is not in any registry: see that
## folder's README. Without it the suite says why in one line.
KESSAI_PHP_SDK_DIR ?= $(HOME)/.cache/kessai/php-sdk
.PHONY: conformance-php
conformance-php: build $(CONFORMANCE_NPM)
	@.ci/ensure-deps --php
	$(call with_traffic_check,cd server/conformance && \
		KESSAI_PHP_SDK_DIR="$(KESSAI_PHP_SDK_DIR)" node --test --test-reporter=spec php/php.test.mjs)

## test-browser: the widget, link form and demo storefront in headless Debian Chromium
## (/usr/bin/chromium, never a downloaded browser); screenshots go to web/browser/screenshots/
# --test-timeout is a guard against a hung browser, not a time budget: node
# applies it to each file as a whole too, and approvals.test.mjs and
# sandbox.test.mjs take 90-110 s on a loaded 2-core machine, so it is five
# minutes (how fast pages are is measured by make budgets, not asserted here).
.PHONY: test-browser budgets
test-browser: deps build $(BROWSER_NPM)
	$(call suite_clock,started)
	cd web/browser && node --test --test-reporter=spec --test-timeout=300000
	$(call suite_clock,ended)

## budgets: the loader's and the wasm's sizes beside the Go floor, and the
## frame's paint and wasm-ready times in headless Chromium (a report)
budgets: deps build wasm-floor $(BROWSER_NPM)
	cd web/browser && WASM_FLOOR="$(WASM_FLOOR)" node budgets.mjs

## rss: the gateway's resident memory right after start (demo on, fresh data
## directory) beside a bare net/http server's, in one run (server/devtools/startrss)
.PHONY: rss
rss: build
	$(GO) run ./server/devtools/startrss

## check: formatting and static checks for the host and for js/wasm
check:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./wasm/...
	$(GO) mod tidy -diff

## bench: the benchmarks, with memory figures
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin $(WASM_DIR)/widget.wasm* $(WASM_DIR)/wasm_exec.js

## mutate: take each rule of server/devtools/mutate/mutations.txt out of a
## scratch copy of the working tree and check that its tests then fail (MUTATE_FLAGS, e.g.
## -run NAME or -v, is passed through)
.PHONY: mutate
mutate:
	$(GO) run ./server/devtools/mutate $(MUTATE_FLAGS)

## bench-charges: charges per second on the embedded store, beside the raw
## single-row commit rate of the same kind of SQLite file, in one run
## (BENCH_FLAGS, e.g. -count=3 -benchtime=3s, is passed through); then, with
## the sandbox acquirer taking 300 ms a call, the worker's drain rate beside
## the API's acceptance rate, and the worker's drain rate alone, over
## DRAIN_CHARGES charges each (a fixed count: the queue must grow deep)
DRAIN_CHARGES ?= 2000
.PHONY: bench-charges
bench-charges:
	$(GO) test -run '^$$' -bench '^(BenchmarkCreateCharge|BenchmarkSQLiteCommit)$$' -benchmem $(BENCH_FLAGS) ./server/gateway/
	$(GO) test -run '^$$' -bench '^BenchmarkDrainCharges$$' -benchtime $(DRAIN_CHARGES)x ./server/gateway/
	$(GO) test -run '^$$' -bench '^BenchmarkWorkerDrain$$' -benchtime $(DRAIN_CHARGES)x ./server/payment/

## perf: one table of Kessai beside anchors measured in the same run
## (server/devtools/perf, about 2.5 minutes): GET /stores/{id}/charges/{id} under wrk
## -t2 -c32 beside a bare net/http handler answering the same bytes (medians
## of 3 interleaved 8 s rounds), charge acceptance and processing beside
## SQLite's raw commit rate, the drain at 300 ms of acquirer latency.
## PERF_PROFILE=1 adds a CPU profile of the gateway under the read load.
.PHONY: perf
perf:
	@.ci/ensure-deps --perf
	$(GO) run ./server/devtools/perf

## perf-scaleout: `make perf` and, in the same run, the same paths on
## PostgreSQL + Redis with one gateway process and with two on one schema
## (server/devtools/perf/scaleout.go, 3.5 minutes in all; KESSAI_TEST_DATABASE_URL
## and KESSAI_TEST_REDIS_URL say where they are)
.PHONY: perf-scaleout
perf-scaleout:
	@.ci/ensure-deps --perf
	PERF_SCALEOUT=1 $(GO) run ./server/devtools/perf

## bench-webhooks: webhook deliveries per second to a local receiver, and the
## delay from a change's commit to its delivery (median, p99), each beside
## the same receiver hit directly by net/http in the same run, over
## WEBHOOK_DELIVERIES deliveries
WEBHOOK_DELIVERIES ?= 2000
.PHONY: bench-webhooks
bench-webhooks:
	$(GO) test -run '^$$' -bench '^BenchmarkWebhook(Drain|Latency)$$' -benchmem -benchtime $(WEBHOOK_DELIVERIES)x ./server/payment/
