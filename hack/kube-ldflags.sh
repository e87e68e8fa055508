# Sourced by hack/kube-bins.sh and hack/kind/bins.sh (bash): prints the
# go build -ldflags of a Kubernetes release binary, static and stamped with
# the release's version as the upstream build does.
#   kube_ldflags VERSION   e.g. kube_ldflags v1.37.2
kube_ldflags() {
  local v="$1" minor p flags="-s -w"
  minor="${v#v1.}"; minor="${minor%%.*}"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    flags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$flags"
}
