#!/usr/bin/env bash
# The real-nodes demo: a local fleet whose hub and spokes each have one real node (kubelet,
# containerd, a pod network; docs/local-fleets.md), Flotilla's image built without Docker and
# imported into every node, the hub installed on its node by `flotilla init --install` and an
# agent on each spoke's node by `flotilla join --install`, exactly as docs/install.md tells a
# user; then a ManifestWork delivers a Job whose container really runs on edge-1's real node, and
# its result comes back to the hub as status feedback. Needs root, containerd, runc and the CNI
# plugins (hack/prereqs/prereqs.sh test names what is missing). Run it with `make demo-real`;
# stop the fleet with `flotilla dev down`.
set -euo pipefail
cd "$(dirname "$0")/.."

flotilla=bin/flotilla
bins=$(tools/build.sh)
export PATH="$bins:$PATH"
# Every real node runs CoreDNS, its cluster's DNS; flotilla dev up finds it here.
FLOTILLA_COREDNS_BIN=$(tools/build-coredns.sh)
export FLOTILLA_COREDNS_BIN
arch=$(go env GOARCH)
image=bin/images/flotilla-linux-$arch.tar

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

if $flotilla dev status >/dev/null 2>&1; then
  echo "a fleet is already running; stop it first with: $flotilla dev down" >&2
  exit 1
fi

step "Flotilla's image for linux/$arch, built without Docker (make image)"
make --no-print-directory image IMAGE_PLATFORMS="linux/$arch" | tail -n 3

step "A local fleet with one real node per cluster (examples/demo/real-nodes.yaml)"
$flotilla dev up -f examples/demo/real-nodes.yaml --register=false --load-image "$image"
hub=$($flotilla dev kubeconfig hub)
for c in hub gpu-east edge-1; do
  echo "-- $c"
  kubectl --kubeconfig "$($flotilla dev kubeconfig $c)" get nodes -L flotilla.io/real-node,nvidia.com/gpu.product
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "The hub, installed from its image onto the hub's real node (flotilla init --install)"
$flotilla init --install --image-pull-policy Never --kubeconfig "$hub" --bootstrap-kubeconfig "$work/bootstrap.kubeconfig" --wait 3m
kubectl --kubeconfig "$hub" get pods -n open-cluster-management-hub -o wide

step "An agent on each spoke's real node (flotilla join --install), accepted on the hub"
for c in gpu-east edge-1; do
  # The spoke's simulated nodes would take the agent's pod and run nothing: pin it to the real one.
  $flotilla join --install --cluster-name "$c" --bootstrap-kubeconfig "$work/bootstrap.kubeconfig" \
    --kubeconfig "$($flotilla dev kubeconfig $c)" --image-pull-policy Never \
    --set "nodeSelector.kubernetes\.io/hostname=$c-node" --wait 3m
  $flotilla accept "$c" --wait 2m --kubeconfig "$hub"
  kubectl --kubeconfig "$($flotilla dev kubeconfig $c)" get pods -n open-cluster-management-agent -o wide
done
for _ in $(seq 1 60); do
  available=$(kubectl --kubeconfig "$hub" get managedclusters -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="ManagedClusterConditionAvailable")].status}{"\n"}{end}' | grep -c True || true)
  [[ "$available" -ge 2 ]] && break
  sleep 1
done
$flotilla get clusters --kubeconfig "$hub"

step "A Job delivered by a ManifestWork runs a real container on edge-1's real node"
ref=$($flotilla version | awk '/^image:/ {print $2}')
cat > "$work/work.yaml" <<YAML
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: hello-real, namespace: edge-1}
spec:
  workload:
    manifests:
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: hello-real, namespace: default}
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            nodeSelector: {kubernetes.io/hostname: edge-1-node}
            containers:
            - {name: hello, image: "$ref", imagePullPolicy: Never, args: [version]}
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, namespace: default, name: hello-real}
    feedbackRules:
    - type: JSONPaths
      jsonPaths: [{name: succeeded, path: .status.succeeded}]
YAML
kubectl --kubeconfig "$hub" apply -f "$work/work.yaml"
succeeded=""
for _ in $(seq 1 120); do
  succeeded=$(kubectl --kubeconfig "$hub" get manifestwork -n edge-1 hello-real \
    -o jsonpath='{.status.resourceStatus.manifests[0].statusFeedback.values[?(@.name=="succeeded")].fieldValue.integer}')
  [[ "$succeeded" == 1 ]] && break
  sleep 1
done
if [[ "$succeeded" != 1 ]]; then
  echo "the Job's status did not come back to the hub within 120 s" >&2
  kubectl --kubeconfig "$hub" get manifestwork -n edge-1 hello-real -o yaml >&2
  exit 1
fi
echo "on the hub, the ManifestWork's status feedback: succeeded=$succeeded"
edge=$($flotilla dev kubeconfig edge-1)
kubectl --kubeconfig "$edge" get pods -l job-name=hello-real -o wide
echo "the container's own output, from edge-1's real node:"
kubectl --kubeconfig "$edge" logs job/hello-real

echo
echo "Stop the fleet (its nodes, containers, mounts and namespaces) with: $flotilla dev down"
