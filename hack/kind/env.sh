# Sourced by every kind script (bash): the names and versions they share.
# Owns nothing itself.
kind_here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
kind_version="v0.33.0"
k8s_version="v1.37.2"
kind_cache="${NQOS_KIND_CACHE:-${HOME}/.cache/nqos/kind-${kind_version}-k8s-${k8s_version}}"
kind_runs="${NQOS_KIND_RUNS:-${HOME}/.cache/nqos/kind-runs}"
export DOCKER_BUILDKIT=0
# kind execs `docker` from PATH: the shim goes first (see shim/docker)
export PATH="$kind_here/hack/kind/shim:$PATH"

# kind_tool: build the nqos-kind program (tools/kind) and print its path.
kind_tool() {
  mkdir -p "$kind_cache"
  (cd "$kind_here/tools/kind" && CGO_ENABLED=0 go build -mod=readonly -o "$kind_cache/nqos-kind" .)
  echo "$kind_cache/nqos-kind"
}

# kind_cluster_up RUN_ID WHO: reuse the cluster nqos-RUN_ID when its
# kubeconfig exists and its nodes run, else make it (up.sh); WHO starts
# the messages (stderr). Needs DOCKER_HOST.
kind_cluster_up() {
  local run_id="$1" who="$2" name="nqos-$1" start=$SECONDS
  if [[ -f "$kind_runs/$name/kubeconfig" ]] && [[ -n "$(docker ps -q --filter "label=io.x-k8s.kind.cluster=$name")" ]]; then
    echo "$who: reusing cluster $name" >&2
    return 0
  fi
  RUN_ID="$run_id" "$kind_here/hack/kind/up.sh" >&2
  echo "$who: cluster $name up in $((SECONDS - start)) s" >&2
}
