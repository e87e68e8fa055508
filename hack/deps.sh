#!/usr/bin/env bash
# Installs what nqos's tests and testbed need on a Debian 12 machine (as
# root): the Debian packages below when any is missing (OVN 23.03), the OVN
# 25.03 root (hack/ovn-root.sh), the Go modules, and the kube-apiserver/etcd
# binaries built from source (hack/kube-bins.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
pkgs=(openvswitch-switch openvswitch-common ovn-central ovn-host iperf3 tcpdump tshark ethtool iproute2 libpcap-dev dnsmasq-base chromium)
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
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The Debian packages may start system-wide OVS/OVN daemons; the testbed runs
# its own per run ID and never uses those, so they are left alone.
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
go mod download
(cd tools/kube && go mod download)
"$here/hack/kube-bins.sh" >/dev/null
# make test runs the OVN tests on both versions, so both are installed.
"$here/hack/ovn-root.sh" 23.03
"$here/hack/ovn-root.sh" 25.03 >/dev/null
