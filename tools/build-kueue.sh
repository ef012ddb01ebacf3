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
# Three changes to Kueue's source, each described where it is made below (the module cache is
# untouched: the script patches copies and builds them against this module's pins):
#   1. --metrics-cert-dir: with internalCertManagement disabled, Kueue v0.17.0 reads its metrics
#      serving certificate from the fixed folder /etc/kueue/metrics/certs; the flag moves it
#      (default: upstream's folder), so a local manager runs without root;
#   2. --multikueue-remote-qps/-burst: the rate limit of MultiKueue's clients of the workers;
#   3. stopping a MultiKueue Job clears the status counters copied from its worker, so that a
#      lost worker's jobs can be requeued on a Kubernetes 1.36+ manager.
set -euo pipefail

KUEUE_VERSION=v0.17.0
# Bump when a change to this script changes what it produces (flags, files), so caches rebuild.
BUILD_REV=5

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


# one_line FILE LINE: a patch below edits LINE, which must be in FILE exactly once.
one_line() {
  [[ $(grep -cxF "$2" "$1") == 1 ]] || die "kueue $KUEUE_VERSION: $(basename "$1") no longer has exactly one line '$2'; update the patch in this script"
}

pkg=sigs.k8s.io/kueue/cmd/kueue
dir=$(cd "$here/kueue" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
main="$dir/cmd/kueue/main.go"
upstream='metricsCertPath := "/etc/kueue/metrics/certs"'
one_line "$main" "		$upstream"
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
# Both ways MultiKueue builds a worker's client get the limit: from a kubeconfig Secret, and from a
# ClusterProfile (a copy of the configuration Kueue keeps, which it compares on each reconcile).
mk="$src/pkg/controller/admissionchecks/multikueue/multikueuecluster.go"
mkline='	return client.NewWithWatch(restConfig, options)'
cpline='		return client.NewWithWatch(config.RestConfig, options)'
one_line "$mk" "$mkline"
one_line "$mk" "$cpline"
awk -v line="$mkline" -v cpline="$cpline" '
  $0 == line { print "\trestConfig.QPS, restConfig.Burst = float32(*flotillaRemoteQPS), *flotillaRemoteBurst" }
  $0 == cpline {
    print "\t\trestConfig := rest.CopyConfig(config.RestConfig)"
    print "\t\trestConfig.QPS, restConfig.Burst = float32(*flotillaRemoteQPS), *flotillaRemoteBurst"
    print "\t\treturn client.NewWithWatch(restConfig, options)"
    next
  }
  { print }' "$mk" > "$mk.new"
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
# Third patch: with Kubernetes 1.36 or later on the manager (MutableSchedulingDirectivesForSuspendedJobs,
# beta and on), a Job's pod template may change only while status.active is 0. On the manager a
# MultiKueue Job's status is a copy of its worker's, so a Job running on a worker that is lost
# keeps active: 1. Kueue v0.17.0 stops such a Job by suspending it, clearing status.startTime and
# restoring its template, and the API server refuses the restore ("field is immutable") until
# something else rewrites the status: the workload stays evicted and is not requeued. The patch
# clears the copied counters along with startTime, for Jobs managed by MultiKueue only (no pod of
# theirs runs on the manager); other Jobs are left as released. docs/kueue.md, "Failover".
jc="$src/pkg/controller/jobs/job/job_controller.go"
cond='	if j.Status.StartTime != nil {'
reset='			j.Status.StartTime = nil'
one_line "$jc" "$cond"
one_line "$jc" "$reset"
awk -v cond="$cond" -v reset="$reset" '
  $0 == cond { print "	if j.Status.StartTime != nil || flotillaCopiedCounts(j) {"; next }
  $0 == reset { print; print "			flotillaClearCopiedCounts(j)"; next }
  { print }' "$jc" > "$jc.new"
mv "$jc.new" "$jc"
cat > "$(dirname "$jc")/flotilla_stop.go" <<'GO'
package job

import (
	"k8s.io/utils/ptr"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Added by Flotilla's tools/build-kueue.sh. A Job managed by MultiKueue runs no pod on the
// manager: its status counters are copies of its worker's. Stopping it clears them with
// startTime, so that the API server lets its template be restored.

// flotillaMultiKueue says whether MultiKueue manages the Job.
func flotillaMultiKueue(j *Job) bool {
	return ptr.Deref(j.Spec.ManagedBy, "") == kueue.MultiKueueControllerName
}

// flotillaCopiedCounts says whether the Job is MultiKueue's and has counters copied from a worker.
func flotillaCopiedCounts(j *Job) bool {
	return flotillaMultiKueue(j) && (j.Status.Active != 0 || ptr.Deref(j.Status.Ready, 0) != 0 || ptr.Deref(j.Status.Terminating, 0) != 0)
}

// flotillaClearCopiedCounts zeroes the copied counters of a MultiKueue Job.
func flotillaClearCopiedCounts(j *Job) {
	if flotillaMultiKueue(j) {
		j.Status.Active = 0
		if j.Status.Ready != nil {
			j.Status.Ready = ptr.To[int32](0)
		}
		if j.Status.Terminating != nil {
			j.Status.Terminating = ptr.To[int32](0)
		}
	}
}
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
