# Ledger platform. `make` lists the targets.
#
# go.work joins the root module and ./contracts; package patterns name both,
# since `./...` stops at the nested module's go.mod.

GO        ?= go
PKGS      := ./... ./contracts/...
TESTFLAGS ?= -race=false -p 2 -count=1 -timeout 15m
COMPOSE   ?= docker compose
BIN       := bin
# The contract test (deploy/allinone TestContract) writes its counts here;
# go test keeps a passing package's output to itself, so make test prints it.
CONTRACT_SUMMARY ?= $(CURDIR)/$(BIN)/contract-summary.txt

.DEFAULT_GOAL := help

.PHONY: help run test fuzz chaos bench lint fmt build bin up down logs k8s tools

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-8s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

run: ## the whole platform in one process on :8080 (embedded NATS, data under .data/)
	@deploy/dev/ensure-packages.sh runtime
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/allinone ./deploy/allinone/cmd/allinone
	LOG_FORMAT=$${LOG_FORMAT:-text} exec $(BIN)/allinone

test: tools ## go vet, then every test against real Postgres, NATS (embedded) and Redis (with the contract test's summary), then the fault test (make chaos)
	@deploy/dev/ensure-services.sh
	$(GO) vet $(PKGS)
	$(GO) vet -tags chaos ./deploy/allinone/
	@mkdir -p $(dir $(CONTRACT_SUMMARY)) && rm -f $(CONTRACT_SUMMARY)
	CONTRACT_SUMMARY=$(CONTRACT_SUMMARY) $(GO) test $(TESTFLAGS) $(PKGS); status=$$?; \
		if [ -f $(CONTRACT_SUMMARY) ]; then cat $(CONTRACT_SUMMARY); else echo "contract test: no summary (it did not run to the end)"; fi; \
		exit $$status
	$(MAKE) fuzz
	$(MAKE) chaos

# A count, not a duration: with a duration, Go 1.26's fuzzing coordinator
# can report "context deadline exceeded" as a failure when the time runs out
# while a worker is busy (go.dev/issue/75804, fixed in Go 1.27).
FUZZTIME ?= 4000x
# How long the fuzzer may shrink each new interesting input: its default
# (60 s each) made a run of a slow target take minutes while counting nothing.
FUZZMIN ?= 10x
fuzz: ## a short run of every fuzz target of a parser of outside input and of the invoice renderer (FUZZTIME each, default 4000 inputs)
	$(GO) test -run '^$$' -fuzz '^FuzzVerify$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./pkg/natsauth/
	$(GO) test -run '^$$' -fuzz '^FuzzClientAddr$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./gateway/
	$(GO) test -run '^$$' -fuzz '^FuzzAdjust$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./services/ledger/
	$(GO) test -run '^$$' -fuzz '^FuzzBoundary$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./gateway/contract/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./services/bank/csvimport/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./services/bank/mt940/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./services/bank/camt/
	$(GO) test -run '^$$' -fuzz '^FuzzScanner$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./services/bank/camt/
	$(GO) test -run '^$$' -fuzz '^FuzzCII$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./services/receivables/einvoice/
	$(GO) test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./services/receivables/invoicepdf/
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./services/payables/einvoicein/
	$(GO) test -run '^$$' -fuzz '^FuzzWalk$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./services/payables/mailin/
	$(GO) test -run '^$$' -fuzz '^FuzzFieldRules$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMIN) ./services/payables/extract/

chaos: ## fault tests: the platform on a 3-node NATS cluster (real processes), each node SIGKILLed in turn under load; the bank process SIGKILLed mid-import and mid-reconcile; nothing may be lost or doubled
	@deploy/dev/ensure-services.sh
	$(GO) test -tags chaos -count=1 -p 1 -timeout 10m -run '^(TestChaos|TestBankCrash)$$' -v ./deploy/allinone/

bench: ## postings/s through the gateway (32 clients, fsync on), DATEV export of 1M events, report and export benchmarks, sales invoices/s and render time, e-invoices/s, OCR s/page, extraction queue drain (1 and 2 workers)
	$(GO) run ./deploy/bench/ledgerbench -clients 32 -duration 20s -export 1000000
	$(GO) test -run '^$$' -bench 'Reports' -benchtime 50x ./services/reporting/postgres/
	$(GO) test -run '^$$' -bench 'ExtractQueueDrain' -benchtime 1x ./deploy/allinone/
	$(GO) test -run '^$$' -bench 'SalesInvoiceCreate' -benchtime 400x ./deploy/allinone/
	$(GO) test -run '^$$' -bench '^BenchmarkRender$$' -benchtime 200x -benchmem ./services/receivables/invoicepdf/
	$(GO) test -run '^$$' -bench . -benchtime 1x $(PKGS)
	$(GO) test -run '^$$' -bench '^BenchmarkExtractEInvoice$$' -benchtime 2000x ./services/payables/extract/
	OMP_THREAD_LIMIT=1 $(GO) test -run '^$$' -bench '^BenchmarkOCRPage$$' -benchtime 3x -cpu 1 ./services/payables/extract/

lint: ## gofmt check (fails on any unformatted file) and go vet
	@unformatted="$$(gofmt -l $$(git ls-files --cached --others --exclude-standard -- '*.go' 2>/dev/null || find . -name '*.go' -not -path './.data/*'))"; \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files need formatting (run make fmt):"; echo "$$unformatted"; exit 1; \
	fi
	$(GO) vet $(PKGS)

fmt: ## gofmt -w every Go file
	gofmt -w $$(git ls-files --cached --others --exclude-standard -- '*.go' 2>/dev/null || find . -name '*.go' -not -path './.data/*')

build: ## compile every package
	$(GO) build $(PKGS)

bin: ## build every command into bin/
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./services/*/cmd/* ./gateway/cmd/* ./deploy/allinone/cmd/*

up: ## docker compose: build and start every container
	$(COMPOSE) up -d --build

down: ## docker compose: stop and remove the containers
	$(COMPOSE) down

logs: ## docker compose: follow the logs
	$(COMPOSE) logs -f

k8s: ## render the kustomize base (no cluster needed)
	kubectl kustomize deploy/k8s

# The pinned npm tools of the TypeScript client check (deploy/apiclients);
# npm ci runs only when node_modules is missing or older than the lockfile.
TS_TOOLS := deploy/apiclients/ts
$(TS_TOOLS)/node_modules/.package-lock.json: $(TS_TOOLS)/package.json $(TS_TOOLS)/package-lock.json
	npm ci --prefix $(TS_TOOLS) --no-audit --no-fund
	@touch $@

tools: $(TS_TOOLS)/node_modules/.package-lock.json ## install the npm tools the tests need (Go's tools are pinned in go.mod); needs Node.js and npm
	@$(GO) version
	@command -v pg_config >/dev/null && echo "postgres binaries: $$(pg_config --bindir)" || echo "pg_config not found (fine with DATABASE_URL or a local server)"
	@deploy/dev/ensure-packages.sh
