#!/usr/bin/env bash
# Owns the Debian trixie minbase root the KinD base image starts from:
# debootstrap (from the mirror apt already uses) with kind's node packages
# plus Debian's containerd and runc, packed as a tarball in the kind cache.
# Kept once built. Prints the tarball path.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${NQOS_KIND_CACHE:-${HOME}/.cache/nqos/kind-v0.33.0-k8s-v1.37.2}"
tarball="$cache/trixie-root.tar"
if [[ -f "$tarball" ]]; then echo "$tarball"; exit 0; fi
pkgs=(systemd conntrack iptables nftables iproute2 ethtool util-linux mount kmod
  libseccomp2 pigz fuse-overlayfs e2fsprogs bash ca-certificates curl jq procps
  containerd runc)
mirror="$("$here/hack/debian-mirror.sh")"
root="$(mktemp -d "$cache/trixie-root.XXXXXX")"
cleanup() {
  for m in proc sys dev/pts dev; do
    if mountpoint -q "$root/$m" 2>/dev/null; then umount -l "$root/$m"; fi
  done
  rm -rf "$root"
}
trap cleanup EXIT
echo "kind rootfs: debootstrap trixie from $mirror (first time only)" >&2
t0=$SECONDS
debootstrap --variant=minbase --include="$(IFS=,; echo "${pkgs[*]}")" trixie "$root" "$mirror" >&2
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -cf "$tarball.tmp" .
mv "$tarball.tmp" "$tarball"
echo "kind rootfs: built in $((SECONDS - t0)) s" >&2
echo "$tarball"
