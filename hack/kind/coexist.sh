#!/usr/bin/env bash
# Owns `make e2e-kind-coexist`: nqos beside OVN-Kubernetes' own NetworkQoS
# controller on the KinD cluster nqos-$RUN_ID (an existing one is reused,
# else made by up.sh). The controller is deployed (its CRDs are what
# ovnkube's NetworkQoS informer needs), ovnkube is restarted with
# --enable-network-qos (nqos-kind ovnkube), and the controller is deployed
# again, now with --ovnkube-enable-network-qos=true (nqos-kind deploy reads
# the setting the cluster records). Then, together:
#   - the scenario coexist/scenario.yaml (`nqos-sim run --backend kind`):
#     ovnkube's object on an IPAM localnet (DSCP 26), nqos's on an ipamless
#     one (DSCP 46), each VM's flow judged on its node's uplink for 75 s;
#   - `nqos-kind coexist`: once the NB holds both controllers' rows, 60 s of
#     NB monitors (QoS, Port_Group, Address_Set) and a NetworkQoS watch
#     (COEXIST_RESTARTS=1: with the nqos controller restarted at 10 s, a
#     new leader's startup sync and GC beside ovnkube's rows, and ovnkube
#     at 35 s, its NetworkQoS sync and repair beside nqos's rows),
#     failing on any row of either owner inserted, changed or deleted, any
#     owner takeover, any status change, a missing row or condition, or a
#     condition owned by the other controller's field manager (ovnkube's
#     is its zone, "global"; nqos's central controller's "nqos-global").
# The run is central-only (one NB monitor, ovnkube's zone "global"): a new
# cluster is made with KIND_TOPOLOGY=central, and a reused one of another
# topology is refused.
# The cluster is deleted afterwards, also after a failure; KIND_KEEP=1 keeps
# it and puts ovnkube's NetworkQoS and the controller's flag back off.
# REPORTS=DIR: the scenario report and coexist.txt go there.
#   RUN_ID=e2e hack/kind/coexist.sh
set -euo pipefail
source "$(dirname "$0")/env.sh"
run_id="${RUN_ID:-e2e}"
name="nqos-$run_id"
kubeconfig="$kind_runs/$name/kubeconfig"
reports="${REPORTS:-$kind_runs/$name-coexist}"
pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ -z "${KIND_KEEP:-}" ]]; then
    RUN_ID="$run_id" "$kind_here/hack/kind/down.sh" >&2 || rc=1
  elif [[ -f "$kubeconfig" ]]; then
    "$tool" ovnkube -name "$name" -kubeconfig "$kubeconfig" -network-qos off >&2 &&
      RUN_ID="$run_id" "$kind_here/hack/kind/deploy.sh" >&2 || rc=1
  fi
  exit "$rc"
}
tool="$(kind_tool)"
trap cleanup EXIT
DOCKER_HOST="$("$kind_here/hack/kind/dockerd.sh" up)"
export DOCKER_HOST
KIND_TOPOLOGY=central kind_cluster_up "$run_id" e2e-kind-coexist
topology="$("$kind_cache/bin/kubectl" --kubeconfig "$kubeconfig" -n kube-system get configmap nqos-kind -o 'jsonpath={.data.topology}')"
if [[ -n "$topology" && "$topology" != central ]]; then
  echo "e2e-kind-coexist: cluster $name runs topology $topology; the coexistence run needs central (make kind-down RUN_ID=$run_id first)" >&2
  exit 2
fi
start=$SECONDS
RUN_ID="$run_id" "$kind_here/hack/kind/deploy.sh" >&2
"$tool" ovnkube -name "$name" -kubeconfig "$kubeconfig" -network-qos on >&2
RUN_ID="$run_id" "$kind_here/hack/kind/deploy.sh" >&2
echo "e2e-kind-coexist: ovnkube's NetworkQoS on, controller redeployed in $((SECONDS - start)) s" >&2
mkdir -p "$reports"
"$kind_here/bin/nqos-sim" run --backend kind --kind-cluster "$name" --kubeconfig "$kubeconfig" \
  --docker-host "$DOCKER_HOST" --ovn 25.03 --ip-family v4 --report-dir "$reports" \
  "$kind_here/hack/kind/coexist/scenario.yaml" &
sim=$!
pids+=("$sim")
restarts=()
if [[ -n "${COEXIST_RESTARTS:-}" ]]; then restarts=(-restart-nqos-at 10s -restart-ovnkube-at 35s); fi
"$tool" coexist -name "$name" -kubeconfig "$kubeconfig" -window 60s -wait 4m "${restarts[@]}" \
  -expect vms/ovnk-qos=Accepted=True,Ready-In-Zone-global=True \
  -expect vms/nqos-qos=Accepted=True,NQOSReady-In-Zone-global=True \
  -writer Ready-In-Zone-=global -writer NQOSReady-In-Zone-=nqos-global -writer Accepted=nqos-global \
  > >(tee "$reports/coexist.txt") &
watch=$!
pids+=("$watch")
# the first to fail stops the other (cleanup): a scenario that failed
# leaves no rows to watch, a watch that failed is already a failed run
rc=0
if wait -n -p done "$sim" "$watch"; then
  if [[ "$done" == "$sim" ]]; then wait "$watch" || rc=1; else wait "$sim" || rc=1; fi
else
  rc=1
fi
pids=()
exit "$rc"
