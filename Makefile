# samsa — see README.md. `make run` starts a broker, `make test` runs everything.
SHELL := /bin/bash
GO ?= go
TOOLS := $(CURDIR)/.tools/bin
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(TOOLS)/golangci-lint
BIN := $(CURDIR)/bin/samsa
DATA ?= ./data
FUZZTIME ?= 10s
TEST_TIMEOUT ?= 18m

.PHONY: all build run test test-unit deps lint lint-imports fmt-check vet cross bench bench-compare perf-targets fuzz clean

all: build

build:
	$(GO) build -trimpath -o $(BIN) ./cmd/samsa

## run: build and start one broker on 127.0.0.1:9092 with data in ./data
run: build
	$(BIN) serve --log.dirs $(DATA)

## deps: install what the tests need on a fresh machine (apt packages)
deps:
	@bash scripts/install-deps.sh

## test: install test dependencies, then run every test. Unit and package
## tests run under the race detector; the end-to-end suites drive real
## broker processes and real clients at full size (a client under the race
## detector runs about 20x slower, which would force smaller workloads).
test: deps lint-imports
	$(GO) test -race -timeout $(TEST_TIMEOUT) $$($(GO) list ./... | grep -v '/e2e')
	$(GO) test -timeout $(TEST_TIMEOUT) $$($(GO) list ./e2e/... | grep -v -e /e2e/cluster -e /e2e/mixed)

## lint-imports: the structural rules of internal/lint (imports, layers, clock use); a second to run
lint-imports:
	$(GO) test ./internal/lint/

## lint: go vet, gofmt check, the internal/lint rules, golangci-lint (pinned, installed from the Go module proxy)
lint: vet fmt-check cross lint-imports $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

## cross: the broker still builds for macOS and FreeBSD (its tests run on Linux only)
cross:
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/samsa
	GOOS=freebsd GOARCH=amd64 $(GO) build -o /dev/null ./cmd/samsa

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

$(GOLANGCI_LINT):
	GOBIN=$(TOOLS) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

## interop: real clients (Java, librdkafka, Python, Node, Go, Kafka's CLI) against one `samsa serve`, then
## against a 3-broker samsa cluster on ZooKeeper; writes docs/compatibility.md (a table per run)
.PHONY: interop
interop: deps
	$(GO) run ./e2e/interop -cluster 0,3 -out docs/compatibility.md

## cluster-test: three `samsa serve` processes on one ZooKeeper, driven by real clients and
## Kafka's tools (e2e/cluster; a few minutes). `make test` leaves the package out; CI runs this
## after `make interop`, whose build of interop/java it reuses for Kafka's 4.x tools.
.PHONY: cluster-test
cluster-test: deps
	$(GO) test -timeout 20m ./e2e/cluster/...
	$(MAKE) mixed-test

## mixed-test: Apache Kafka 3.9.1 JVMs and samsa brokers in one cluster, leader kills under
## acks=all load, in-place data-directory takeover both ways (e2e/mixed; a few minutes).
.PHONY: mixed-test
mixed-test: deps
	$(GO) test -timeout 15m ./e2e/mixed/...

## migrate-demo: the rolling migration of docs/migration.md, shown: three Kafka 3.9.1 brokers under
## load replaced one by one by samsa on their own files, one rolled back (e2e/mixed TestRollingMigration)
.PHONY: migrate-demo
migrate-demo: deps
	$(GO) test -count=1 -v -timeout 10m -run 'TestRollingMigration$$' ./e2e/mixed/

## bench: the micro-benchmarks (segment/, wire/, ...)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-compare: samsa vs Apache Kafka (from Maven Central via interop/java/pom.xml), same workloads,
## same client, in turns; report and charts in bench/results/. BENCH_SCALE=0.1 BENCH_ROUNDS=2 for a quick run.
## Then the replicated part: 3-broker samsa clusters vs an Apache Kafka 3.9.1 3-broker ZooKeeper cluster
## (needs ZooKeeper: make deps). BENCH_REPLICATED=1 runs only that part; BENCH_WORKLOADS=1,3,R2 picks workloads.
BENCH_SCALE ?= 1
BENCH_ROUNDS ?= 3
bench-compare: build
	(cd interop/java && mvn -q dependency:resolve)
	BENCH_COMMAND="$(if $(BENCH_REPLICATED),BENCH_REPLICATED=$(BENCH_REPLICATED) )$(if $(BENCH_WORKLOADS),BENCH_WORKLOADS=$(BENCH_WORKLOADS) )BENCH_SCALE=$(BENCH_SCALE) BENCH_ROUNDS=$(BENCH_ROUNDS) make bench-compare" \
	  $(GO) run ./bench/compare/cmd/bench-compare -scale $(BENCH_SCALE) -rounds $(BENCH_ROUNDS) -samsa $(BIN)

## perf-targets: the data-path targets (produce, consume, e2e, small
## requests, memory) on fresh brokers, group vs never flush, then the disk
## probe (scripts/perf-targets.sh; ROUNDS, RECORDS)
perf-targets: build
	@bash scripts/perf-targets.sh

## fuzz: run every fuzz target briefly (FUZZTIME each)
fuzz:
	@bash scripts/fuzz-all.sh $(FUZZTIME)

clean:
	rm -rf bin
