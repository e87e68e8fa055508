#!/usr/bin/env bash
# Run by nqos-kind inside a node for the datapath check: owns the network
# namespace nqos-check and the veth pair nqck0 (on br-int, bound to the
# logical port PORT by external_ids:iface-id) / nqck1 (in the namespace,
# with MAC and IP/24).
#   port.sh add PORT MAC IP
#   port.sh del
set -euo pipefail
ns=nqos-check
case "$1" in
  add)
    port="$2" mac="$3" ip="$4"
    ip netns add "$ns"
    ip link add nqck0 type veth peer name nqck1
    ip link set nqck1 netns "$ns"
    ip -n "$ns" link set nqck1 address "$mac"
    ip -n "$ns" addr add "$ip/24" dev nqck1
    ip -n "$ns" link set lo up
    ip -n "$ns" link set nqck1 up
    ip link set nqck0 up
    ovs-vsctl --timeout=30 add-port br-int nqck0 -- set Interface nqck0 external_ids:iface-id="$port"
    ;;
  del)
    ovs-vsctl --timeout=30 --if-exists del-port br-int nqck0
    if ip link show nqck0 >/dev/null 2>&1; then ip link del nqck0; fi
    if ip netns list | grep -qw "$ns"; then ip netns del "$ns"; fi
    ;;
  *) echo "usage: port.sh add PORT MAC IP | del" >&2; exit 2 ;;
esac
