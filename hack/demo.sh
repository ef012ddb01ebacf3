#!/usr/bin/env bash
# The demo: bring up the default fleet (or use the one already running), let the hub place a GPU
# training job (a Placement for one cluster with H100s), explain the choice, run the Job on the
# chosen cluster until it completes, and show where it ran. Run it with `make demo`.
set -euo pipefail
cd "$(dirname "$0")/.."

flotilla=bin/flotilla
bins=$(tools/build.sh)
export PATH="$bins:$PATH"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Local fleet"
if $flotilla dev status >/dev/null 2>&1; then
  echo "a healthy fleet is already running; using it"
else
  $flotilla dev up
fi

hub=$($flotilla dev kubeconfig hub)
step "The spokes, registered with the hub (ManagedClusters with GPU inventory)"
$flotilla get clusters --kubeconfig "$hub"
$flotilla get clustersets --kubeconfig "$hub"

step "Place a training job: the hub picks one cluster with H100s (examples/demo/placement.yaml)"
kubectl --kubeconfig "$hub" apply -f examples/demo/placement.yaml
chosen=""
for _ in $(seq 1 60); do
  chosen=$(kubectl --kubeconfig "$hub" get placementdecisions -n ml-team \
    -l cluster.open-cluster-management.io/placement=h100-training \
    -o jsonpath='{.items[*].status.decisions[*].clusterName}' 2>/dev/null || true)
  [[ -n "$chosen" ]] && break
  sleep 1
done
if [[ -z "$chosen" ]]; then
  echo "the placement chose no cluster within 60 s:" >&2
  $flotilla get placements -n ml-team --kubeconfig "$hub" >&2 || true
  exit 1
fi
$flotilla get placements -n ml-team --kubeconfig "$hub"

step "Why: every cluster, filtered or ranked (flotilla explain placement ml-team/h100-training)"
$flotilla explain placement ml-team/h100-training --kubeconfig "$hub"

kc=$($flotilla dev kubeconfig "$chosen")
step "GPU nodes on $chosen, the chosen cluster"
kubectl --kubeconfig "$kc" get nodes -L nvidia.com/gpu.product,nvidia.com/gpu.count

# Work delivery through the hub (ManifestWork) comes next; until then the Job goes straight to the
# cluster the placement chose.
step "Run a 2 x 8-GPU training Job on $chosen"
kubectl --kubeconfig "$kc" delete job demo-gpu-train --ignore-not-found --wait=true >/dev/null
kubectl --kubeconfig "$kc" apply -f examples/demo/gpu-job.yaml
kubectl --kubeconfig "$kc" wait --for=condition=Complete job/demo-gpu-train --timeout=120s

step "Where it ran"
kubectl --kubeconfig "$kc" get job demo-gpu-train
kubectl --kubeconfig "$kc" get pods -l job-name=demo-gpu-train -o wide

step "Fleet status"
$flotilla dev status

cat <<MSG

The fleet keeps running. Try:
  export PATH=$bins:\$PATH
  kubectl --kubeconfig "\$($flotilla dev kubeconfig gpu-west)" get nodes
Stop it with: $flotilla dev down   (or make down)
MSG
