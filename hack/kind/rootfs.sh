#!/usr/bin/env bash
# Owns the Debian trixie minbase root the KinD base image starts from:
# debootstrap (from the mirror apt already uses) with kind's node packages,
# Debian's containerd and runc, and Open vSwitch 3.5 plus OVN 25.03
# (openvswitch-switch, ovn-host, ovn-central; every node carries all three)
# and ping for the datapath check,
# packed as a tarball in the kind cache. The tarball is named after a hash
# of the package list, so a changed list builds a new root; a built one is
# kept. Maintainer scripts cannot start daemons during the build (a
# policy-rc.d denies it; nqos-kind starts OVS and OVN in the running node).
# Prints the tarball path.
set -euo pipefail
source "$(dirname "$0")/env.sh"
here="$kind_here"
cache="$kind_cache"
pkgs=(systemd conntrack iptables nftables iproute2 ethtool util-linux mount kmod
  libseccomp2 pigz fuse-overlayfs e2fsprogs bash ca-certificates curl jq procps
  containerd runc
  openvswitch-switch ovn-host ovn-central iputils-ping)
id="$(printf '%s\n' "${pkgs[@]}" | sha256sum | cut -c1-8)"
tarball="$cache/trixie-root-$id.tar"
if [[ -f "$tarball" ]]; then echo "$tarball"; exit 0; fi
mkdir -p "$cache"
mirror="$("$here/hack/debian-mirror.sh")"
root="$(mktemp -d "$cache/trixie-root.XXXXXX")"
cleanup() {
  for m in proc sys dev/pts dev; do
    if mountpoint -q "$root/$m" 2>/dev/null; then umount -l "$root/$m"; fi
  done
  rm -rf "$root"
}
trap cleanup EXIT
echo "kind rootfs: debootstrap trixie from $mirror (first time for this package list)" >&2
t0=$SECONDS
debootstrap --foreign --variant=minbase --include="$(IFS=,; echo "${pkgs[*]}")" trixie "$root" "$mirror" >&2
# no service may start inside the build root
mkdir -p "$root/usr/sbin"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
chroot "$root" /debootstrap/debootstrap --second-stage >&2
rm -f "$root/usr/sbin/policy-rc.d"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -cf "$tarball.tmp" .
mv "$tarball.tmp" "$tarball"
echo "kind rootfs: built in $((SECONDS - t0)) s" >&2
echo "$tarball"
