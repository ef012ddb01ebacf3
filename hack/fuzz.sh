#!/usr/bin/env bash
# Runs every fuzz target (go test -fuzz) for a bounded time each. `make test` runs them briefly
# (FUZZTIME=10s); `make fuzz` longer (FUZZTIME=2m). A target that finds a crasher fails, and Go
# writes the input under the package's testdata/fuzz/<Target>/: commit it, fix the code, and it
# stays a regression seed that every plain `go test` runs.
#
#   hack/fuzz.sh                  every target, FUZZTIME each (default 10s)
#   hack/fuzz.sh FuzzParse        only targets whose name matches
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-10s}
only=${1:-}

# One line per target: package and function. Every decoder of untrusted input has one: what a
# user, a ManifestWork author, a spoke or a remote scorer can send the hub or an agent.
targets=$(cat <<'LIST'
./internal/local/fleet FuzzParse
./internal/core/scheduler/plugins/gpufit FuzzParse
./internal/hub/addontemplate FuzzRender
./internal/agent/work FuzzDecode
./internal/core/workstatus FuzzFeedback
./internal/hub/webhook FuzzAdmissionReview
./internal/hub/webhook FuzzConvert
./internal/hub/explain FuzzDecodeBody
./internal/agent/builtin/dynamicscoring FuzzParseScores
./internal/agent/builtin/dynamicscoring FuzzParseMatrix
./internal/agent/builtin/dynamicscoring FuzzResourceName
./internal/agent/builtin/dynamicscoring FuzzSummaries
./internal/hub/dynamicscoring FuzzConfig
./internal/core/placementview FuzzDecode
./internal/core/scheduler/plugins/predicate FuzzCEL
./internal/contract/kueueworker FuzzKubeconfig
./internal/hub/flowerctl FuzzDecodeListRuns
./internal/hub/flowerctl FuzzDecodeLogs
./internal/hub/flowerctl FuzzDecodeListNodes
./internal/hub/flowerctl FuzzDecodeRegisterNode
./internal/hub/flowerfront FuzzClassify
./internal/hub/federatedlearning FuzzParseProgress
./internal/contract/fencing FuzzParseTiming
./internal/agent/builtin/configpolicy FuzzMatchMerge
./internal/agent/builtin/policyframework FuzzTemplates
./internal/policytemplate FuzzResolve
./internal/contract/compliancehistory FuzzParse
./internal/contract/fencing FuzzStoppedRecord
./internal/contract/fencing FuzzRequeuedOf
./internal/hub/mcpserver FuzzWorkloads
./internal/hub/dashboard FuzzParseQuery
./internal/cli/credentialsplugin FuzzClusterName
./internal/hub/dashboard FuzzSessionCookie
LIST
)

# Every Fuzz function in the tree must be listed above, so a new target is not silently skipped.
listed=$(awk '{print $1 " " $2}' <<<"$targets" | sort)
found=$(grep -rl --include='*_test.go' '^func Fuzz' internal cmd 2>/dev/null | while read -r f; do
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed "s|^func |./$(dirname "$f") |"
done | sort)
if [[ "$listed" != "$found" ]]; then
  echo "hack/fuzz.sh: the target list differs from the Fuzz functions in the tree (- listed, + found):" >&2
  diff <(echo "$listed") <(echo "$found") >&2 || true
  exit 1
fi

start=$SECONDS
n=0
while read -r pkg fn; do
  [[ -z "$only" || "$fn" == *"$only"* ]] || continue
  printf '== fuzz %s %s (%s)\n' "$pkg" "$fn" "$fuzztime"
  # Go's fuzzer can end a run with a bare "context deadline exceeded" when -fuzztime runs out
  # while a worker is busy (seen on a loaded 2-core machine). That is no finding: a finding
  # always says "Failing input written to". Such a run is tried once more; any other failure,
  # or the same one twice, fails.
  for try in 1 2; do
    out=$(go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$fuzztime" "$pkg" 2>&1) && rc=0 || rc=$?
    grep -v '^fuzz: elapsed' <<<"$out"
    if ((rc == 0)); then break; fi
    if ((try == 1)) && grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written to' <<<"$out"; then
      echo "fuzz target $pkg $fn: the fuzzer's own deadline, no failing input; once more"
      continue
    fi
    echo "fuzz target $pkg $fn failed: a failing input is under $pkg/testdata/fuzz/$fn/ (commit it as a seed and fix the code)" >&2
    exit 1
  done
  n=$((n + 1))
done <<<"$targets"
echo "== $n fuzz targets passed in $((SECONDS - start))s"
