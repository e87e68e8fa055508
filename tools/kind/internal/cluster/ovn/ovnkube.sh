#!/usr/bin/env bash
# Run by nqos-kind inside a node: owns one OVN-Kubernetes ovnkube process
# there, in ROLE:
#   master           the central topology: one --init-master for every
#                    node, without interconnect (control plane only);
#   cluster-manager  interconnect: the cluster manager (node and network
#                    IDs, subnets, the NetworkQoS status aggregate; control
#                    plane only);
#   controller       interconnect: the node's zone controller
#                    (--init-ovnkube-controller NODE --zone NODE), writing
#                    only this node's NB.
# Multi-network is on (the localnet secondary-network controllers create
# the launcher pods' LSPs) and every optional feature controller off but
# NetworkQoS, which NQOS (on or off) switches: off, nqos is the only
# NetworkQoS controller; on, ovnkube's serves the networks with IPAM
# beside nqos (hack/kind/coexist.sh). It talks to the node's OVN over the
# local unix sockets and to the API server with /etc/kubernetes/ovnkube.conf
# (the admin kubeconfig with the control plane's IP, written by
# nqos-kind), and needs the namespace ovn-kubernetes for its leases. The
# binary is /usr/local/bin/ovnkube (copied in by nqos-kind); the role's
# pidfile, log and NetworkQoS setting are /run/ovn-kubernetes/NAME.pid,
# /var/log/ovn-kubernetes/NAME.log and /run/ovn-kubernetes/NAME.network-qos,
# NAME being ovnkube-cluster-manager for the cluster manager, else ovnkube.
# A process already running with the same setting is kept (with RESTART
# "restart": stopped and started again); one with the other setting is
# stopped first (SIGTERM, then waited for, at most 30 s).
#   ovnkube.sh ROLE NODE_NAME [on|off] [restart]
set -euo pipefail
role="$1" node="$2" nqos="${3:-off}" restart="${4:-}"
bin=/usr/local/bin/ovnkube run=/run/ovn-kubernetes log=/var/log/ovn-kubernetes
kubeconfig=/etc/kubernetes/ovnkube.conf
case "$nqos" in
  on) nqos_args=(--enable-network-qos) ;;
  off) nqos_args=() ;;
  *) echo "ovnkube.sh: NetworkQoS setting $nqos: want on or off" >&2; exit 2 ;;
esac
name=ovnkube
case "$role" in
  master) role_args=(--init-master "$node" --enable-interconnect=false) ;;
  cluster-manager) name=ovnkube-cluster-manager
    role_args=(--init-cluster-manager "$node" --enable-interconnect) ;;
  controller) role_args=(--init-ovnkube-controller "$node" --zone "$node" --enable-interconnect) ;;
  *) echo "ovnkube.sh: role $role: want master, cluster-manager or controller" >&2; exit 2 ;;
esac
mkdir -p "$run" "$log"
pidfile="$run/$name.pid"

if [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  if [[ "$(cat "$run/$name.network-qos" 2>/dev/null || echo off)" == "$nqos" && "$restart" != restart ]]; then
    exit 0
  fi
  pid="$(cat "$pidfile")"
  kill "$pid"
  for _ in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "ovnkube.sh: ovnkube $pid still runs 30 s after SIGTERM" >&2; exit 1
  fi
  rm -f "$pidfile"
fi
kubectl --kubeconfig="$kubeconfig" create namespace ovn-kubernetes --dry-run=client -o yaml |
  kubectl --kubeconfig="$kubeconfig" apply -f - >/dev/null
echo "$nqos" >"$run/$name.network-qos"
# setsid: the process outlives this docker exec session
setsid "$bin" \
  "${role_args[@]}" \
  --enable-multi-network \
  "${nqos_args[@]}" \
  --nb-address unix:/run/ovn/ovnnb_db.sock \
  --sb-address unix:/run/ovn/ovnsb_db.sock \
  --k8s-kubeconfig "$kubeconfig" \
  --cluster-subnets 10.128.0.0/14/23 \
  --k8s-service-cidrs 10.96.0.0/16 \
  --gateway-mode shared \
  --ovn-config-namespace ovn-kubernetes \
  --metrics-bind-address "" --ovn-metrics-bind-address "" --healthz-bind-address "" \
  --pidfile "$pidfile" \
  --loglevel 4 \
  --logfile "$log/$name.log" \
  </dev/null >>"$log/$name.stdout" 2>&1 &
