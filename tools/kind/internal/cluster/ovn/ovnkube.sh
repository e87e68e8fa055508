#!/usr/bin/env bash
# Run by nqos-kind inside the control-plane node: owns OVN-Kubernetes'
# ovnkube there, one process in master mode without interconnect, with
# multi-network on (its localnet secondary-network controller creates the
# launcher pods' LSPs) and every optional feature controller off (the
# NetworkQoS controller is nqos's own). It talks to OVN central over the
# local unix sockets and to the API server with the admin kubeconfig, and
# needs the namespace ovn-kubernetes for its lease. The binary is
# /usr/local/bin/ovnkube (copied in by nqos-kind), the pidfile
# /run/ovn-kubernetes/ovnkube.pid, the log /var/log/ovn-kubernetes/ovnkube.log.
# A process already running is kept.
#   ovnkube.sh NODE_NAME
set -euo pipefail
node="$1"
bin=/usr/local/bin/ovnkube run=/run/ovn-kubernetes log=/var/log/ovn-kubernetes
kubeconfig=/etc/kubernetes/admin.conf
mkdir -p "$run" "$log"

if [[ -f "$run/ovnkube.pid" ]] && kill -0 "$(cat "$run/ovnkube.pid")" 2>/dev/null; then
  exit 0
fi
kubectl --kubeconfig="$kubeconfig" create namespace ovn-kubernetes --dry-run=client -o yaml |
  kubectl --kubeconfig="$kubeconfig" apply -f - >/dev/null
# setsid: the process outlives this docker exec session
setsid "$bin" \
  --init-master "$node" \
  --enable-interconnect=false \
  --enable-multi-network \
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
  </dev/null >"$log/ovnkube.stdout" 2>&1 &
