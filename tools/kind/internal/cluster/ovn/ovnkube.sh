#!/usr/bin/env bash
# Run by nqos-kind inside the control-plane node: owns OVN-Kubernetes'
# ovnkube there, one process in master mode without interconnect, with
# multi-network on (its localnet secondary-network controller creates the
# launcher pods' LSPs) and every optional feature controller off but its
# NetworkQoS controller, which NQOS (on or off) switches: off, nqos is the
# only NetworkQoS controller; on, ovnkube's serves the networks with IPAM
# beside nqos (the coexistence run, hack/kind/coexist.sh). It talks to OVN
# central over the local unix sockets and to the API server with the admin
# kubeconfig, and needs the namespace ovn-kubernetes for its lease. The
# binary is /usr/local/bin/ovnkube (copied in by nqos-kind), the pidfile
# /run/ovn-kubernetes/ovnkube.pid, the log /var/log/ovn-kubernetes/ovnkube.log,
# the NetworkQoS setting of the running process in
# /run/ovn-kubernetes/network-qos. A process already running with the same
# setting is kept (with RESTART "restart": stopped and started again); one
# with the other setting is stopped first (SIGTERM, then waited for, at
# most 30 s).
#   ovnkube.sh NODE_NAME [on|off] [restart]
set -euo pipefail
node="$1" nqos="${2:-off}" restart="${3:-}"
bin=/usr/local/bin/ovnkube run=/run/ovn-kubernetes log=/var/log/ovn-kubernetes
kubeconfig=/etc/kubernetes/admin.conf
case "$nqos" in
  on) nqos_args=(--enable-network-qos) ;;
  off) nqos_args=() ;;
  *) echo "ovnkube.sh: NetworkQoS setting $nqos: want on or off" >&2; exit 2 ;;
esac
mkdir -p "$run" "$log"

if [[ -f "$run/ovnkube.pid" ]] && kill -0 "$(cat "$run/ovnkube.pid")" 2>/dev/null; then
  if [[ "$(cat "$run/network-qos" 2>/dev/null || echo off)" == "$nqos" && "$restart" != restart ]]; then
    exit 0
  fi
  pid="$(cat "$run/ovnkube.pid")"
  kill "$pid"
  for _ in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "ovnkube.sh: ovnkube $pid still runs 30 s after SIGTERM" >&2; exit 1
  fi
  rm -f "$run/ovnkube.pid"
fi
kubectl --kubeconfig="$kubeconfig" create namespace ovn-kubernetes --dry-run=client -o yaml |
  kubectl --kubeconfig="$kubeconfig" apply -f - >/dev/null
echo "$nqos" >"$run/network-qos"
# setsid: the process outlives this docker exec session
setsid "$bin" \
  --init-master "$node" \
  --enable-interconnect=false \
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
  --pidfile "$run/ovnkube.pid" \
  --loglevel 4 \
  --logfile "$log/ovnkube.log" \
  </dev/null >>"$log/ovnkube.stdout" 2>&1 &
