#!/usr/bin/env bash
# Owns the binaries a KinD node needs, built from source into the kind cache
# (default ~/.cache/nqos/kind-v0.33.0-k8s-v1.37.2/bin): kubeadm, kubelet,
# kubectl, kube-apiserver, kube-controller-manager, kube-scheduler, a static
# etcd, the CNI plugins and crictl. Kubernetes builds from a copy of the
# nested module tools/kube (tools/kube itself is never written); etcd and
# kube-apiserver are copied from hack/kube-bins.sh's cache (the same static,
# version-stamped build the tests use; built there first when missing). Each
# binary already present is kept, so a warm run builds nothing. Prints the
# bin dir.
set -euo pipefail
source "$(dirname "$0")/env.sh"
here="$kind_here"
cache="$kind_cache"
cni_version="v1.10.0"
crictl_version="v1.36.0"
bin="$cache/bin"
src="$cache/kube-src"
mkdir -p "$bin"
# one builder at a time: a second caller waits, then finds the binaries
exec 9>"$cache/bins.lock"
flock 9
export CGO_ENABLED=0

source "$here/hack/kube-ldflags.sh"
ldflags="$(kube_ldflags "$k8s_version")"

# kube_src: a private copy of tools/kube, so -mod=mod may add what it needs.
kube_src() {
  if [[ ! -f "$src/go.mod" ]] || ! cmp -s "$here/tools/kube/go.mod" "$src/go.mod.orig"; then
    rm -rf "$src"; mkdir -p "$src"
    cp "$here/tools/kube/go.mod" "$here/tools/kube/go.sum" "$here/tools/kube/tools.go" "$src/"
    cp "$here/tools/kube/go.mod" "$src/go.mod.orig"
  fi
}

# build NAME PACKAGE [GO BUILD FLAGS...]: in the kube copy, skip when present.
build() {
  local name="$1" pkg="$2"; shift 2
  [[ -x "$bin/$name" ]] && return 0
  kube_src
  echo "kind bins: building $name (first time only)" >&2
  local t0=$SECONDS
  (cd "$src" && go build -mod=mod "$@" -o "$bin/$name.tmp" "$pkg")
  mv "$bin/$name.tmp" "$bin/$name"
  echo "kind bins: $name built in $((SECONDS - t0)) s" >&2
}

# install NAME MODULE-PACKAGE@VERSION: go install into a temp GOBIN.
install() {
  local name="$1" pkg="$2"
  [[ -x "$bin/$name" ]] && return 0
  echo "kind bins: installing $name (first time only)" >&2
  local tmp; tmp="$(mktemp -d "$cache/gobin.XXXXXX")"
  GOBIN="$tmp" go install -ldflags="-s -w" "$pkg"
  mv "$tmp/$name" "$bin/$name"
  rmdir "$tmp"
}

# etcd and kube-apiserver: the tests' build (hack/kube-bins.sh), copied
shared=""
for b in etcd kube-apiserver; do
  [[ -x "$bin/$b" ]] && continue
  [[ -n "$shared" ]] || shared="$("$here/hack/kube-bins.sh")"
  # the images are FROM scratch: a cgo build there would not start
  if ! go version -m "$shared/$b" | grep -qx $'\tbuild\tCGO_ENABLED=0'; then
    echo "kind bins: $shared/$b is not a CGO_ENABLED=0 build (a stale cache directory?)" >&2
    exit 1
  fi
  cp "$shared/$b" "$bin/$b.tmp"
  mv "$bin/$b.tmp" "$bin/$b"
  echo "kind bins: $b copied from $shared" >&2
done
for b in kube-scheduler kubectl kubeadm kubelet kube-controller-manager; do
  build "$b" "k8s.io/kubernetes/cmd/$b" -ldflags="$ldflags"
done
mkdir -p "$bin/cni"
for p in main/bridge main/ptp main/loopback ipam/host-local meta/portmap; do
  n="${p#*/}"
  [[ -x "$bin/cni/$n" ]] && continue
  install "$n" "github.com/containernetworking/plugins/plugins/$p@$cni_version"
  mv "$bin/$n" "$bin/cni/$n"
done
install crictl "sigs.k8s.io/cri-tools/cmd/crictl@$crictl_version"
echo "$bin"
