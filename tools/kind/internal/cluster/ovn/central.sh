#!/usr/bin/env bash
# Run by nqos-kind inside the control-plane node, and on interconnect in
# every node (its zone; zone.sh names it): owns OVN central there,
# the Northbound and Southbound ovsdb-servers (unix sockets in /run/ovn,
# TCP on the node IP, 6641 and 6642) and ovn-northd. Databases in
# /var/lib/ovn, logs in /var/log/ovn. A daemon already running is kept.
# The Northbound also serves its own Connection rows with the key,
# certificate and CA of its SSL row, the OVN way (ovn-ctl does the same):
# `nqos-kind deploy` adds the ssl listener there (ovn-nbctl set-ssl,
# set-connection); until then there is none.
#   central.sh NODE_IP
set -euo pipefail
ip="$1"
run=/run/ovn db=/var/lib/ovn log=/var/log/ovn
mkdir -p "$run" "$db" "$log"

# running NAME: NAME's pidfile names a live process.
running() { [[ -f "$run/$1.pid" ]] && kill -0 "$(cat "$run/$1.pid")" 2>/dev/null; }

# dbserver NAME SCHEMA PORT [OPTION...]: a standalone ovsdb-server for
# database NAME, with the extra ovsdb-server options given.
dbserver() {
  local name="$1" schema="$2" port="$3"
  shift 3
  running "$name" && return 0
  [[ -f "$db/$name.db" ]] || ovsdb-tool create "$db/$name.db" "$schema"
  ovsdb-server "$db/$name.db" --detach --no-chdir \
    --pidfile="$run/$name.pid" --unixctl="$run/$name.ctl" --log-file="$log/$name.log" \
    --remote="punix:$run/$name.sock" --remote="ptcp:$port:$ip" "$@"
}

dbserver ovnnb_db /usr/share/ovn/ovn-nb.ovsschema 6641 \
  --remote=db:OVN_Northbound,NB_Global,connections \
  --private-key=db:OVN_Northbound,SSL,private_key \
  --certificate=db:OVN_Northbound,SSL,certificate \
  --ca-cert=db:OVN_Northbound,SSL,ca_cert
dbserver ovnsb_db /usr/share/ovn/ovn-sb.ovsschema 6642
ovn-nbctl --db="unix:$run/ovnnb_db.sock" init
ovn-sbctl --db="unix:$run/ovnsb_db.sock" init
if ! running ovn-northd; then
  ovn-northd --detach --no-chdir --pidfile="$run/ovn-northd.pid" --log-file="$log/ovn-northd.log" \
    --ovnnb-db="unix:$run/ovnnb_db.sock" --ovnsb-db="unix:$run/ovnsb_db.sock"
fi
