#!/usr/bin/env bash
# Owns `make kind-down`: with RUN_ID deletes the cluster nqos-$RUN_ID and
# its kubeconfig; without, every nqos-* cluster. When no nqos cluster is
# left it also removes kind's docker network, any node-image builder
# container, and stops the private engine and its bridge (dockerd.sh down).
# The engine's data root (the built images) stays for the next warm run.
set -euo pipefail
source "$(dirname "$0")/env.sh"
dockerd="$kind_here/hack/kind/dockerd.sh"
DOCKER_HOST="$("$dockerd" env)"
export DOCKER_HOST
if docker version >/dev/null 2>&1; then
  tool="$(kind_tool)"
  if [[ -n "${RUN_ID:-}" ]]; then
    "$tool" down -name "nqos-$RUN_ID" -kubeconfig "$kind_runs/nqos-$RUN_ID/kubeconfig"
    rm -rf "${kind_runs:?}/nqos-$RUN_ID"
  else
    "$tool" down -all
    rm -rf "${kind_runs:?}"/nqos-*
  fi
  if [[ -n "$(docker ps -aq --filter label=io.x-k8s.kind.cluster)" ]]; then
    echo "kind-down: other kind clusters remain; the engine keeps running" >&2
    exit 0
  fi
  for c in $(docker ps -aq --filter name=nqos-kind-build-); do docker rm -f "$c" >/dev/null; done
  if docker network inspect kind >/dev/null 2>&1; then docker network rm kind >/dev/null; fi
fi
"$dockerd" down
echo "kind-down: no nqos cluster left; engine stopped"
