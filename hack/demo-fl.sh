#!/usr/bin/env bash
# The federated-learning demo (`make demo-fl`): a local fleet (the hub and four spokes, each with a
# process-runtime node) where Flower really runs. OCM's Flower sample, applied unchanged, places
# its clients on the three spokes whose claim names a data set and that run flower-addon (not
# spoke-4, an edge site with none); the federation gets a SuperLink of its own on the hub (behind
# its front, TLS with its own CA) and a SuperNode of its own on each client spoke; the example app (examples/federated-learning, numpy) trains for six rounds, which
# advance in the FederatedLearning's status; spoke-3 is lost after round three and the federation
# goes on with the quorum; last, the federated model against each client trained alone.
#
# It is the integration test test/flowerfleet run with FLOTILLA_DEMO=1, which prints each step:
# the demo and the test are one program. The fleet's own logs go to the file named at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

bins=$(tools/build.sh --print)
venv=$(hack/flwr/venv.sh)
echo "Flower: $("$venv/bin/flwr" --version 2>/dev/null | head -1) in $venv" >&2
go test -tags integration -c -o bin/flowerfleet.test ./test/flowerfleet
log=$(mktemp -t flotilla-demo-fl.XXXXXX.log)
cd test/flowerfleet
if ! FLOTILLA_DEMO=1 FLOTILLA_K8S_BIN="$bins" ../../bin/flowerfleet.test -test.run '^TestFederationTrains$' -test.count 1 -test.timeout 20m 2>"$log"; then
  echo "the demo failed; the last lines of its log ($log):" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
echo
echo "the fleet's logs: $log"
