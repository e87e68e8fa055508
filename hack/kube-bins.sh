#!/usr/bin/env bash
# Builds kube-apiserver and etcd (and kubectl with the argument "kubectl")
# from source (nested module tools/kube) into a per-version cache directory
# and prints that directory. The tests need only the control plane; kubectl
# is for people driving `nqos-sim up`. Each binary already there is kept.
# They are static (CGO_ENABLED=0) and carry the release's version stamp, as
# the KinD node's images need them: hack/kind/bins.sh copies kube-apiserver
# and etcd from here instead of compiling them a second time.
# Cold: ~11 min on 2 cores for the control plane plus a few minutes for
# kubectl; warm: seconds.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
k8s_version="v1.37.2"
version="${k8s_version}-etcd3.7.0-static"
dir="${NQOS_KUBE_BIN_DIR:-${HOME}/.cache/nqos/kube-${version}}"
mkdir -p "$dir"
cd "$here/tools/kube"
export CGO_ENABLED=0
source "$here/hack/kube-ldflags.sh"
ldflags="$(kube_ldflags "$k8s_version")"
# build NAME PACKAGE [FLAGS...]: skip when present, write via a temp file.
build() {
  local name="$1" pkg="$2"; shift 2
  if [[ -x "$dir/$name" ]]; then return 0; fi
  echo "building $name into $dir (first time only)" >&2
  go build -mod=readonly "$@" -o "$dir/$name.tmp" "$pkg" >&2
  mv "$dir/$name.tmp" "$dir/$name"
}
build etcd go.etcd.io/etcd/server/v3 -ldflags='-s -w'
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver -ldflags="$ldflags"
for extra in "$@"; do
  case "$extra" in
    kubectl) build kubectl k8s.io/kubernetes/cmd/kubectl -ldflags="$ldflags" ;;
    *) echo "kube-bins.sh: unknown binary $extra (known: kubectl)" >&2; exit 2 ;;
  esac
done
echo "$dir"
