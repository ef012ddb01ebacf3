#!/usr/bin/env bash
# The Kueue demo: batch GPU Jobs submitted once, to a LocalQueue on the hub, run on the worker
# cluster that a Placement ranks first. It brings up the default fleet with Kueue on every cluster
# (or uses one already running with Kueue), switches on the built-in add-ons resource-usage (live
# free GPUs) and kueue-queues (each worker's Kueue flavors and quotas from its GPU nodes) on the
# GPU spokes, applies examples/kueue (a Placement ranking the training clusters by free GPUs, OCM's
# placement AdmissionCheck and MultiKueue's, the hub's queues), waits until the hub has written the
# MultiKueueConfig and each worker's credentials, submits examples/kueue/jobs.yaml once, and shows
# where each Job went, that it is the first-ranked worker with room, and its completion as the hub
# sees it, with the times measured. Run it with `make demo-kueue`; `make down` stops the fleet.
set -euo pipefail
cd "$(dirname "$0")/.."

flotilla=bin/flotilla
# `make demo-kueue` builds (or finds in the cache) the Kubernetes binaries and Kueue's manager first.
bins=$(tools/build.sh --print)
export PATH="$bins:$PATH"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# secs prints milliseconds as seconds with one decimal.
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# table aligns tab-separated lines in columns.
table() {
  awk -F'\t' '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } if (NF > n) n = NF }
    END { for (r = 1; r <= NR; r++) { line = ""; for (i = 1; i <= n; i++) line = line sprintf("%-" w[i] "s  ", c[r, i]); sub(/ +$/, "", line); print line } }'
}

workers=gpu-east,gpu-west

step "Local fleet with Kueue on every cluster"
if status=$($flotilla dev status -o json 2>/dev/null); then
  clusters=$(grep -c '"role":' <<<"$status" || true)
  kueues=$(grep -A2 '"component": "kueue"' <<<"$status" | grep -c '"running": true' || true)
  if [[ "$kueues" -ne "$clusters" ]]; then
    echo "a fleet is already running, but without Kueue on every cluster ($kueues of $clusters run it)." >&2
    echo "Stop it with \`make down\` (or $flotilla dev down), then run \`make demo-kueue\` again." >&2
    exit 1
  fi
  echo "a healthy fleet with Kueue on every cluster is already running; using it"
elif [[ -n "$status" ]]; then
  $flotilla dev status >&2 || true
  echo "a fleet is already running but is not healthy (above). Stop it with \`make down\`, then run \`make demo-kueue\` again." >&2
  exit 1
else
  $flotilla dev up --with kueue
fi
$flotilla dev status

hub=$($flotilla dev kubeconfig hub)
step "Add-ons on the GPU spokes ($workers): resource-usage (live free GPUs) and kueue-queues (Kueue's queues from the GPU nodes)"
for addon in resource-usage kueue-queues; do
  for i in $(seq 1 30); do
    # The hub creates the ClusterManagementAddOn of each built-in add-on when it starts.
    if $flotilla addon enable "$addon" --clusters "$workers" --kubeconfig "$hub"; then break; fi
    [[ $i -eq 30 ]] && exit 1
    sleep 1
  done
done
for w in ${workers//,/ }; do
  kc=$($flotilla dev kubeconfig "$w")
  active=""
  for _ in $(seq 1 60); do
    active=$(kubectl --kubeconfig "$kc" get clusterqueue cluster-queue \
      -o jsonpath='{.status.conditions[?(@.type=="Active")].status}' 2>/dev/null || true)
    [[ "$active" == True ]] && break
    sleep 1
  done
  if [[ "$active" != True ]]; then
    echo "Kueue on $w has no active ClusterQueue cluster-queue 60 s after kueue-queues was switched on:" >&2
    $flotilla get addons -c "$w" --kubeconfig "$hub" >&2 || true
    kubectl --kubeconfig "$kc" get clusterqueues -o wide >&2 || true
    exit 1
  fi
  echo
  echo "$w: what the kueue-queues add-on wrote for its Kueue (a flavor per GPU model, quotas from the nodes' allocatable)"
  kubectl --kubeconfig "$kc" get resourceflavors -o custom-columns='FLAVOR:.metadata.name,NODE-LABELS:.spec.nodeLabels'
  echo
  { printf 'CLUSTERQUEUE\tFLAVOR\tGPUS\tCPU\tMEMORY\n'
    kubectl --kubeconfig "$kc" get clusterqueue cluster-queue -o jsonpath='{range .spec.resourceGroups[*].flavors[*]}cluster-queue{"\t"}{.name}{"\t"}{.resources[?(@.name=="nvidia.com/gpu")].nominalQuota}{"\t"}{.resources[?(@.name=="cpu")].nominalQuota}{"\t"}{.resources[?(@.name=="memory")].nominalQuota}{"\n"}{end}'
  } | table
  echo
  kubectl --kubeconfig "$kc" get localqueues -A
done
usages=0
for _ in $(seq 1 60); do
  usages=$(kubectl --kubeconfig "$hub" get resourceusages -A -o name 2>/dev/null | wc -l)
  [[ "$usages" -ge 2 ]] && break
  sleep 1
done
if [[ "$usages" -lt 2 ]]; then
  echo "the resource-usage add-on reported no figures within 60 s:" >&2
  $flotilla get addons -A --kubeconfig "$hub" >&2 || true
  exit 1
fi
echo
$flotilla get clusters --kubeconfig "$hub"

step "MultiKueue on the hub, from a Placement (examples/kueue: placement, admission checks, queues)"
kubectl --kubeconfig "$hub" apply -f examples/kueue/placement.yaml -f examples/kueue/admission-checks.yaml -f examples/kueue/queues.yaml
active=""
for _ in $(seq 1 120); do
  active=$(kubectl --kubeconfig "$hub" get admissioncheck gpu-workers \
    -o jsonpath='{.status.conditions[?(@.type=="Active")].status}' 2>/dev/null || true)
  [[ "$active" == True ]] && break
  sleep 1
done
if [[ "$active" != True ]]; then
  echo "the placement AdmissionCheck gpu-workers is not Active 120 s after it was applied:" >&2
  kubectl --kubeconfig "$hub" get admissioncheck gpu-workers -o jsonpath='{.status.conditions}' >&2 || true
  echo >&2
  $flotilla explain placement kueue-system/gpu-workers --kubeconfig "$hub" >&2 || true
  exit 1
fi

step "Why this order: the placement ranks the training clusters by free GPUs (flotilla explain placement kueue-system/gpu-workers)"
$flotilla explain placement kueue-system/gpu-workers --kubeconfig "$hub"

step "What the hub wrote: the MultiKueueConfig (ranked, best first) and a MultiKueueCluster per worker"
ranked=$(kubectl --kubeconfig "$hub" get multikueueconfig gpu-workers -o jsonpath='{.spec.clusters[*]}')
kubectl --kubeconfig "$hub" get admissionchecks -o custom-columns='ADMISSIONCHECK:.metadata.name,CONTROLLER:.spec.controllerName,ACTIVE:.status.conditions[?(@.type=="Active")].status,MESSAGE:.status.conditions[?(@.type=="Active")].message'
echo
kubectl --kubeconfig "$hub" get multikueueconfig gpu-workers -o custom-columns='MULTIKUEUECONFIG:.metadata.name,CLUSTERS (BEST FIRST):.spec.clusters'
echo
mkc=""
for _ in $(seq 1 60); do
  mkc=$(kubectl --kubeconfig "$hub" get multikueueclusters \
    -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Active")].status} {end}' 2>/dev/null || true)
  inactive=0
  for c in $ranked; do
    [[ " $mkc " == *" $c=True "* ]] || inactive=1
  done
  cq=$(kubectl --kubeconfig "$hub" get clusterqueue cluster-queue \
    -o jsonpath='{.status.conditions[?(@.type=="Active")].status}' 2>/dev/null || true)
  [[ $inactive -eq 0 && "$cq" == True ]] && break
  sleep 1
done
kubectl --kubeconfig "$hub" get multikueueclusters -o custom-columns='MULTIKUEUECLUSTER:.metadata.name,ACTIVE:.status.conditions[?(@.type=="Active")].status,CLUSTERPROFILE:.spec.clusterSource.clusterProfileRef.name,MESSAGE:.status.conditions[?(@.type=="Active")].message'
if [[ $inactive -ne 0 || "$cq" != True ]]; then
  echo "Kueue on the hub did not find every worker of [$ranked] active, or its ClusterQueue cluster-queue is not active ($cq), within 60 s" >&2
  kubectl --kubeconfig "$hub" get clusterqueue cluster-queue -o jsonpath='{.status.conditions}' >&2 || true
  exit 1
fi
echo
echo "each MultiKueueCluster names the worker's ClusterProfile in kueue-system; Kueue gets a short-lived token"
echo "of the worker's ManagedServiceAccount multikueue from \`flotilla credentials-plugin\` (least-privilege rules"
echo "the hub delivered to the worker; docs/kueue.md, Worker credentials through ClusterProfiles), never a kubeconfig"

step "Submit batch GPU Jobs once, to the hub's LocalQueue default/user-queue (examples/kueue/jobs.yaml)"
mapfile -t jobs < <(kubectl --kubeconfig "$hub" create --dry-run=client -f examples/kueue/jobs.yaml -o name)
jobs=("${jobs[@]#job.batch/}")
# A rerun starts clean: deleting the Jobs (and, in the foreground, their Workloads) makes
# MultiKueue remove their copies from the workers. Then wait until the workers run none of them
# and the figures and the placement's order have settled (the same for 2 s), so that the hub's
# choice below is made from the same figures that this script reads.
kubectl --kubeconfig "$hub" delete -f examples/kueue/jobs.yaml --ignore-not-found --cascade=foreground --wait=true >/dev/null
selector="batch.kubernetes.io/job-name in ($(IFS=,; echo "${jobs[*]}"))"
settled="" previous=""
for _ in $(seq 1 30); do
  pods=0
  for w in ${workers//,/ }; do
    # A failed read counts as a pod (one line), so that it is read again.
    n=$({ kubectl --kubeconfig "$($flotilla dev kubeconfig "$w")" get pods -n default -l "$selector" -o name 2>/dev/null || echo failed; } | wc -l)
    pods=$((pods + n))
  done
  figures="$(kubectl --kubeconfig "$hub" get multikueueconfig gpu-workers -o jsonpath='{.spec.clusters}' 2>&1 || true) $(kubectl --kubeconfig "$hub" get resourceusages -A \
    -o jsonpath='{range .items[*]}{.metadata.namespace}:{range .status.resources[?(@.name=="nvidia.com/gpu")]}{.model}={.free},{end} {end}' 2>&1 || true)"
  if [[ $pods -eq 0 && "$figures" == "$previous" ]]; then settled=1; break; fi
  [[ $pods -eq 0 ]] && previous=$figures
  sleep 2
done
if [[ -z "$settled" ]]; then
  echo "note: the workers' figures were still changing 60 s after the last run's Jobs were deleted; submitting anyway"
fi
# The order and the free GPUs at submission: where each Job should go.
ranked=$(kubectl --kubeconfig "$hub" get multikueueconfig gpu-workers -o jsonpath='{.spec.clusters[*]}')
declare -A free
for c in $ranked; do
  # model=free per GPU model, and any=free of every model (the entry without a model).
  free[$c]=$(kubectl --kubeconfig "$hub" get resourceusage -n "$c" resource-usage \
    -o jsonpath='{range .status.resources[?(@.name=="nvidia.com/gpu")]}{.model}={.free}{"\n"}{end}' | awk '{ sub(/^=/, "any="); printf "%s ", $0 }')
done
echo "the placement's order at submission: $ranked; free GPUs then (the hub's ResourceUsage figures):"
for c in $ranked; do
  line=""
  for f in ${free[$c]}; do [[ "${f%%=*}" == any ]] || line+="${line:+, }${f#*=} ${f%%=*}"; done
  echo "  $c: ${line:-none}"
done
start=$(now_ms)
kubectl --kubeconfig "$hub" create -f examples/kueue/jobs.yaml
declare -A gpus model expect worker admitted complete
for j in "${jobs[@]}"; do
  read -r pods per m <<<"$(kubectl --kubeconfig "$hub" get job -n default "$j" \
    -o jsonpath='{.spec.parallelism} {.spec.template.spec.containers[0].resources.limits.nvidia\.com/gpu} {.spec.template.spec.nodeSelector.nvidia\.com/gpu\.product}')"
  gpus[$j]=$((pods * per))
  model[$j]=${m:-any}
  expect[$j]=""
  # The first-ranked worker whose free GPUs of the model (any: of every model) hold the Job.
  for c in $ranked; do
    for f in ${free[$c]}; do
      if [[ "${f%%=*}" == "${model[$j]}" && "${f#*=}" -ge "${gpus[$j]}" ]]; then expect[$j]=$c; fi
    done
    [[ -n "${expect[$j]}" ]] && break
  done
done

# Wait until every Workload on the hub has a worker (status.clusterName: the worker whose Kueue
# admitted its copy first), then until every Job on the hub is Complete (MultiKueue copies the
# worker's Job status back). One read of the hub's Jobs and Workloads every 0.2 s.
phase="admitted on a worker"
deadline=$(($(now_ms) + 60000))
# The placement's order as it follows the free GPUs while the Jobs run.
orders=("$ranked")
while :; do
  while IFS='|' read -r kind name owner cluster completed failed; do
    # Only the demo's Jobs and their Workloads count (a Workload's owner is its Job).
    [[ "$kind" == Workload ]] && name=$owner
    [[ -n "$name" && -n "${gpus[$name]:-}" ]] || continue
    if [[ "$kind" == Workload && -n "$cluster" && -z "${admitted[$name]:-}" ]]; then
      admitted[$name]=$(($(now_ms) - start))
      worker[$name]=$cluster
    fi
    if [[ "$kind" == Job && "$failed" == True ]]; then
      echo "Job default/$name failed on ${worker[$name]:-a worker}:" >&2
      kubectl --kubeconfig "$hub" get job -n default "$name" -o jsonpath='{.status.conditions}' >&2 || true
      exit 1
    fi
    if [[ "$kind" == Job && "$completed" == True && -z "${complete[$name]:-}" ]]; then
      complete[$name]=$(($(now_ms) - start))
    fi
  done < <(kubectl --kubeconfig "$hub" get jobs,workloads -n default -o jsonpath='{range .items[*]}{.kind}|{.metadata.name}|{.metadata.ownerReferences[0].name}|{.status.clusterName}|{.status.conditions[?(@.type=="Complete")].status}|{.status.conditions[?(@.type=="Failed")].status}{"\n"}{end}')
  left=0
  for j in "${jobs[@]}"; do
    if [[ $phase == "admitted on a worker" ]]; then [[ -n "${admitted[$j]:-}" ]] || left=$((left + 1))
    else [[ -n "${complete[$j]:-}" ]] || left=$((left + 1)); fi
  done
  if [[ $left -eq 0 && $phase == "admitted on a worker" ]]; then
    echo "every Job admitted on a worker $(secs "$(($(now_ms) - start))") s after submission"
    phase="complete on the hub"
    deadline=$(($(now_ms) + 120000))
    {
      step "Where they went: the hub's Workloads (status.clusterName), and the copies on the workers while they run"
      kubectl --kubeconfig "$hub" get workloads -n default -o custom-columns='WORKLOAD:.metadata.name,JOB:.metadata.ownerReferences[0].name,WORKER:.status.clusterName,MULTIKUEUE-CHECK:.status.admissionChecks[0].message'
      for w in $(printf '%s\n' "${worker[@]}" | sort -u); do
        kc=$($flotilla dev kubeconfig "$w")
        echo
        echo "$w (read there for the curious; nobody submitted anything to it):"
        kubectl --kubeconfig "$kc" get workloads -n default -o custom-columns='WORKLOAD:.metadata.name,JOB:.metadata.ownerReferences[0].name,FLAVOR:.status.admission.podSetAssignments[0].flavors.nvidia\.com/gpu,ADMITTED:.status.conditions[?(@.type=="Admitted")].status' || true
        kubectl --kubeconfig "$kc" get pods -n default -l "$selector" -o wide || true
      done
      echo
      echo "waiting for the Jobs to complete on $(printf '%s\n' "${worker[@]}" | sort -u | paste -sd, -) and their status to reach the hub"
    }
    continue
  fi
  [[ $left -eq 0 ]] && break
  if [[ $(now_ms) -gt $deadline ]]; then
    echo "$left of ${#jobs[@]} Jobs not $phase in time:" >&2
    kubectl --kubeconfig "$hub" get jobs -n default >&2 || true
    kubectl --kubeconfig "$hub" get workloads -n default -o custom-columns='WORKLOAD:.metadata.name,WORKER:.status.clusterName,NOMINATED:.status.nominatedClusterNames,CHECKS:.status.admissionChecks' >&2 || true
    exit 1
  fi
  if [[ $phase == "complete on the hub" ]]; then
    order=$(kubectl --kubeconfig "$hub" get multikueueconfig gpu-workers -o jsonpath='{.spec.clusters[*]}' 2>/dev/null || true)
    if [[ -n "$order" && "$order" != "${orders[-1]}" ]]; then orders+=("$order"); fi
  fi
  sleep 0.2
done

step "The Jobs as the hub sees them"
kubectl --kubeconfig "$hub" get jobs -n default
echo
# The rows are made in this shell (not in a pipeline's subshell), so that wrong and late count.
wrong=0 late=0
rows=$'JOB\tGPUS\tMODEL\tWORKER\tRANK\tFIRST-RANKED-WITH-ROOM\tON-A-WORKER\tCOMPLETE-ON-HUB\n'
for j in "${jobs[@]}"; do
  rank=0 want=0 i=0
  for c in $ranked; do
    i=$((i + 1))
    [[ "$c" == "${worker[$j]}" ]] && rank=$i
    [[ "$c" == "${expect[$j]}" ]] && want=$i
  done
  ok=yes
  if [[ "${worker[$j]}" != "${expect[$j]}" ]]; then
    # The dispatcher offers a workload to the next worker when the first has not admitted it
    # within a round (3 s): a later worker is right then, an earlier one or a quick one is not.
    if [[ $want -gt 0 && $rank -gt $want && ${admitted[$j]} -ge 3000 ]]; then ok="no: ${expect[$j]} slow, next offered"; late=1
    else ok="no (${expect[$j]:-none})"; wrong=1; fi
  fi
  rows+=$(printf '%s\t%s\t%s\t%s\t%s of %s\t%s\t%s s\t%s s' "$j" "${gpus[$j]}" "${model[$j]}" "${worker[$j]}" "$rank" "$i" "$ok" \
    "$(secs "${admitted[$j]}")" "$(secs "${complete[$j]}")")$'\n'
done
printf '%s' "$rows" | table
if [[ $wrong -ne 0 ]]; then
  echo "some Jobs did not run on the first-ranked worker with room for them (order [$ranked], free GPUs at submission: ${free[*]})" >&2
  exit 1
fi
if [[ $late -ne 0 ]]; then
  echo
  echo "note: a worker took over 3 s (the dispatcher's round) to admit a Job, so the next worker was offered it too and admitted it first; the machine is busy"
fi

echo
printf 'the placement'"'"'s order (the MultiKueueConfig) while they ran, as the free GPUs changed:'
printf ' [%s]' "${orders[0]}"
if [[ ${#orders[@]} -gt 1 ]]; then printf ' -> [%s]' "${orders[@]:1}"; fi
echo

lo_a=${admitted[${jobs[0]}]} hi_a=$lo_a lo_c=${complete[${jobs[0]}]} hi_c=$lo_c
for j in "${jobs[@]}"; do
  if ((admitted[$j] < lo_a)); then lo_a=${admitted[$j]}; fi
  if ((admitted[$j] > hi_a)); then hi_a=${admitted[$j]}; fi
  if ((complete[$j] < lo_c)); then lo_c=${complete[$j]}; fi
  if ((complete[$j] > hi_c)); then hi_c=${complete[$j]}; fi
done
# span prints a range of milliseconds as seconds ("1.4-1.9"), or one figure when both round alike.
span() { if [[ "$(secs "$1")" == "$(secs "$2")" ]]; then secs "$1"; else printf '%s-%s' "$(secs "$1")" "$(secs "$2")"; fi; }
echo
printf '%d Jobs submitted once to the hub: admitted on the first-ranked worker with room %s s after submission, complete on the hub %s s after (kwok ends each pod 5-10 s after it starts)\n' \
  "${#jobs[@]}" "$(span "$lo_a" "$hi_a")" "$(span "$lo_c" "$hi_c")"

step "Fleet status"
$flotilla dev status

cat <<MSG

The fleet keeps running, with Kueue on every cluster. Try:
  export PATH=$bins:\$PATH
  kubectl --kubeconfig "\$($flotilla dev kubeconfig hub)" get workloads -A
  kubectl --kubeconfig "\$($flotilla dev kubeconfig hub)" create -f examples/kueue/jobs.yaml   # after deleting them
Stop it with: $flotilla dev down   (or make down)
MSG
