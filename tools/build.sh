#!/usr/bin/env bash
# Builds the real Kubernetes binaries Flotilla runs locally (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, kwok; kubelet, kube-proxy and a pause
# program for real nodes) from the Go modules pinned in this
# folder, into a cache outside the checkout keyed by those pins. A second run, or a fresh clone
# with the same pins, finds them there and does nothing. Prints the cache folder on stdout;
# progress goes to stderr.
#
#   tools/build.sh            build if needed, print the bin folder
#   tools/build.sh --print    print the bin folder the pins map to, build nothing
set -euo pipefail

KUBE_VERSION=v1.37.2
KUBE_MAJOR=1
KUBE_MINOR=37
KWOK_VERSION=v0.8.0
# Bump when a change to this script changes what it produces (flags, files), so caches rebuild.
BUILD_REV=1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/lib.sh
source "$here/lib.sh" # say, die, progress, cache_root; fails without Go

# The key covers every input that changes the binaries: the pins (go.mod/go.sum of both
# modules), the etcd main, BUILD_REV and the Go version.
key=$( { cat "$here/go.mod" "$here/go.sum" "$here/kwok/go.mod" "$here/kwok/go.sum" "$here/cmd/etcd/main.go" "$here/cmd/pause/main.go"
         echo "$BUILD_REV"; go env GOVERSION; } | sha256sum | cut -c1-12)
bin="$cache_root/k8s-$KUBE_VERSION-kwok-$KWOK_VERSION-$key/bin"

if [[ "${1:-}" == "--print" ]]; then echo "$bin"; exit 0; fi

# kubelet, kube-proxy and pause make the local fleet's real nodes (flotilla dev up --real-nodes).
want=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy pause kwok kwok-stages.yaml)
missing=()
for b in "${want[@]}"; do [[ -e "$bin/$b" ]] || missing+=("$b"); done
if [[ ${#missing[@]} -eq 0 ]]; then echo "$bin"; exit 0; fi

mkdir -p "$bin"
tmp=$(mktemp -d "$bin/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT


build() { # label dir ldflags packages...
  local label=$1 dir=$2 ldflags=$3; shift 3
  local total
  total=$( (cd "$dir" && go list -deps "$@") | wc -l)
  say "[$label] building $* (first build takes about 15 minutes on 2 cores; later builds only link)"
  if ! (cd "$dir" && CGO_ENABLED=0 go build -v -trimpath -ldflags "$ldflags" -o "$tmp/" "$@") 2> >(progress "$label" "$total"); then
    die "building $label failed (see the compiler output above); the cache in $bin was left as it was"
  fi
}

v() { # ldflags for Kubernetes' version variables, in both packages that report one
  local p out=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    out+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=$KUBE_MAJOR -X $p.gitMinor=$KUBE_MINOR"
    out+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$out"
}

build kubernetes "$here" "-s -w $(v)" \
  ./cmd/etcd ./cmd/pause k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kubelet \
  k8s.io/kubernetes/cmd/kube-proxy
build kwok "$here/kwok" "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok

# kwok simulates kubelets by stages; take the ones its module ships: nodes become Ready at once and
# renew their leases (so kube-controller-manager's node lifecycle keeps them Ready), and pods go
# through create, init, ready, complete (for Job pods, delay set by annotation) and delete.
kwokdir=$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
  pod/general/pod-create.yaml pod/general/pod-init-container-running.yaml \
  pod/general/pod-init-container-completed.yaml pod/general/pod-ready.yaml \
  pod/general/pod-complete.yaml pod/general/pod-delete.yaml; do
  [[ -f "$kwokdir/kustomize/stage/$f" ]] || die "kwok $KWOK_VERSION has no stage $f"
  printf -- '---\n' ; cat "$kwokdir/kustomize/stage/$f"
done > "$tmp/kwok-stages.yaml"

for b in "${want[@]}"; do
  [[ -e "$tmp/$b" ]] || die "the build finished but $b is missing from $tmp"
  mv -f "$tmp/$b" "$bin/$b"
done
say "Kubernetes binaries ready in $bin"
echo "$bin"
