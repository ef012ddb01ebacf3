#!/usr/bin/env bash
# run-local.sh runs the federated-learning example as a real Flower 1.42 deployment on loopback:
# one SuperLink (TLS, process isolation), one SuperNode per cluster, one flower-superexec for the
# ServerApp and one per SuperNode for the ClientApps, all as separate processes on free ports.
# It submits the app with `flwr run`, waits for the run to finish, prints the per-round progress
# lines and the comparison table (federated model vs. each cluster alone), then stops every
# process it started (by process group id, in an EXIT trap).
#
#   hack/flwr/run-local.sh
#
# Settings (environment):
#   CLUSTERS   comma-separated cluster names (default cluster-a,cluster-b,cluster-c)
#   ROUNDS     FedAvg rounds (default 3)
#   SEED       data seed (default 7)
#   WORK_DIR   where data, certs, logs and results go (default: a new temp dir, removed at exit
#              unless KEEP=1); kept when given
#   TIMEOUT    seconds to wait for the run to finish (default 240)
#
# Results in WORK_DIR: out/progress.jsonl (FLOTILLA_PROGRESS lines), out/global_model.npz,
# out/compare.json, out/status.json (`flwr ls --run-id`), logs/*.log (one per process, plus
# logs/run.log = `flwr log RUN_ID --show`), cmdlines.txt (every command line it ran).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
app="$repo/examples/federated-learning"
clusters=${CLUSTERS:-cluster-a,cluster-b,cluster-c}
rounds=${ROUNDS:-3}
seed=${SEED:-7}
timeout=${TIMEOUT:-240}
IFS=, read -r -a names <<<"$clusters"
n=${#names[@]}

t0=$(date +%s.%N)
elapsed() { printf '%.1f' "$(echo "$(date +%s.%N) - $t0" | bc)"; }
say() { echo "[$(elapsed)s] $*" >&2; }

venv=$("$repo/hack/flwr/venv.sh")
py="$venv/bin/python"
say "venv ready: $venv"

if [[ -n ${WORK_DIR:-} ]]; then
  work=$WORK_DIR
  keep=1
else
  work=$(mktemp -d -t flotilla-flwr.XXXXXX)
  keep=${KEEP:-0}
fi
mkdir -p "$work"/{logs,home,out}
: >"$work/cmdlines.txt"

pids=()
cleanup() {
  local rc=$?
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 -- "-$pid" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  if ((keep)); then say "kept $work"; else rm -rf "$work"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Flower: no telemetry, no update check (both would call flower.ai), no runtime `uv sync`.
export FLWR_TELEMETRY_ENABLED=0 FLWR_DISABLE_UPDATE_CHECK=1
# flower-superexec starts `flwr-serverapp` / `flwr-clientapp` by name from PATH.
export PATH="$venv/bin:$PATH"

# start NAME [VAR=value ...] -- CMD ...: runs CMD in its own session (so its children can be
# stopped with it), with FLWR_HOME=$work/home/NAME, output to logs/NAME.log.
start() {
  local name=$1
  shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  mkdir -p "$work/home/$name"
  {
    printf '# %s\n' "$name"
    printf '%q ' env FLWR_HOME="$work/home/$name" "${envs[@]}" "$@"
    printf '\n'
  } >>"$work/cmdlines.txt"
  setsid env FLWR_HOME="$work/home/$name" "${envs[@]}" "$@" >"$work/logs/$name.log" 2>&1 </dev/null &
  pids+=("$!")
}

# free_ports N: N distinct free TCP ports on 127.0.0.1 (held open together while chosen).
free_ports() {
  "$py" - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

wait_port() {
  local port=$1 name=$2
  for _ in $(seq 1 150); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "run-local.sh: $name did not open 127.0.0.1:$port; see $work/logs/$name.log" >&2
  tail -n 20 "$work/logs/$name.log" >&2 || true
  return 1
}

read -r -a ports <<<"$(free_ports $((n + 1)))"
link_port=${ports[0]}
link="127.0.0.1:$link_port"

"$py" "$repo/hack/flwr/certs.py" "$work/certs" --san 127.0.0.1 --san localhost
certs="$work/certs"
(cd "$app" && "$py" -m flotilla_fl.data generate --out "$work/data" --clusters "$clusters" \
  --seed "$seed" >"$work/data-manifest.json")
say "certs and data ready in $work"

start superlink -- flower-superlink \
  --ssl-ca-certfile "$certs/ca.crt" --ssl-certfile "$certs/server.pem" \
  --ssl-keyfile "$certs/server.key" --isolation process --host 127.0.0.1 --port "$link_port"
wait_port "$link_port" superlink
say "superlink up on $link (TLS; Fleet, Control and Runtime APIs on this one port)"

for i in "${!names[@]}"; do
  c=${names[$i]}
  p=${ports[$((i + 1))]}
  start "supernode-$c" -- flower-supernode \
    --superlink "$link" --root-certificates "$certs/ca.crt" \
    --node-config "cluster-name=\"$c\"" --isolation process --host 127.0.0.1 --port "$p"
done
for i in "${!names[@]}"; do wait_port "${ports[$((i + 1))]}" "supernode-${names[$i]}"; done
say "$n supernodes up"

start superexec-serverapp \
  FLOTILLA_TEST_PATH="$work/data/test" FLOTILLA_OUTPUT_PATH="$work/out" -- \
  flower-superexec --root-certificates "$certs/ca.crt" --runtime-api-address "$link"
for i in "${!names[@]}"; do
  c=${names[$i]}
  start "superexec-clientapp-$c" FLOTILLA_DATA_PATH="$work/data/$c" -- \
    flower-superexec --insecure --runtime-api-address "127.0.0.1:${ports[$((i + 1))]}"
done
say "superexecs started"

# The flwr CLI reads SuperLink connections from $FLWR_HOME/config.toml.
cli_home="$work/home/cli"
mkdir -p "$cli_home"
cat >"$cli_home/config.toml" <<EOF
[superlink]
default = "flotilla"

[superlink.flotilla]
address = "$link"
root-certificates = "$certs/ca.crt"
EOF
flwr_cli() { FLWR_HOME="$cli_home" flwr "$@"; }
run_args=(run "$app" flotilla --format json
  --run-config "num-server-rounds=$rounds min-available-clients=$n")
{
  printf '# flwr run\n'
  printf '%q ' env FLWR_HOME="$cli_home" flwr "${run_args[@]}"
  printf '\n'
} >>"$work/cmdlines.txt"
run_json=$(flwr_cli "${run_args[@]}")
run_id=$("$py" -c 'import json, sys; print(json.loads(sys.argv[1])["run-id"])' "$run_json")
t_run=$(date +%s.%N)
say "submitted run $run_id"

status=""
deadline=$((SECONDS + timeout))
while ((SECONDS < deadline)); do
  flwr_cli ls flotilla --run-id "$run_id" --format json >"$work/out/status.json"
  status=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["runs"][0]["status"])' \
    "$work/out/status.json")
  [[ $status == finished:* ]] && break
  sleep 1
done
run_s=$(printf '%.1f' "$(echo "$(date +%s.%N) - $t_run" | bc)")
flwr_cli log "$run_id" flotilla --show >"$work/logs/run.log" 2>&1 || true
say "run $run_id: $status after ${run_s}s"

if [[ $status != finished:completed ]]; then
  echo "run-local.sh: run $run_id ended as '${status:-unknown}' (timeout ${timeout}s);" \
    "logs in $work/logs" >&2
  keep=1
  grep -h -E "ERROR|Error|Traceback" "$work"/logs/*.log | head -n 20 >&2 || true
  exit 1
fi

echo "== progress (out/progress.jsonl; the same lines are in \`flwr log $run_id\`)"
cat "$work/out/progress.jsonl"
echo
echo "== comparison on the held-out test set"
cmp_args=(--data "$work/data" --clusters "$clusters" --model "$work/out/global_model.npz"
  --rounds "$rounds" --seed 0)
(cd "$app" && "$py" -m flotilla_fl.compare "${cmp_args[@]}" --json >"$work/out/compare.json")
(cd "$app" && "$py" -m flotilla_fl.compare "${cmp_args[@]}")
echo
echo "run $run_id: $status; ${rounds} rounds x ${n} clients in ${run_s}s" \
  "(submit to finished), $(elapsed)s total"
