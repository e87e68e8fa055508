#!/usr/bin/env bash
# Owns `make e2e-kind`: the KinD cluster nqos-$RUN_ID (up.sh, built
# offline; an existing one of that name is reused), the controller
# deployed in it from config/deploy (deploy.sh), the scenarios run on it
# by `nqos-sim run --backend kind` with the host's OVN tools at the
# cluster's version (25.03), and the cluster deleted afterwards, also
# after a failure (KIND_KEEP=1 keeps it). Arguments go to nqos-sim run.
#   RUN_ID=e2e hack/kind/e2e.sh [--ip-family v4|v6|dual] [--report-dir DIR] [SCENARIO...]
set -euo pipefail
source "$(dirname "$0")/env.sh"
run_id="${RUN_ID:-e2e}"
name="nqos-$run_id"
kubeconfig="$kind_runs/$name/kubeconfig"
cleanup() {
  local rc=$?
  if [[ -z "${KIND_KEEP:-}" ]]; then
    RUN_ID="$run_id" "$kind_here/hack/kind/down.sh" >&2 || rc=1
  fi
  exit "$rc"
}
trap cleanup EXIT
DOCKER_HOST="$("$kind_here/hack/kind/dockerd.sh" up)"
export DOCKER_HOST
kind_cluster_up "$run_id" e2e-kind
start=$SECONDS
RUN_ID="$run_id" "$kind_here/hack/kind/deploy.sh" >&2
echo "e2e-kind: controller deployed in $((SECONDS - start)) s" >&2
"$kind_here/bin/nqos-sim" run --backend kind --kind-cluster "$name" --kubeconfig "$kubeconfig" \
  --docker-host "$DOCKER_HOST" --ovn 25.03 "$@"
