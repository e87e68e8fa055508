#!/usr/bin/env bash
# Owns the controller image cache: one `docker save` of the image built
# from build/Containerfile, named by a hash of the files the Containerfile
# copies as they are in this tree (go.mod, go.sum, build, api,
# cmd/nqos-controller, internal). internal/controller/deploytest's image
# test writes it after the image passed its checks; hack/kind/deploy.sh
# loads it instead of building the same image a second time.
#   controller-image-cache.sh hash   print the source hash
#   controller-image-cache.sh path   print the cache file for this tree
# The directory is $NQOS_IMAGE_CACHE, else ~/.cache/nqos/controller-image.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
src_hash() {
  (cd "$here" && git ls-files -z -- go.mod go.sum build api cmd/nqos-controller internal |
    xargs -0 sha256sum | sha256sum | cut -c1-16)
}
dir="${NQOS_IMAGE_CACHE:-${HOME}/.cache/nqos/controller-image}"
case "${1:-}" in
  hash) src_hash ;;
  path) echo "$dir/nqos-controller-$(src_hash).tar" ;;
  *) echo "usage: controller-image-cache.sh hash|path" >&2; exit 2 ;;
esac
