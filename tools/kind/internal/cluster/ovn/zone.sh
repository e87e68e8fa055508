#!/usr/bin/env bash
# Run by nqos-kind inside every node of an interconnect cluster, after
# central.sh has started the node's own NB, SB and ovn-northd: owns the
# node's zone name and where its ovn-controller reads. The NB is named
# after the zone (NB_Global name and options:name, which ovnkube's zone
# controller waits for before it writes) and ovn-controller moves to the
# node's own SB over the local unix socket.
#   zone.sh ZONE
set -euo pipefail
zone="$1"
ovn-nbctl --db=unix:/run/ovn/ovnnb_db.sock --timeout=10 set NB_Global . name="$zone" options:name="$zone"
ovs-vsctl --db=unix:/run/openvswitch/db.sock --timeout=30 set Open_vSwitch . \
  external_ids:ovn-remote=unix:/run/ovn/ovnsb_db.sock
