#!/bin/sh
# Prints the Debian mirror this machine's apt already uses (the first
# "debian" URI of /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list),
# or with "security" its security mirror (the "debian-security" URI, else
# the mirror with "-security" appended). NQOS_DEBIAN_MIRROR and
# NQOS_DEBIAN_SECURITY_MIRROR override. Exits 1 when apt names no mirror.
set -eu
uris() {
  { sed -n 's|^URIs: *||p' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
    sed -n 's|^deb  *\(\[[^]]*\]  *\)\{0,1\}\(http[^ ]*\).*|\2|p' /etc/apt/sources.list 2>/dev/null || true
  } | tr ' ' '\n' | sed 's|/*$||'
}
if [ "${1:-}" = security ]; then
  [ -n "${NQOS_DEBIAN_SECURITY_MIRROR:-}" ] && { echo "$NQOS_DEBIAN_SECURITY_MIRROR"; exit 0; }
  m=$(uris | grep '/debian-security$' | head -n1 || true)
  [ -n "$m" ] || m="$("$0")-security"
else
  [ -n "${NQOS_DEBIAN_MIRROR:-}" ] && { echo "$NQOS_DEBIAN_MIRROR"; exit 0; }
  m=$(uris | grep '/debian$' | head -n1 || true)
fi
[ -n "$m" ] || { echo "debian-mirror: apt names no Debian mirror; set NQOS_DEBIAN_MIRROR" >&2; exit 1; }
echo "$m"
