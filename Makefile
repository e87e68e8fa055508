# nqos: NetworkQoS for ipamless localnet, proven on a real datapath.
# The two commands a user needs: `make e2e-localnet` and `make test`.
GO       ?= go
PKGS     ?= ./...
REPORTS  ?= reports/out
export NQOS_KUBE_BIN_DIR ?= $(HOME)/.cache/nqos/kube-v1.37.2-etcd3.7.0

.PHONY: all deps build test unit vet fuzz bench generate e2e-localnet clean

all: build

## deps: Debian packages, Go modules, kube-apiserver + etcd (built from source once)
deps:
	./hack/deps.sh

build:
	$(GO) build -o bin/nqos-sim ./cmd/nqos-sim

vet:
	$(GO) vet $(PKGS)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }

## test: every test, with the real OVN/OVS daemons, namespaces and API server (root)
test: deps vet
	$(GO) test -count=1 -p 1 -timeout 40m $(PKGS)

## unit: tests that need nothing but Go
unit:
	$(GO) test -count=1 -short $(PKGS)

## fuzz: run the match-builder/parser fuzzers for FUZZTIME each
FUZZTIME ?= 60s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzMatch -fuzztime $(FUZZTIME) ./internal/qos/

## bench: benchmarks (compiler, NB apply, controller sync, capture analysis, testbed boot)
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m $(PKGS)

## generate: regenerate the libovsdb models from the committed OVN NB schema
generate:
	$(GO) generate ./internal/ovnnb/nbdb/

## e2e-localnet: boot the embedded testbed and run every scenario; prints the report path
e2e-localnet: deps build
	./bin/nqos-sim run --report-dir $(REPORTS)

clean:
	rm -rf bin $(REPORTS)
