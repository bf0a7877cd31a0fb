# racekit: make races happen on purpose against a real kube-apiserver.
# `make test` and `make demo` do all the setup on a fresh machine.

GO ?= go

.PHONY: help envtest controller-manager scheduler kubemark operators mermaid browser python-client test demo vet determinism stress matrix timings fuzz bench

DETERMINISM ?= 50
FUZZTIME ?= 10m

# The real Mermaid parser, installed from npm once into the user cache and
# shared by every clone, like the control-plane binaries.
MERMAID_VERSION := $(shell sed -n 's/.*"mermaid": "\(.*\)".*/\1/p' tools/mermaid/package.json)
MERMAID_DIR := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/racekit/mermaid-$(MERMAID_VERSION)

# make test runs every stage through tools/stage, which records its wall
# time here and prints the table at the end (or at the first failure).
STAGES := $(CURDIR)/.make-test-stages
STAGE := STAGES=$(STAGES) tools/stage
# The programs cmd/racekit's leak tests run, built before the tests start.
LEAKBIN := $(CURDIR)/.leak-bin

# The tests run in two lanes at once (tools/tests): the harness, the hooks,
# the reference controller and internal/ with the race detector, whose
# promise is theirs ("go test -race is clean for harness, hooks and
# controller"); the public API, cmd/racekit, the scenarios, the examples,
# their Ginkgo suite and realbugs without it (tools/packages says why).
# go vet type-checks the root module against the race build, and the
# examples and realbugs against the plain one their tests use. The
# determinism check (3 rounds of the catalogue) runs in the scenarios
# package's process, on its control plane. examples/ is a module of its
# own, so go test ./... does not reach it; realbugs/ is one too: its
# stages build the published operator releases it races (make operators;
# kube-controller-manager for the garbage collector and the StatefulSet
# controller) and run its scenarios, the real bugs. make timings prints
# where the time goes.
RACE := -race

# go test's own alarm ends a package's tests after 10 minutes whatever they
# are doing: on a loaded 2-core machine cmd/racekit took longer, and its
# verdict was the clock's. Every wait of racekit's ends on evidence or on
# its own bound (within=, the wait timeout), and CI's limit is 90 minutes;
# this alarm is for a hang, not for a slow machine.
TESTTIMEOUT := 60m

help: ## show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' \
		'{ name[NR] = $$1; text[NR] = $$2; if (length($$1) > w) w = length($$1) } \
		END { for (i = 1; i <= NR; i++) printf "  %-" w "s  %s\n", name[i], text[i] }'

envtest: ## build kube-apiserver and etcd from source into the user cache (once; about 10 minutes cold)
	$(GO) run ./internal/assets/envtest

controller-manager: ## build kube-controller-manager from source into the user cache, beside kube-apiserver (once; about 1.5 minutes after envtest)
	$(GO) run ./internal/assets/envtest controller-manager

scheduler: ## build kube-scheduler from source into the user cache, beside kube-apiserver (once; about 1.5 minutes after controller-manager)
	$(GO) run ./internal/assets/envtest scheduler

kubemark: ## build kubemark, the hollow node (the real kubelet with a fake container runtime), from source into the user cache (once; about 11 minutes after controller-manager)
	$(GO) run ./internal/assets/envtest kubemark

operators: ## build the operator releases realbugs races (rabbitmq cluster-operator) from their modules into the user cache (once; about 1.5 minutes)
	$(GO) run -C realbugs ./cmd/operators

mermaid: ## install the Mermaid parser the tests check diagrams with (npm, once)
	@if [ -f "$(MERMAID_DIR)/node_modules/mermaid/package.json" ]; then \
		echo "mermaid: $(MERMAID_VERSION) is ready in $(MERMAID_DIR)"; \
	else \
		echo "mermaid: installing $(MERMAID_VERSION) from npm into $(MERMAID_DIR)"; \
		mkdir -p "$(MERMAID_DIR)" && cp tools/mermaid/package.json tools/mermaid/package-lock.json "$(MERMAID_DIR)/" && \
		cd "$(MERMAID_DIR)" && npm ci --silent --no-audit --no-fund; \
	fi

browser: ## install Chromium for the explore page's browser check (distribution packages, once; needs root)
	@tools/browser

python-client: ## install the official Python client for the test that races an operator written with it (distribution packages, once; needs root)
	@tools/python-client

vet: ## go vet and gofmt
	$(GO) vet $(RACE) ./...
	$(GO) vet -C examples ./...
	$(GO) vet -C realbugs ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

test: ## build the control plane if needed, then run every test and scenario
	@rm -f $(STAGES)
	@$(STAGE) envtest $(MAKE) --no-print-directory envtest
	@$(STAGE) controller-manager $(MAKE) --no-print-directory controller-manager
	@$(STAGE) scheduler $(MAKE) --no-print-directory scheduler
	@$(STAGE) kubemark $(MAKE) --no-print-directory kubemark
	@$(STAGE) operators $(MAKE) --no-print-directory operators
	@$(STAGE) mermaid $(MAKE) --no-print-directory mermaid
	@$(STAGE) browser $(MAKE) --no-print-directory browser
	@$(STAGE) python-client $(MAKE) --no-print-directory python-client
	@$(STAGE) vet $(MAKE) --no-print-directory vet
	@$(STAGE) leak-bins tools/leak-bins $(LEAKBIN)
	@$(STAGE) tests env STAGES=$(STAGES) GO=$(GO) TESTTIMEOUT=$(TESTTIMEOUT) RACEKIT_LEAK_BIN=$(LEAKBIN) RACEKIT_DETERMINISM=3 tools/tests
	@$(STAGE) --report

determinism: envtest controller-manager scheduler kubemark ## run the whole catalogue DETERMINISM times (default 50) and compare the traces; the examples' running controllers too
# The catalogue's running_* scenarios are compared by their assertions
# alone (docs/running.md); so are the examples' controllers that run on
# their own, run DETERMINISM times each with -count.
	@$(GO) test ./scenarios -run TestDeterminism -determinism $(DETERMINISM) -count=1 -timeout 60m -v > determinism.log 2>&1; \
	status=$$?; grep -E '^determinism:|^\s*--- FAIL' determinism.log; \
	$(GO) test -C examples ./floor/ ./internal/controller/ -run 'TestRunning|TestRaces/running_' -count=$(DETERMINISM) -timeout 60m >> determinism.log 2>&1; \
	ex=$$?; echo "determinism: examples' running controllers, $(DETERMINISM) runs each: $$( [ $$ex -eq 0 ] && echo all passed || echo FAILED)"; \
	echo "full log: determinism.log"; [ $$status -eq 0 ] && [ $$ex -eq 0 ]

stress: envtest controller-manager scheduler kubemark operators python-client ## the suites quietly, then under busy loops on every core and pinned to one core with GOMAXPROCS=1, STRESS_ROUNDS times (default 1); verdicts compared
# Every difference in a verdict between the quiet run and a loaded one is
# printed, and fails the target (docs/reliability.md, "Under load").
	@RACE=$(RACE) $(GO) run ./internal/stress

matrix: operators ## the catalogue (with the API-semantics truth table) and the real bugs against every Kubernetes release of the matrix, each built first from its module (about 10 minutes a release the first time): one table, scenario × release
	@$(GO) run ./internal/matrix

timings: envtest controller-manager scheduler kubemark operators python-client ## where the tests' time goes: each package's time and the 20 slowest tests (go test -json, as make test runs them)
	@tools/leak-bins $(LEAKBIN) >/dev/null
	@RACEKIT_LEAK_BIN=$(LEAKBIN) RACEKIT_DETERMINISM=3 RACE=$(RACE) $(GO) run ./internal/timings

fuzz: envtest ## fuzz the scenario parser and commands for FUZZTIME (default 10m)
# -timeout 0: go test's default 10-minute alarm also runs in each fuzzing
# worker and would end a 10-minute run with a false crash; a hung input is
# caught by the fuzzer's own 10-second limit per input.
	@$(GO) test ./harness -run '^$$' -fuzz FuzzScript -fuzztime $(FUZZTIME) -fuzzminimizetime 1x -timeout 0 > fuzz.log 2>&1; \
	status=$$?; last=$$(grep -E '^fuzz: elapsed' fuzz.log | tail -1 | sed 's/^fuzz: //'); \
	if [ $$status = 0 ]; then result="no failure"; else result="FAILED: $$(grep -m1 -E 'Failing input|panic:|hung' fuzz.log | sed 's/^ *//')"; fi; \
	echo "fuzz: FuzzScript for $(FUZZTIME): $$last; $$result (full log: fuzz.log)"; exit $$status

bench: envtest controller-manager scheduler kubemark operators ## run the benchmarks (benchstat-readable)
	$(GO) test ./harness/controlplane -run '^$$' -bench ControlPlaneStart -benchtime 3x -count 3
	$(GO) test ./scenarios -run '^$$' -bench . -benchtime 50x -count 5
	$(GO) test -C realbugs ./rabbitmq -run '^$$' -bench Auto -benchtime 1x -timeout 60m

demo: envtest ## run the flagship race and show it
	$(GO) run ./cmd/racekit run -v
