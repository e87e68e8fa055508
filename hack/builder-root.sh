#!/bin/sh
# Builds the root file system of a local Go builder image (Debian 12
# minbase from the Debian mirror apt uses plus this machine's Go toolchain) for
# machines without a container registry: the image test and `make image`
# import it with `docker import`. Output: $NQOS_BUILDER_ROOT (default
# ~/.cache/nqos/builder-root-bookworm.tar); kept once built.
set -eu
out=${NQOS_BUILDER_ROOT:-$HOME/.cache/nqos/builder-root-bookworm.tar}
goroot=${GOROOT:-$(go env GOROOT)}
[ -s "$out" ] && { echo "$out exists"; exit 0; }
command -v debootstrap >/dev/null || { echo "debootstrap missing: apt-get install debootstrap" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
dir=$(mktemp -d /tmp/nqos-builder-root.XXXXXX)
trap 'rm -rf "$dir"' EXIT
debootstrap --variant=minbase bookworm "$dir" "$("$(dirname "$0")/debian-mirror.sh")"
rm -rf "$dir/var/cache/apt/archives"/*.deb "$dir/var/lib/apt/lists"/*
mkdir -p "$dir/usr/local"
cp -a "$goroot" "$dir/usr/local/go"
tar -C "$dir" -cf "$out.tmp" .
mv "$out.tmp" "$out"
echo "$out"
