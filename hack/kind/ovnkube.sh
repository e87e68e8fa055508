#!/usr/bin/env bash
# Owns the ovnkube binary the KinD clusters run in their control plane
# (nqos-kind up -ovnkube-bin): built statically from the nested module
# tools/ovnkube into the kind cache, its file named by the go-controller's
# pseudo-version. A binary already present is kept, so a warm run builds
# nothing. Prints the binary's path.
set -euo pipefail
source "$(dirname "$0")/env.sh"
mod="$kind_here/tools/ovnkube"
pkg="github.com/ovn-org/ovn-kubernetes/go-controller"
version="$(awk -v p="$pkg" '$1 == "require" && $2 == p { print $3 } $1 == p { print $2 }' "$mod/go.mod" | head -1)"
if [[ -z "$version" ]]; then echo "ovnkube.sh: no $pkg in $mod/go.mod" >&2; exit 1; fi
bin="$kind_cache/ovnkube-$version"
mkdir -p "$kind_cache"
# one builder at a time: a second caller waits, then finds the binary
exec 9>"$kind_cache/ovnkube.lock"
flock 9
if [[ ! -x "$bin" ]]; then
  # three of its modules are not in the checksum database
  export GONOSUMDB="$pkg,github.com/JacobTanenbaum/arping,github.com/trozet/go-iptables"
  start=$(date +%s)
  (cd "$mod" && CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags="-s -w" -o "$bin.tmp" "$pkg/cmd/ovnkube")
  mv "$bin.tmp" "$bin"
  echo "ovnkube.sh: built $bin in $(( $(date +%s) - start ))s" >&2
fi
echo "$bin"
