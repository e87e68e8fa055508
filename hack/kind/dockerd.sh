#!/usr/bin/env bash
# Owns the private Docker engine the KinD clusters run in: its daemon,
# data root (/var/lib/nqos-kind-docker, kept across runs so images stay
# warm), exec root, pidfile and socket (/run/nqos-kind-docker) and its bridge
# nqoskind0 (172.31.254.1/24). The engine runs with --iptables=false and
# --ip-masq=false, so it adds no iptables rule to the host; containers reach
# each other and the host over their bridges, not the outside.
#   dockerd.sh up    start it unless running; prints the DOCKER_HOST to use
#   dockerd.sh down  stop it and delete its bridge
#   dockerd.sh env   print the DOCKER_HOST
set -euo pipefail
state="${NQOS_KIND_DOCKER_RUN:-/run/nqos-kind-docker}"
data="${NQOS_KIND_DOCKER_DATA:-/var/lib/nqos-kind-docker}"
bridge="nqoskind0"
bridge_cidr="172.31.254.1/24"
sock="$state/docker.sock"
pidfile="$state/dockerd.pid"
host="unix://$sock"

running() {
  [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

# wait_for DESCRIPTION SECONDS COMMAND...: poll COMMAND until it succeeds.
wait_for() {
  local what="$1" secs="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      echo "dockerd.sh: $what not reached within ${secs}s (log: $state/dockerd.log)" >&2
      return 1
    fi
    sleep 0.2
  done
}

up() {
  if running; then echo "$host"; return 0; fi
  mkdir -p "$state/exec" "$data"
  if ! ip link show "$bridge" >/dev/null 2>&1; then
    ip link add "$bridge" type bridge
    ip addr add "$bridge_cidr" dev "$bridge"
    ip link set "$bridge" up
  fi
  dockerd --data-root "$data" --exec-root "$state/exec" --pidfile "$pidfile" \
    --host "$host" --bridge "$bridge" --iptables=false --ip-masq=false \
    --storage-driver overlay2 --exec-opt native.cgroupdriver=cgroupfs \
    >"$state/dockerd.log" 2>&1 &
  wait_for "docker engine at $host" 60 docker -H "$host" version
  echo "$host"
}

down() {
  if running; then
    local pid; pid="$(cat "$pidfile")"
    kill "$pid"
    wait_for "exit of dockerd $pid" 60 bash -c "! kill -0 $pid"
  fi
  # kind's network (br-*) is removed by down.sh while the engine runs
  if ip link show "$bridge" >/dev/null 2>&1; then ip link del "$bridge"; fi
  # dockerd leaves mounts below its exec root (netns/default, an nsfs
  # binding): unmount every mount under $state, deepest first
  local m
  for m in $(awk -v p="$state/" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r); do
    umount "$m"
  done
  if mountpoint -q "$state/exec" 2>/dev/null; then umount "$state/exec"; fi
  rm -rf "$state"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  env) echo "$host" ;;
  *) echo "usage: dockerd.sh up|down|env" >&2; exit 2 ;;
esac
