#!/usr/bin/env bash
# Installs the OVN/OVS build the project runs for one OVN version and prints
# the directory that holds it.
#
#   hack/ovn-root.sh 23.03   the host's Debian 12 packages (hack/deps.sh
#                            installs them); checks ovn-northd is 23.03 and
#                            prints nothing.
#   hack/ovn-root.sh 25.03   Debian 13 (trixie) OVN 25.03 / OVS 3.5 in a
#                            minimal root under the cache directory
#                            ${XDG_CACHE_HOME:-$HOME/.cache}/nqos/ovn-25.03:
#                              root/  debootstrap --variant=minbase trixie, then
#                                     ovn-central ovn-host openvswitch-switch
#                              bin/   one wrapper per OVN/OVS program: it runs
#                                     the root's binary with the root's dynamic
#                                     loader and libraries on the host's
#                                     filesystem (no chroot), so put bin/ first
#                                     on PATH to use this build
#                              complete  the versions installed, written last
#                            Built once (as root, ~1 min, ~240 MiB) in a
#                            temporary directory renamed into place when
#                            complete; later calls print the directory.
#
# Environment: NQOS_DEBIAN_MIRROR, NQOS_DEBIAN_SECURITY_MIRROR (default: the
# mirrors this machine's apt uses, hack/debian-mirror.sh).
set -euo pipefail

# The programs the project runs; each gets a wrapper in bin/.
programs=(ovsdb-server ovsdb-tool ovsdb-client ovs-vsctl ovs-vswitchd ovs-appctl ovs-ofctl ovs-dpctl
  ovn-northd ovn-controller ovn-nbctl ovn-sbctl ovn-trace ovn-appctl)

usage() { echo "usage: $0 23.03|25.03" >&2; exit 2; }
[[ $# -eq 1 ]] || usage
version=$1

case "$version" in
  23.03)
    got="$(ovn-northd --version 2>/dev/null | head -n1 || true)"
    if [[ "$got" != "ovn-northd 23.03."* ]]; then
      echo "ovn-root: OVN 23.03 is the host's Debian 12 packages (hack/deps.sh installs them); ovn-northd --version says '${got:-nothing}'" >&2
      exit 1
    fi
    exit 0
    ;;
  25.03) suite=trixie ;;
  *) echo "ovn-root: OVN version '$version': want 23.03 or 25.03" >&2; exit 2 ;;
esac

cache="${XDG_CACHE_HOME:-$HOME/.cache}/nqos"
dir="$cache/ovn-$version"

complete() {
  local d=$1 p
  [[ -s "$d/complete" ]] || return 1
  for p in "${programs[@]}"; do [[ -x "$d/bin/$p" ]] || return 1; done
}

if complete "$dir"; then
  echo "$dir"
  exit 0
fi
if [[ -e "$dir" ]]; then
  echo "ovn-root: $dir exists but is incomplete (no 'complete' stamp or a wrapper missing); remove it and run again" >&2
  exit 1
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "ovn-root: building $dir needs root (debootstrap, chroot)" >&2
  exit 1
fi

case "$(uname -m)" in
  x86_64) triple=x86_64-linux-gnu; loader=ld-linux-x86-64.so.2 ;;
  aarch64) triple=aarch64-linux-gnu; loader=ld-linux-aarch64.so.1 ;;
  *) echo "ovn-root: machine $(uname -m) not supported" >&2; exit 1 ;;
esac

mirror="$("$(dirname "$0")/debian-mirror.sh")"
security="$("$(dirname "$0")/debian-mirror.sh" security)"

if ! command -v debootstrap >/dev/null 2>&1; then
  echo "ovn-root: installing debootstrap" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.ovn-$version.XXXXXX")"
root="$tmp/root"

# unmount_all removes every mount below the temporary directory (debootstrap
# and the maintainer scripts mount /proc and /sys there); cleanup removes
# the directory only once nothing is mounted below it.
unmount_all() {
  local m
  for m in $(awk -v t="$tmp/" 'index($2, t) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount "$m" || umount -l "$m" || true
  done
}
cleanup() {
  unmount_all
  if awk -v t="$tmp/" 'index($2, t) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    echo "ovn-root: mounts remain below $tmp; not removing it" >&2
    return
  fi
  rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

start=$SECONDS
echo "ovn-root: debootstrap $suite from $mirror into $root (first time only, ~1 min)" >&2
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$tmp/debootstrap.log" 2>&1 || {
  tail -n 20 "$tmp/debootstrap.log" >&2; exit 1; }
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security $suite-security main
EOF
# Maintainer scripts must not start services.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
mount -t proc "nqos-ovn-root-proc" "$root/proc"
chroot "$root" apt-get update -qq
chroot "$root" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends ovn-central ovn-host openvswitch-switch >"$tmp/apt.log" 2>&1 || {
  tail -n 20 "$tmp/apt.log" >&2; exit 1; }
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/*
umount "$root/proc"
unmount_all

# The loader and every program must be regular files: an absolute symlink
# (ovs-vswitchd goes through /etc/alternatives) resolves to the host's
# files from outside the root.
libdir="$root/usr/lib/$triple"
[[ -f "$libdir/$loader" && ! -L "$libdir/$loader" ]] || {
  echo "ovn-root: $libdir/$loader is not a regular file" >&2; exit 1; }
mkdir "$tmp/bin"
for p in "${programs[@]}"; do
  rel=""
  if [[ $p == ovs-vswitchd ]]; then
    rel=usr/lib/openvswitch-switch/ovs-vswitchd
  else
    for d in usr/sbin usr/bin; do
      if [[ -f "$root/$d/$p" && ! -L "$root/$d/$p" ]]; then rel="$d/$p"; break; fi
    done
  fi
  if [[ -z "$rel" || ! -f "$root/$rel" || -L "$root/$rel" ]]; then
    echo "ovn-root: $p: no regular file in $root (usr/sbin, usr/bin)" >&2
    exit 1
  fi
  cat >"$tmp/bin/$p" <<EOF
#!/bin/sh
# $p of the OVN $version root next to this directory, run with that root's
# dynamic loader and libraries (no chroot: paths are the host's).
d=\${0%/bin/*}
exec "\$d/root/usr/lib/$triple/$loader" --library-path "\$d/root/usr/lib/$triple:\$d/root/usr/lib" "\$d/root/$rel" "\$@"
EOF
  chmod 755 "$tmp/bin/$p"
done

# The wrappers must run the root's build, not the host's.
northd="$("$tmp/bin/ovn-northd" --version | head -n1)"
vswitchd="$("$tmp/bin/ovs-vswitchd" --version | head -n1)"
if [[ "$northd" != "ovn-northd $version."* ]]; then
  echo "ovn-root: $suite's ovn-northd is '$northd', not $version" >&2
  exit 1
fi
for f in share/ovn/ovn-nb.ovsschema share/ovn/ovn-sb.ovsschema share/openvswitch/vswitch.ovsschema; do
  [[ -f "$root/usr/$f" ]] || { echo "ovn-root: $root/usr/$f missing" >&2; exit 1; }
done
printf '%s\n%s\nsuite %s\nbuilt in %ss\n' "$northd" "$vswitchd" "$suite" "$((SECONDS - start))" >"$tmp/complete"
rm -f "$tmp/debootstrap.log" "$tmp/apt.log"
mv -T "$tmp" "$dir"
trap - EXIT
echo "ovn-root: OVN $version ready in $dir ($((SECONDS - start)) s): $northd, $vswitchd" >&2
echo "$dir"
