#!/usr/bin/env bash
# Builds OCM's governance-policy-propagator, the peer of Flotilla's policy propagator in
# `make bench-policy`, from its released module (pinned in tools/ocmpolicy, a nested module so
# its dependencies stay out of the main module), unchanged, into a cache outside the checkout
# keyed by that pin, and copies next to it the CRDs the module ships that Flotilla does not
# serve (PolicyAutomation), which its manager watches. Prints the cache folder on stdout;
# progress goes to stderr.
#
#   tools/build-ocm-propagator.sh            build if needed, print the bin folder
#   tools/build-ocm-propagator.sh --print    print the bin folder the pin maps to, build nothing
set -euo pipefail

VERSION=v0.19.0
BUILD_REV=1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/lib.sh
source "$here/lib.sh"

key=$( { cat "$here/ocmpolicy/go.mod" "$here/ocmpolicy/go.sum"; echo "$BUILD_REV"; go env GOVERSION; } | sha256sum | cut -c1-12)
bin="$cache_root/ocm-propagator-$VERSION-$key/bin"

if [[ "${1:-}" == "--print" ]]; then echo "$bin"; exit 0; fi
if [[ -x "$bin/governance-policy-propagator" && -d "$bin/crds" ]]; then echo "$bin"; exit 0; fi

mkdir -p "$bin"
tmp=$(mktemp -d "$bin/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

pkg=open-cluster-management.io/governance-policy-propagator
total=$( (cd "$here/ocmpolicy" && GOFLAGS=-mod=mod go list -deps "$pkg") | wc -l)
say "[ocm-propagator] building $pkg $VERSION (first build takes about 2 minutes on 2 cores)"
if ! (cd "$here/ocmpolicy" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -v -trimpath -o "$tmp/governance-policy-propagator" "$pkg") 2> >(progress ocm-propagator "$total"); then
  die "building OCM's propagator failed (see the compiler output above); the cache in $bin was left as it was"
fi
dir=$(cd "$here/ocmpolicy" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' "$pkg")
mkdir -p "$tmp/crds"
cp "$dir/deploy/crds/policy.open-cluster-management.io_policyautomations.yaml" "$tmp/crds/"
chmod -R u+w "$tmp"
rm -rf "${bin:?}/governance-policy-propagator" "${bin:?}/crds"
mv "$tmp/governance-policy-propagator" "$tmp/crds" "$bin/"
say "OCM's governance-policy-propagator $VERSION ready in $bin"
echo "$bin"
