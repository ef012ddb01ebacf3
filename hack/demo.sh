#!/usr/bin/env bash
# The demo: bring up the default fleet (or use the one already running), switch on the built-in
# resource-usage add-on (live free GPUs per model on every cluster), let the hub place a GPU
# training job (a Placement that needs 2 nodes with 8 free H100s each), explain the choice,
# deliver the Job to the chosen cluster through the hub (a ManifestWorkReplicaSet over the
# placement) and show its completion as the hub sees it; then let another long job take half of
# each gpu-east node and show the same placement report, with the numbers, that no cluster fits
# (16 H100s free in total, no node with 8), and pick gpu-east again once the GPUs are free. Run it with `make demo`.
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

step "Add-ons: switch on the built-in resource-usage add-on everywhere (as clusteradm addon enable)"
for i in $(seq 1 30); do
  # The hub creates the ClusterManagementAddOn of each built-in add-on when it starts.
  if $flotilla addon enable resource-usage --clusters gpu-east,gpu-west,edge-1 --kubeconfig "$hub"; then break; fi
  [[ $i -eq 30 ]] && exit 1
  sleep 1
done
usages=0
for _ in $(seq 1 60); do
  usages=$(kubectl --kubeconfig "$hub" get resourceusages -A -o name 2>/dev/null | wc -l)
  [[ "$usages" -ge 3 ]] && break
  sleep 1
done
$flotilla get addons -A --kubeconfig "$hub"
if [[ "$usages" -lt 3 ]]; then
  echo "the resource-usage add-on reported no figures within 60 s" >&2
  exit 1
fi
echo
echo "each agent reports its cluster's live free capacity (ResourceUsage), per GPU model and per node:"
$flotilla get clusters --kubeconfig "$hub"
echo
echo "and the hub derives OCM's resource-usage-score from it, normalised across the fleet:"
kubectl --kubeconfig "$hub" get addonplacementscores -A --field-selector metadata.name=resource-usage-score \
  -o custom-columns='CLUSTER:.metadata.namespace,GPU-CLUSTER:.status.scores[?(@.name=="gpuClusterAvailable")].value,GPU-BEST-NODE:.status.scores[?(@.name=="gpuNodeAvailable")].value,VALID-UNTIL:.status.validUntil'

step "Place a training job: 2 nodes with 8 free H100s each (examples/demo/placement.yaml)"
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

step "Deliver a 2 x 8-GPU training Job through the hub (examples/demo/training-work.yaml)"
echo "a ManifestWorkReplicaSet over the placement: the hub writes a ManifestWork into $chosen's namespace,"
echo "the agent on $chosen applies the Job, and reports its status back to the hub"
# A rerun starts clean: deleting the set deletes its works, and each agent deletes the Job it applied.
kubectl --kubeconfig "$hub" delete manifestworkreplicaset -n ml-team gpu-train --ignore-not-found --wait=true >/dev/null
kubectl --kubeconfig "$hub" apply -f examples/demo/training-work.yaml
complete=""
for _ in $(seq 1 180); do
  complete=$(kubectl --kubeconfig "$hub" get manifestwork -n "$chosen" gpu-train \
    -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}' 2>/dev/null || true)
  [[ "$complete" == True ]] && break
  sleep 1
done
$flotilla get works -c "$chosen" --kubeconfig "$hub"
if [[ "$complete" != True ]]; then
  echo "the training Job did not complete within 180 s:" >&2
  $flotilla describe work "$chosen/gpu-train" --kubeconfig "$hub" >&2 || true
  exit 1
fi

step "What the hub knows: the work's conditions and the Job's status feedback (flotilla describe work $chosen/gpu-train)"
$flotilla describe work "$chosen/gpu-train" --kubeconfig "$hub"
succeeded=$(kubectl --kubeconfig "$hub" get manifestwork -n "$chosen" gpu-train \
  -o jsonpath='{.status.resourceStatus.manifests[0].statusFeedback.values[?(@.name=="succeeded")].fieldValue.integer}')
echo
echo "the hub sees Job demo-gpu-train on $chosen: ${succeeded:-0}/2 workers succeeded"

step "Where it ran (read on $chosen for the curious; the hub did the delivering)"
kubectl --kubeconfig "$kc" get job -n default demo-gpu-train
kubectl --kubeconfig "$kc" get pods -n default -l job-name=demo-gpu-train -o wide

step "Another team's long run takes half of each gpu-east node, through the hub (examples/demo/fill-gpu-east.yaml: 4 x 4 H100)"
# The training run is done: its rollout is removed (the agent deletes its Job), and the
# placement is left to show what it sees.
kubectl --kubeconfig "$hub" delete manifestworkreplicaset -n ml-team gpu-train --wait=true >/dev/null
kubectl --kubeconfig "$hub" apply -f examples/demo/fill-gpu-east.yaml
start=$(date +%s%N)
moved=""
for _ in $(seq 1 120); do
  moved=$(kubectl --kubeconfig "$hub" get placement -n ml-team h100-training \
    -o jsonpath='{.status.conditions[?(@.type=="PlacementSatisfied")].status}' 2>/dev/null || true)
  [[ "$moved" == False ]] && break
  sleep 0.5
done
if [[ "$moved" != False ]]; then
  echo "the placement still fits gpu-east 60 s after half its GPUs were taken:" >&2
  $flotilla explain placement ml-team/h100-training --kubeconfig "$hub" >&2 || true
  exit 1
fi
ms=$((($(date +%s%N) - start) / 1000000))
printf 'the placement reacted %d.%d s after the work was applied (delivery, the Job scheduled, its pods running, the figures, the decision)\n' \
  $((ms / 1000)) $((ms % 1000 / 100))
$flotilla get clusters --kubeconfig "$hub"
$flotilla get placements -n ml-team --kubeconfig "$hub"

step "Why nothing fits now: gpu-east has 16 free H100s, enough in total, but no node with 8 (gang fit)"
$flotilla explain placement ml-team/h100-training --kubeconfig "$hub"

step "The long run is stopped (the ManifestWork deleted): gpu-east's GPUs are free again, and the placement picks it"
kubectl --kubeconfig "$hub" delete manifestwork -n gpu-east big-run --wait=true >/dev/null
chosen=""
for _ in $(seq 1 120); do
  chosen=$(kubectl --kubeconfig "$hub" get placementdecisions -n ml-team \
    -l cluster.open-cluster-management.io/placement=h100-training \
    -o jsonpath='{.items[*].status.decisions[*].clusterName}' 2>/dev/null || true)
  [[ "$chosen" == gpu-east ]] && break
  sleep 0.5
done
if [[ "$chosen" != gpu-east ]]; then
  echo "the placement did not pick gpu-east again within 60 s of its GPUs being freed:" >&2
  $flotilla explain placement ml-team/h100-training --kubeconfig "$hub" >&2 || true
  exit 1
fi
$flotilla get placements -n ml-team --kubeconfig "$hub"

step "Fleet status"
$flotilla dev status

cat <<MSG

The fleet keeps running. Try:
  export PATH=$bins:\$PATH
  kubectl --kubeconfig "\$($flotilla dev kubeconfig gpu-west)" get nodes
Stop it with: $flotilla dev down   (or make down)
MSG
