#!/usr/bin/env bash
# Installs what nqos's tests and testbed need on a Debian 12 machine (as
# root): the Debian packages below when any is missing (OVN 23.03), the OVN
# 25.03 root (hack/ovn-root.sh), the Go modules, the kube-apiserver/etcd
# binaries built from source (hack/kube-bins.sh) and the root of the local
# Go builder image the controller image test imports (hack/builder-root.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
pkgs=(openvswitch-switch openvswitch-common ovn-central ovn-host iperf3 tcpdump tshark ethtool iproute2 libpcap-dev dnsmasq-base chromium debootstrap docker.io)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "deps: missing Debian packages ${missing[*]}; run as root or install them" >&2
    exit 1
  fi
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # No package starts a system-wide daemon (OVS, OVN, dockerd, dnsmasq):
  # the testbed and the tests start their own per run ID. A policy-rc.d
  # that refuses every start is in place for the install only.
  policy=/usr/sbin/policy-rc.d
  own_policy=
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || { [[ -z $own_policy ]] || rm -f "$policy"; exit 1; }
  [[ -z $own_policy ]] || rm -f "$policy"
fi
cd "$here"
# Debian 12's golang package is far older than go.mod's go line: the Go
# toolchain is not installed here, so say so plainly instead of failing
# somewhere inside `go mod download`.
want="$(sed -n 's/^go \([0-9.]*\)$/\1/p' go.mod)"
if ! command -v go >/dev/null 2>&1; then
  echo "deps: no go on PATH; install Go ${want} or newer (e.g. into /usr/local/go) and add it to PATH" >&2
  exit 1
fi
have="$(go env GOVERSION)"; have="${have#go}"
if [[ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n1)" != "$want" ]]; then
  echo "deps: go ${have} on PATH is older than go.mod's go ${want}; install a newer Go" >&2
  exit 1
fi
# The kube binaries (CPU: about 11 minutes cold on 2 cores) build in the
# background while the rest downloads (network and disk: the Go modules,
# two debootstrap roots), which saves those minutes on a cold machine.
# tools/kube pins the shared modules at this module's versions, so that
# build also fills the Go build cache with most of what the tests compile.
kube_log="$(mktemp /tmp/nqos-kube-bins.XXXXXX)"
(cd tools/kube && go mod download && "$here/hack/kube-bins.sh") >"$kube_log" 2>&1 &
kube_pid=$!
trap 'kill "$kube_pid" 2>/dev/null || true; rm -f "$kube_log"' EXIT
go mod download
# make test runs the OVN tests on both versions, so both are installed.
"$here/hack/ovn-root.sh" 23.03
"$here/hack/ovn-root.sh" 25.03 >/dev/null
# The controller image test builds from a local Go builder image.
"$here/hack/builder-root.sh" >/dev/null
if ! wait "$kube_pid"; then
  echo "deps: building the kube binaries failed:" >&2
  cat "$kube_log" >&2
  exit 1
fi
grep -v "^/" "$kube_log" >&2 || true
