# racekit: make races happen on purpose against a real kube-apiserver.
# `make test` and `make demo` do all the setup on a fresh machine.

GO ?= go

.PHONY: help envtest test demo vet determinism fuzz bench

DETERMINISM ?= 50
FUZZTIME ?= 10m

help: ## show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

envtest: ## build kube-apiserver and etcd from source into the user cache (once; about 8 minutes cold)
	$(GO) run ./cmd/racekit envtest

vet: ## go vet and gofmt
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

test: envtest vet ## build the control plane if needed, then run every test and scenario
	$(GO) test -race ./hooks/... ./controller/... ./harness/... ./internal/...
	$(GO) test ./scenarios/... ./cmd/...
	$(GO) test ./scenarios -run TestDeterminism -determinism 3 -count=1

determinism: envtest ## run the whole catalogue DETERMINISM times (default 50) and compare the traces
	$(GO) test ./scenarios -run TestDeterminism -determinism $(DETERMINISM) -count=1 -timeout 60m

fuzz: envtest ## fuzz the scenario parser and commands for FUZZTIME (default 10m)
	$(GO) test ./harness -run '^$$' -fuzz FuzzScript -fuzztime $(FUZZTIME)

bench: envtest ## run the benchmarks (benchstat-readable)
	$(GO) test ./harness -run '^$$' -bench ControlPlaneStart -benchtime 3x -count 3
	$(GO) test ./scenarios -run '^$$' -bench . -benchtime 50x -count 5

demo: envtest ## run the flagship race and show it
	$(GO) run ./cmd/racekit run -v
