# nqos: NetworkQoS for ipamless localnet, proven on a real datapath.
# The two commands a user needs: `make e2e-localnet` and `make test`.
GO       ?= go
PKGS     ?= ./...
REPORTS  ?=
SCENARIOS ?= all
## IP_FAMILY: dual runs every scenario in each family it lists (v4 then v6)
IP_FAMILY ?= dual
IPAM      ?= all
## OVN: the OVN version the testbed and the tests run: 23.03 (Debian 12's
## packages) or 25.03 (Debian 13's, in the root hack/ovn-root.sh builds)
OVN       ?= 23.03
OVN_VERSIONS := 23.03 25.03
## TOPOLOGY: the embedded testbed's OVN control plane: central (one NB, SB and
## northd) or interconnect (a zone per node, an nqos-controller --node per zone)
TOPOLOGY  ?= interconnect
# Tests that start OVN without iterating over the versions themselves
# (ovninstall.ForEach): `make test` runs them again on every other version,
# all but the tests whose subject holds no OVN (the controller image).
OVN_PKGS  ?= ./internal/ovnnb/... ./internal/controller/... ./cmd/nqos-sim/... ./internal/inspect/...
OVN_SKIP  ?= ^TestContainerImage$$
# ovn_env V: shell prefix that makes a command run OVN version V.
ovn_env = d="$$(./hack/ovn-root.sh $(1))" && PATH="$${d:+$$d/bin:}$$PATH" NQOS_OVN=$(1)
export NQOS_KUBE_BIN_DIR ?= $(HOME)/.cache/nqos/kube-v1.37.2-etcd3.7.0-static

.PHONY: all deps build cross test unit vet fuzz bench generate e2e-localnet e2e-kind e2e-kind-coexist kind-up kind-down mutation image clean

all: build

## deps: Debian packages, the OVN 25.03 root, Go modules, kube-apiserver + etcd (built from source once)
deps:
	./hack/deps.sh

build:
	$(GO) build -o bin/nqos-sim ./cmd/nqos-sim
	$(GO) build -o bin/nqos-controller ./cmd/nqos-controller
	$(GO) build -o bin/kubectl-nqos ./cmd/kubectl-nqos

## cross: the kubectl plugin (no datapath) cross-compiled for macOS and Windows into bin/cross
CROSS ?= darwin/amd64 darwin/arm64 windows/amd64
cross:
	set -e; for p in $(CROSS); do os=$${p%/*}; arch=$${p#*/}; \
	  GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build -o bin/cross/kubectl-nqos-$$os-$$arch$$( [ $$os = windows ] && echo .exe) ./cmd/kubectl-nqos; done

vet:
	$(GO) vet $(PKGS)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }

## test: every test, with the real OVN/OVS daemons, namespaces and API server (root)
test: deps vet cross
	rc=0; $(call ovn_env,$(OVN)) $(GO) test -count=1 -p 1 -timeout 40m $(PKGS) || rc=1; \
	for v in $(filter-out $(OVN),$(OVN_VERSIONS)); do $(call ovn_env,$$v) $(GO) test -count=1 -p 1 -timeout 20m -skip '$(OVN_SKIP)' $(OVN_PKGS) || rc=1; done; \
	exit $$rc

## unit: every hermetic test (-short: tests needing root, daemons or the API server skip through internal/testenv)
unit:
	$(GO) test -count=1 -short ./...

## fuzz: run the match-builder/parser fuzzers for FUZZTIME each
FUZZTIME ?= 60s
FUZZERS ?= FuzzMatch FuzzDecodeCompile FuzzRewriteLegacyMatch
fuzz:
	set -e; for f in $(FUZZERS); do $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./internal/qos/; done

## bench: benchmarks (compiler, NB apply, controller sync, capture analysis, testbed boot)
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m $(PKGS)

## generate: regenerate the libovsdb models from the committed OVN NB schema
generate:
	$(GO) generate ./internal/ovnnb/nbdb/

## e2e-localnet: boot the embedded testbed and run the scenarios; prints the report path
## (SCENARIOS="a b" to pick, IP_FAMILY=v4|v6|dual, IPAM=ipamless|ovnk|dhcp|all, OVN=23.03|25.03,
## TOPOLOGY=central|interconnect, REPORTS=dir)
e2e-localnet: deps build
	./bin/nqos-sim run --ovn $(OVN) --topology $(TOPOLOGY) --controller-bin bin/nqos-controller --ip-family $(IP_FAMILY) --ipam $(IPAM) $(if $(REPORTS),--report-dir $(REPORTS)) $(filter-out all,$(SCENARIOS))

## e2e-kind: the scenarios on a KinD cluster nqos-$(RUN_ID) (default e2e): kind-up, the controller
## deployed from config/deploy, `nqos-sim run --backend kind`, kind-down (KIND_KEEP=1 keeps the
## cluster). SCENARIOS picks (default KIND_SCENARIOS; KIND_SCENARIOS=all runs every one: what the
## backend cannot do is reported unsupported), IP_FAMILY and REPORTS as for e2e-localnet
KIND_SCENARIOS ?= story1-tiers story2-backup story4-uplink-dscp accepted-false vm-after-policy deletion ipam-dest-selectors
kind_scenarios = $(if $(filter-out all,$(SCENARIOS)),$(SCENARIOS),$(filter-out all,$(KIND_SCENARIOS)))
e2e-kind: deps build
	RUN_ID=$(or $(RUN_ID),e2e) KIND_TOPOLOGY=$(KIND_TOPOLOGY) ./hack/kind/e2e.sh --ip-family $(IP_FAMILY) --ipam $(IPAM) $(if $(REPORTS),--report-dir $(REPORTS)) $(kind_scenarios)

## e2e-kind-coexist: nqos beside OVN-Kubernetes' own NetworkQoS controller on KinD cluster
## nqos-$(RUN_ID) (default e2e; an existing one is reused): ovnkube restarted with
## --enable-network-qos, the controller with --ovnkube-enable-network-qos=true, the scenario
## hack/kind/coexist/scenario.yaml (DSCP 26 by ovnkube, 46 by nqos) under a 60 s NB and status
## watch that fails on any flip; then kind-down (KIND_KEEP=1 keeps the cluster)
e2e-kind-coexist: deps build
	RUN_ID=$(or $(RUN_ID),e2e) REPORTS=$(REPORTS) ./hack/kind/coexist.sh

## kind-up: a KinD v0.33.0 cluster nqos-$(RUN_ID) (Kubernetes v1.37.2, 1 control plane +
## KIND_WORKERS workers, bridge CNI, no CoreDNS/kube-proxy) on a private dockerd, every image
## built offline (first run ~30 min of Go builds; warm ~1 min); prints its kubeconfig.
## KIND_TOPOLOGY=interconnect (a zone per node: NB, SB, northd and an ovnkube zone controller in
## every node, its cluster manager in the control plane) or central (one OVN central and ovnkube)
RUN_ID        ?=
KIND_WORKERS  ?= 1
KIND_TOPOLOGY ?= interconnect
kind-up:
	RUN_ID=$(RUN_ID) KIND_WORKERS=$(KIND_WORKERS) KIND_TOPOLOGY=$(KIND_TOPOLOGY) ./hack/kind/up.sh

## kind-down: delete cluster nqos-$(RUN_ID), or with no RUN_ID every nqos-* cluster; when none
## is left, stop the private dockerd and delete its bridge (the built images stay)
kind-down:
	RUN_ID=$(RUN_ID) ./hack/kind/down.sh

## kind-deploy: deploy nqos-controller into nqos-$(RUN_ID) as config/deploy says (central mode, ssl:
## Northbound in the control plane): builds $(IMAGE) if the engine lacks it (NQOS_IMAGE_REBUILD=1:
## always), loads it into the nodes, waits until the rollout is done and a pod holds the Lease
.PHONY: kind-deploy
REPLICAS ?=
kind-deploy:
	RUN_ID=$(RUN_ID) IMAGE=$(IMAGE) REPLICAS=$(REPLICAS) ./hack/kind/deploy.sh

## mutation: run the scenario suite once per seeded bug (internal/seeded) and print bug | caught | by (MUTATION_SUITE=unit|all)
mutation: deps
	./hack/mutation.sh

## image: the nqos-controller container image from build/Containerfile (needs a Docker engine;
## BUILDER/RUNTIME name the base images, DOCKER_HOST the engine)
IMAGE   ?= nqos/nqos-controller:dev
BUILDER ?= docker.io/library/golang:1.26-bookworm
RUNTIME ?= gcr.io/distroless/static-debian12:nonroot
image:
	DOCKER_BUILDKIT=0 docker build -f build/Containerfile --build-arg BUILDER=$(BUILDER) --build-arg RUNTIME=$(RUNTIME) -t $(IMAGE) .

clean:
	rm -rf bin $(REPORTS)
