#!/usr/bin/env bash
# Builds CoreDNS, the cluster DNS of each real node (internal/local/realnode), from its released
# module, pinned in tools/coredns: a nested module whose main.go compiles in only the plugins a
# node's Corefile uses (bind, errors, cache, kubernetes), so its dependencies stay out of
# the main module and the build skips CoreDNS's dozens of other plugins and their cloud SDKs.
# The binary goes into a cache outside the checkout keyed by that pin. Prints the bin folder on
# stdout; progress goes to stderr.
#
#   tools/build-coredns.sh            build if needed, print the bin folder
#   tools/build-coredns.sh --print    print the bin folder the pin maps to, build nothing
set -euo pipefail

VERSION=v1.15.0
BUILD_REV=1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/lib.sh
source "$here/lib.sh"

# The key covers every input that changes the binary: the pins, the plugin list (main.go),
# BUILD_REV and the Go version.
key=$( { cat "$here/coredns/go.mod" "$here/coredns/go.sum" "$here/coredns/main.go"; echo "$BUILD_REV"; go env GOVERSION; } | sha256sum | cut -c1-12)
bin="$cache_root/coredns-$VERSION-$key/bin"

if [[ "${1:-}" == "--print" ]]; then echo "$bin"; exit 0; fi
if [[ -x "$bin/coredns" ]]; then echo "$bin"; exit 0; fi

mkdir -p "$bin"
tmp=$(mktemp -d "$bin/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

pkg=github.com/flotilla/flotilla/tools/coredns
total=$( (cd "$here/coredns" && GOFLAGS=-mod=mod go list -deps .) | wc -l)
say "[coredns] building CoreDNS $VERSION with the plugins in tools/coredns/main.go (a cold build, downloads included, takes about 2.5 minutes on 2 cores)"
if ! (cd "$here/coredns" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -v -trimpath -o "$tmp/coredns" .) 2> >(progress coredns "$total"); then
  die "building CoreDNS ($pkg) failed (see the compiler output above); the cache in $bin was left as it was"
fi
rm -f "${bin:?}/coredns"
mv "$tmp/coredns" "$bin/"
say "CoreDNS $VERSION ready in $bin"
echo "$bin"
