#!/usr/bin/env bash
# Owns `make kind-deploy`: deploys nqos-controller into the KinD cluster
# nqos-$RUN_ID the way config/deploy/README.md says (central mode) with
# `nqos-kind deploy`: builds the image IMAGE from build/Containerfile in
# the private engine when it lacks it (NQOS_IMAGE_REBUILD=1: always; the
# builder image comes from hack/builder-root.sh's root, modules from this
# machine's module cache; rebuilt when the sources changed since the last
# deploy's build; a build of the same sources that `make test`'s image
# test saved, hack/controller-image-cache.sh, is loaded instead), loads it
# into every node, and applies the CRDs,
# namespace, RBAC, Northbound TLS Secret and the Deployment (REPLICAS, empty:
# the manifest's). Extra arguments go to nqos-kind deploy (e.g. -timeout 5m).
set -euo pipefail
source "$(dirname "$0")/env.sh"
run_id="${RUN_ID:-}"
if [[ -z "$run_id" ]]; then
  echo "kind-deploy: RUN_ID names the cluster (make kind-deploy RUN_ID=x)" >&2; exit 2
fi
name="nqos-$run_id"
kubeconfig="$kind_runs/$name/kubeconfig"
[[ -f "$kubeconfig" ]] || { echo "kind-deploy: no cluster $name ($kubeconfig missing; make kind-up RUN_ID=$run_id)" >&2; exit 1; }
DOCKER_HOST="$("$kind_here/hack/kind/dockerd.sh" env)"
export DOCKER_HOST
image="${IMAGE:-nqos/nqos-controller:dev}"
# The engine's data root outlives clones and commits: an image of that tag
# built from other sources is rebuilt. The stamp names the image and a hash
# of the files the Containerfile copies, as they are in this tree.
src_hash="$("$kind_here/hack/controller-image-cache.sh" hash)"
stamp="$kind_cache/controller-image.src"
build=missing
if [[ "${NQOS_IMAGE_REBUILD:-}" == 1 ]] || [[ "$(cat "$stamp" 2>/dev/null)" != "$image $src_hash" ]]; then
  build=always
  # the image test of `make test` saved this tree's image: load it
  saved="$("$kind_here/hack/controller-image-cache.sh" path)"
  if [[ "${NQOS_IMAGE_REBUILD:-}" != 1 && -f "$saved" ]]; then
    t0=$SECONDS
    ref="$(docker load -q -i "$saved" | sed -n 's/^Loaded image: //p' | tail -n1)"
    [[ -n "$ref" ]] || { echo "kind-deploy: $saved holds no tagged image" >&2; exit 1; }
    [[ "$ref" == "$image" ]] || docker tag "$ref" "$image"
    echo "kind-deploy: image $image loaded from $saved ($ref) in $((SECONDS - t0)) s" >&2
    build=never
  fi
fi
tool="$(kind_tool)"
"$tool" deploy -name "$name" -kubeconfig "$kubeconfig" -repo "$kind_here" \
  -image "$image" -replicas "${REPLICAS:-0}" -build "$build" "$@"
echo "$image $src_hash" >"$stamp"
echo "export KUBECONFIG=$kubeconfig   # kubectl -n nqos-system get pods"
