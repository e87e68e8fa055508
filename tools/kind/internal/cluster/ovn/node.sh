#!/usr/bin/env bash
# Run by nqos-kind inside every node: owns Open vSwitch and ovn-controller
# there, on the userspace (netdev) datapath, since the kernel has no
# openvswitch module. It starts ovsdb-server and ovs-vswitchd
# (/var/lib/openvswitch, /run/openvswitch), sets the chassis external_ids,
# and makes br-ex, a netdev bridge with eth0 as its port that takes over
# eth0's IPv4 address, MAC and routes: userspace geneve routes through the
# OVS bridge that holds the encap IP. The kernel's own copy of what eth0
# receives is dropped (raw PREROUTING, NOARP): ovs-vswitchd reads eth0 and
# hands the node's traffic to br-ex. Userspace TSO is on (see below). Then
# ovn-controller, which creates br-int as a netdev bridge. Each step already
# done is kept.
#   node.sh NODE_NAME NODE_IP CENTRAL_IP
set -euo pipefail
name="$1" ip="$2" central="$3"
run=/run/openvswitch db=/var/lib/openvswitch log=/var/log/openvswitch
ovnrun=/run/ovn ovnlog=/var/log/ovn
mkdir -p "$run" "$db" "$log" "$ovnrun" "$ovnlog"

# running PIDFILE: PIDFILE names a live process.
running() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

if ! running "$run/ovsdb-server.pid"; then
  [[ -f "$db/conf.db" ]] || ovsdb-tool create "$db/conf.db" /usr/share/openvswitch/vswitch.ovsschema
  ovsdb-server "$db/conf.db" --detach --no-chdir --pidfile="$run/ovsdb-server.pid" \
    --log-file="$log/ovsdb-server.log" --remote="punix:$run/db.sock" \
    --remote=db:Open_vSwitch,Open_vSwitch,manager_options
fi
vsctl() { ovs-vsctl --db="unix:$run/db.sock" --timeout=30 "$@"; }
vsctl --no-wait init
# virtio-net headers on eth0's packet socket and the taps keep the checksum
# state of partially checksummed TCP (from the host and from veths), which
# would otherwise be forwarded with a wrong checksum; read at start only
vsctl --no-wait set Open_vSwitch . other_config:userspace-tso-enable=true
if ! running "$run/ovs-vswitchd.pid"; then
  ovs-vswitchd "unix:$run/db.sock" --detach --no-chdir --pidfile="$run/ovs-vswitchd.pid" \
    --log-file="$log/ovs-vswitchd.log"
fi
vsctl set Open_vSwitch . \
  external_ids:system-id="$name" external_ids:hostname="$name" \
  external_ids:ovn-remote="tcp:$central:6642" \
  external_ids:ovn-encap-type=geneve external_ids:ovn-encap-ip="$ip" \
  external_ids:ovn-bridge-datapath-type=netdev \
  external_ids:ovn-bridge-mappings=physnet:br-ex

if ! ip -4 -o addr show dev br-ex 2>/dev/null | grep -q " $ip/"; then
  mac="$(cat /sys/class/net/eth0/address)"
  cidr="$(ip -4 -o addr show dev eth0 | awk -v ip="$ip" '{split($4, a, "/"); if (a[1] == ip) print $4}')"
  [[ -n "$cidr" ]] || { echo "node.sh: $ip is on neither eth0 nor br-ex" >&2; exit 1; }
  mapfile -t routes < <(ip -4 route show dev eth0 | grep -v 'proto kernel')
  vsctl --may-exist add-br br-ex -- set Bridge br-ex datapath_type=netdev \
    other_config:hwaddr="$mac" -- --may-exist add-port br-ex eth0
  iptables -t raw -C PREROUTING -i eth0 -j DROP 2>/dev/null ||
    iptables -t raw -I PREROUTING -i eth0 -j DROP
  ip addr del "$cidr" dev eth0
  ip link set eth0 arp off
  ip addr add "$cidr" dev br-ex
  ip link set br-ex up
  for r in "${routes[@]}"; do
    read -ra words <<<"$r"
    ip route replace "${words[@]}" dev br-ex
  done
fi

if ! running "$ovnrun/ovn-controller.pid"; then
  ovn-controller "unix:$run/db.sock" --detach --no-chdir --pidfile="$ovnrun/ovn-controller.pid" \
    --log-file="$ovnlog/ovn-controller.log"
fi
