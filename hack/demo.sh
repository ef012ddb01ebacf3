#!/usr/bin/env bash
# The demo: bring up the default fleet (or use the one already running), run a GPU training Job
# on the gpu-east spoke until it completes, and show where it ran. Run it with `make demo`.
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

kc=$($flotilla dev kubeconfig gpu-east)
step "GPU nodes on gpu-east"
kubectl --kubeconfig "$kc" get nodes -L nvidia.com/gpu.product,nvidia.com/gpu.count

step "Run a 2 x 8-GPU training Job on gpu-east"
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
