#!/usr/bin/env bash
# Owns `make kind-up`: starts the private engine (dockerd.sh), builds what
# is missing (bins.sh, rootfs.sh, images.sh; nothing when warm) and creates
# the KinD cluster nqos-$RUN_ID with KIND_WORKERS workers (nqos-kind up:
# the cluster, then OVN on the userspace datapath in its nodes and a ping
# across geneve, split into a zone per node (NB, SB and ovn-northd in
# every node) unless KIND_TOPOLOGY=central, then the nqos-cni plugin built here on every node, then
# OVN-Kubernetes' ovnkube (interconnect: its cluster manager in the control
# plane and a zone controller per node; central: one master), built once by ovnkube.sh:
# it creates the launcher pods' LSPs; KIND_LSP=emulated leaves them to the
# harness), its kubeconfig at $kind_runs/nqos-$RUN_ID/kubeconfig. A failed create deletes
# the cluster it made.
set -euo pipefail
source "$(dirname "$0")/env.sh"
run_id="${RUN_ID:-}"
if [[ -z "$run_id" ]]; then run_id="$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"; fi
if [[ ! "$run_id" =~ ^[a-z0-9][a-z0-9-]{0,30}$ ]]; then
  echo "kind-up: RUN_ID $run_id: want lower-case letters, digits and dashes" >&2; exit 2
fi
name="nqos-$run_id"
kubeconfig="$kind_runs/$name/kubeconfig"
DOCKER_HOST="$("$kind_here/hack/kind/dockerd.sh" up)"
export DOCKER_HOST
image="$("$kind_here/hack/kind/images.sh")"
tool="$(kind_tool)"
# nqos-cni runs inside the nodes: statically linked, from the repo root
(cd "$kind_here" && CGO_ENABLED=0 go build -o "$kind_cache/nqos-cni" ./cmd/nqos-cni)
lsp="${KIND_LSP:-ovnkube}"
ovnkube_args=()
if [[ "$lsp" == ovnkube ]]; then ovnkube_args=(-ovnkube-bin "$("$kind_here/hack/kind/ovnkube.sh")"); fi
"$tool" up -name "$name" -image "$image" -workers "${KIND_WORKERS:-1}" -kubeconfig "$kubeconfig" \
  -cni-bin "$kind_cache/nqos-cni" -nad-crd "$kind_here/config/crd/k8s.cni.cncf.io_network-attachment-definitions.yaml" \
  -lsp "$lsp" -topology "${KIND_TOPOLOGY:-interconnect}" "${ovnkube_args[@]}"
echo "export KUBECONFIG=$kubeconfig   # make kind-down RUN_ID=$run_id"
