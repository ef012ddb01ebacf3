#!/usr/bin/env bash
# Builds OCM's placement controller (open-cluster-management.io/ocm's cmd/placement), the peer of
# Flotilla's placement scheduler in `make bench-placement`, from its released module (pinned in
# tools/ocmplacement, a nested module so its dependencies stay out of the main module),
# unchanged, into a cache outside the checkout keyed by that pin. Prints the cache folder on
# stdout; progress goes to stderr.
#
#   tools/build-ocm-placement.sh            build if needed, print the bin folder
#   tools/build-ocm-placement.sh --print    print the bin folder the pin maps to, build nothing
set -euo pipefail

VERSION=v1.2.1
BUILD_REV=1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/lib.sh
source "$here/lib.sh"

key=$( { cat "$here/ocmplacement/go.mod" "$here/ocmplacement/go.sum"; echo "$BUILD_REV"; go env GOVERSION; } | sha256sum | cut -c1-12)
bin="$cache_root/ocm-placement-$VERSION-$key/bin"

if [[ "${1:-}" == "--print" ]]; then echo "$bin"; exit 0; fi
if [[ -x "$bin/placement" ]]; then echo "$bin"; exit 0; fi

mkdir -p "$bin"
tmp=$(mktemp -d "$bin/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

pkg=open-cluster-management.io/ocm/cmd/placement
total=$( (cd "$here/ocmplacement" && GOFLAGS=-mod=mod go list -deps "$pkg") | wc -l)
say "[ocm-placement] building $pkg $VERSION (first build takes about 4 minutes on 2 cores)"
if ! (cd "$here/ocmplacement" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -v -trimpath -o "$tmp/placement" "$pkg") 2> >(progress ocm-placement "$total"); then
  die "building OCM's placement controller failed (see the compiler output above); the cache in $bin was left as it was"
fi
mv "$tmp/placement" "$bin/placement"
say "OCM's placement controller $VERSION ready in $bin"
echo "$bin"
