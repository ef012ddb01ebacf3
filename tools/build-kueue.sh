#!/usr/bin/env bash
# Builds the Kueue manager (sigs.k8s.io/kueue/cmd/kueue) Flotilla runs locally, from the module
# pinned in tools/kueue (a nested module, so Kueue's dependencies stay out of the main module),
# into a cache outside the checkout keyed by that pin, and copies next to it the CRDs and webhook
# manifests the module ships. A second run, or a fresh clone with the same pin, finds them there
# and does nothing. Prints the cache folder on stdout; progress goes to stderr.
#
#   tools/build-kueue.sh            build if needed, print the bin folder
#   tools/build-kueue.sh --print    print the bin folder the pin maps to, build nothing
#
# The folder holds: kueue (the manager), crds/ (config/components/crd/bases) and
# webhook-manifests.yaml (config/components/webhook/manifests.yaml).
#
# One change to Kueue's source (the module cache is untouched: the script copies cmd/kueue/main.go
# out of the module, patches the copy and builds it against this module's pins): with
# internalCertManagement disabled, Kueue v0.17.0 reads its metrics serving certificate from the
# fixed folder /etc/kueue/metrics/certs and has no setting to move it. The patch makes
# cmd/kueue take that folder from a flag, --metrics-cert-dir (default: upstream's folder), so a
# local manager runs without root.
set -euo pipefail

KUEUE_VERSION=v0.17.0
# Bump when a change to this script changes what it produces (flags, files), so caches rebuild.
BUILD_REV=3

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/lib.sh
source "$here/lib.sh" # say, die, progress, cache_root; fails without Go

key=$( { cat "$here/kueue/go.mod" "$here/kueue/go.sum"; echo "$BUILD_REV"; go env GOVERSION; } | sha256sum | cut -c1-12)
bin="$cache_root/kueue-$KUEUE_VERSION-$key/bin"

if [[ "${1:-}" == "--print" ]]; then echo "$bin"; exit 0; fi

want=(kueue crds webhook-manifests.yaml)
missing=()
for b in "${want[@]}"; do [[ -e "$bin/$b" ]] || missing+=("$b"); done
if [[ ${#missing[@]} -eq 0 ]]; then echo "$bin"; exit 0; fi

mkdir -p "$bin"
tmp=$(mktemp -d "$bin/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT


pkg=sigs.k8s.io/kueue/cmd/kueue
dir=$(cd "$here/kueue" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
main="$dir/cmd/kueue/main.go"
upstream='metricsCertPath := "/etc/kueue/metrics/certs"'
[[ $(grep -cF "$upstream" "$main") == 1 ]] || die "kueue $KUEUE_VERSION: $main no longer has exactly one line $upstream; update the patch in this script"
mkdir -p "$tmp/src"
sed "s|$upstream|metricsCertPath := *flotillaMetricsCertDir|" "$main" > "$tmp/src/main.go"
cat > "$tmp/src/flotilla_paths.go" <<'GO'
package main

import "flag"

// Added by Flotilla's tools/build-kueue.sh: the folder of the metrics serving certificate.
var flotillaMetricsCertDir = flag.String("metrics-cert-dir", "/etc/kueue/metrics/certs",
	"The folder holding tls.crt and tls.key for the metrics server when internalCertManagement is disabled.")
GO
# Second patch: MultiKueue's clients of the workers get client-go's default rate limit (5
# requests a second, bursts of 10) and no setting of Kueue v0.17.0 changes that; it caps
# dispatching at about 1.3 jobs a second (bench/README.md). Go refuses overlays of files in the
# module cache, so the build uses a patched copy of Kueue's module (a replace directive in a copy
# of tools/kueue/go.mod; the module cache is untouched). Two flags set the limit; their defaults
# are client-go's, so without them Kueue behaves as released.
src="$tmp/kueue-src"
cp -r "$dir" "$src"
chmod -R u+w "$src"
mk="$src/pkg/controller/admissionchecks/multikueue/multikueuecluster.go"
mkline='	return client.NewWithWatch(restConfig, options)'
[[ $(grep -cxF "$mkline" "$mk") == 1 ]] || die "kueue $KUEUE_VERSION: multikueuecluster.go no longer has exactly one line '$mkline'; update the patch in this script"
awk -v line="$mkline" '$0 == line { print "\trestConfig.QPS, restConfig.Burst = float32(*flotillaRemoteQPS), *flotillaRemoteBurst" } { print }' "$mk" > "$mk.new"
mv "$mk.new" "$mk"
cat > "$(dirname "$mk")/flotilla_remote.go" <<'GO'
package multikueue

import "flag"

// Added by Flotilla's tools/build-kueue.sh: the rate limit of MultiKueue's clients of the workers.
var (
	flotillaRemoteQPS = flag.Float64("multikueue-remote-qps", 5,
		"Requests a second MultiKueue's client of each worker may make (client-go's default).")
	flotillaRemoteBurst = flag.Int("multikueue-remote-burst", 10,
		"Burst of MultiKueue's client of each worker (client-go's default).")
)
GO
mod="$tmp/mod"
mkdir -p "$mod"
cp "$here/kueue/go.mod" "$here/kueue/go.sum" "$mod/"
printf '\nreplace sigs.k8s.io/kueue => %s\n' "$src" >> "$mod/go.mod"
mv "$tmp/src/main.go" "$tmp/src/flotilla_paths.go" "$mod/"
total=$( (cd "$here/kueue" && go list -deps "$pkg") | wc -l)
say "[kueue] building $pkg $KUEUE_VERSION (first build takes about 7 minutes on 2 cores; later builds only link)"
ldflags="-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION -X sigs.k8s.io/kueue/pkg/version.GitCommit=$KUEUE_VERSION -X sigs.k8s.io/kueue/pkg/version.BuildDate=1970-01-01T00:00:00Z"
if ! (cd "$here/kueue" && CGO_ENABLED=0 go build -C "$mod" -v -trimpath -ldflags "$ldflags" -o "$tmp/kueue" ./main.go ./flotilla_paths.go) 2> >(progress kueue "$total"); then
  die "building kueue failed (see the compiler output above); the cache in $bin was left as it was"
fi

[[ -d "$dir/config/components/crd/bases" ]] || die "kueue $KUEUE_VERSION has no config/components/crd/bases"
mkdir -p "$tmp/crds"
cp "$dir"/config/components/crd/bases/kueue.x-k8s.io_*.yaml "$tmp/crds/"
cp "$dir/config/components/webhook/manifests.yaml" "$tmp/webhook-manifests.yaml"
chmod -R u+w "$tmp"

for b in "${want[@]}"; do
  [[ -e "$tmp/$b" ]] || die "the build finished but $b is missing from $tmp"
  rm -rf "${bin:?}/$b"
  mv -f "$tmp/$b" "$bin/$b"
done
say "Kueue manager ready in $bin"
echo "$bin"
