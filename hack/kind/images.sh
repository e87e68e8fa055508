#!/usr/bin/env bash
# Owns the KinD images in the private engine (DOCKER_HOST from dockerd.sh):
#   nqos-kind/trixie:13-<id>     the debootstrap root (rootfs.sh), imported;
#                                <id> names its package list
#   nqos-kind/base:v0.33.0-<id>  kind's base image (base/Dockerfile)
#   nqos-kind/<component>:<ver>  kube-apiserver, kube-controller-manager,
#                                kube-scheduler, etcd, pause, FROM scratch
#   nqos-kind/node:v1.37.2-<id>  the node: base + kubeadm/kubelet/kubectl,
#                                CNI plugins, crictl and the component images
#                                preloaded in its containerd as registry.k8s.io;
#                                /usr/bin/kubeadm is node/kubeadm (waits for the CRI)
# Assembled by hand like kind's node-image build, which always pulls.
# Each image is built once; the marker file images.built in the kind cache
# lists what was built, and an image is rebuilt only when the marker or the
# engine lacks it. Prints the node image reference.
set -euo pipefail
source "$(dirname "$0")/env.sh"
here="$kind_here"
cache="$kind_cache"
etcd_tag="3.7.0-0"
pause_tag="3.10.2"
marker="$cache/images.built"
bin=""
# need_bins: build (or find) the binaries, only when an image needs them.
need_bins() { [[ -n "$bin" ]] || bin="$("$here/hack/kind/bins.sh")"; }
export DOCKER_BUILDKIT=0
mkdir -p "$cache"
touch "$marker"

# the root's package list (and so OVS/OVN in the node) tags every image on it
tarball="$("$here/hack/kind/rootfs.sh")"
root_id="$(basename "$tarball" .tar)"; root_id="${root_id#trixie-root-}"
root_image="nqos-kind/trixie:13-$root_id"
base_image="nqos-kind/base:${kind_version}-$root_id"
node_image="nqos-kind/node:${k8s_version}-$root_id"
# component name, image tag, name kubeadm pulls
components=(
  "kube-apiserver $k8s_version registry.k8s.io/kube-apiserver:$k8s_version"
  "kube-controller-manager $k8s_version registry.k8s.io/kube-controller-manager:$k8s_version"
  "kube-scheduler $k8s_version registry.k8s.io/kube-scheduler:$k8s_version"
  "etcd $etcd_tag registry.k8s.io/etcd:$etcd_tag"
  "pause $pause_tag registry.k8s.io/pause:$pause_tag"
)

built() {
  grep -qxF "$1" "$marker" && docker image inspect "$1" >/dev/null 2>&1
}
mark() {
  grep -qxF "$1" "$marker" || echo "$1" >>"$marker"
}

work="$(mktemp -d)"
builder=""
cleanup() {
  if [[ -n "$builder" ]]; then docker rm -f "$builder" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if ! built "$root_image"; then
  docker import "$tarball" "$root_image" >/dev/null
  mark "$root_image"
fi

if ! built "$base_image"; then
  echo "kind images: building $base_image" >&2
  kindsrc="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json sigs.k8s.io/kind@$kind_version | jq -r .Dir)"
  ctx="$work/base"
  mkdir -p "$ctx"
  cp -r "$kindsrc/images/base/files" "$ctx/files"
  chmod -R u+w "$ctx/files"
  chmod -R a+rX "$ctx/files"
  chmod 755 "$ctx"/files/usr/local/bin/* "$ctx"/files/kind/bin/*
  mv "$ctx/files/usr/local/bin/entrypoint" "$ctx/files/usr/local/bin/entrypoint.kind"
  install -m 755 "$here/hack/kind/base/entrypoint" "$ctx/files/usr/local/bin/entrypoint"
  cp "$here/hack/kind/base/Dockerfile" "$ctx/Dockerfile"
  docker build -q --build-arg ROOT_IMAGE="$root_image" -t "$base_image" "$ctx" >/dev/null
  mark "$base_image"
fi

# component_binary NAME DIR: put NAME's static binary into DIR.
component_binary() {
  local name="$1" dir="$2"
  if [[ "$name" != pause ]]; then need_bins; cp "$bin/$name" "$dir/$name"; return; fi
  local src
  src="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$k8s_version" | jq -r .Dir)"
  gcc -Os -static -DVERSION="v$pause_tag" -o "$dir/pause" "$src/build/pause/linux/pause.c"
  strip "$dir/pause"
}

for c in "${components[@]}"; do
  read -r name tag _ <<<"$c"
  ref="nqos-kind/$name:$tag"
  built "$ref" && continue
  echo "kind images: building $ref" >&2
  ctx="$work/$name"
  mkdir -p "$ctx"
  component_binary "$name" "$ctx"
  entry="/usr/local/bin/$name"
  [[ "$name" == pause ]] && entry="/pause"
  printf 'FROM scratch\nCOPY %s %s\nENV PATH=/usr/local/bin\nENTRYPOINT ["%s"]\n' \
    "$name" "$entry" "$entry" >"$ctx/Dockerfile"
  docker build -q -t "$ref" "$ctx" >/dev/null
  mark "$ref"
done

# in_builder COMMAND...: run COMMAND inside the node being assembled.
in_builder() { docker exec -i "$builder" "$@"; }

# wait_for DESCRIPTION SECONDS COMMAND...: poll COMMAND until it succeeds.
wait_for() {
  local what="$1" secs="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then echo "kind images: $what not reached within ${secs}s" >&2; return 1; fi
    sleep 0.2
  done
}

if ! built "$node_image"; then
  echo "kind images: assembling $node_image" >&2
  need_bins
  builder="nqos-kind-build-$$"
  docker run -d --name "$builder" --entrypoint=sleep "$base_image" infinity >/dev/null
  for b in kubelet kubectl; do docker cp "$bin/$b" "$builder:/usr/bin/$b"; done
  in_builder mkdir -p /usr/libexec/nqos-kind
  docker cp "$bin/kubeadm" "$builder:/usr/libexec/nqos-kind/kubeadm"
  docker cp "$here/hack/kind/node/kubeadm" "$builder:/usr/bin/kubeadm"
  docker cp "$bin/crictl" "$builder:/usr/local/bin/crictl"
  for p in "$bin"/cni/*; do docker cp "$p" "$builder:/opt/cni/bin/"; done
  echo "$k8s_version" | in_builder tee /kind/version >/dev/null
  in_builder sh -c 'containerd >/var/log/containerd-build.log 2>&1 & echo $! >/run/containerd-build.pid'
  wait_for "containerd in $builder" 60 in_builder ctr version
  for c in "${components[@]}"; do
    read -r name tag want <<<"$c"
    docker save "nqos-kind/$name:$tag" |
      in_builder ctr -n k8s.io images import --label=io.cri-containerd.pinned=pinned \
        --all-platforms --no-unpack --digests -
    in_builder ctr -n k8s.io images tag --force "docker.io/nqos-kind/$name:$tag" "$want" >/dev/null
  done
  in_builder ctr -n k8s.io images ls -q | grep -v '^sha256:' >&2
  pid="$(in_builder cat /run/containerd-build.pid)"
  in_builder kill "$pid"
  # the builder's PID 1 (sleep) reaps nothing: exited means gone or a zombie
  wait_for "exit of containerd in $builder" 60 in_builder sh -c \
    "s=\$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$pid/status 2>/dev/null); [ -z \"\$s\" ] || [ \"\$s\" = Z ]"
  in_builder rm -f /var/log/containerd-build.log /run/containerd-build.pid
  docker commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' \
    "$builder" "$node_image" >/dev/null
  mark "$node_image"
fi
echo "$node_image"
