#!/usr/bin/env bash
# venv.sh creates (once) the Python venv for the federated-learning example and prints its path.
#
#   venv=$(hack/flwr/venv.sh)   # stdout: the venv path and nothing else; progress goes to stderr
#   "$venv/bin/flower-superlink" --help
#
# The venv lives in the user cache folder, keyed by the sha256 of requirements.txt beside this
# script: ${XDG_CACHE_HOME:-$HOME/.cache}/flotilla/flwr-venv-<first 12 hex digits>. A venv whose
# install finished has the marker file .flotilla-complete; one without it (an interrupted build)
# is removed and built again. A lock file serialises concurrent callers.
#
# The example app is not installed into the venv: Flower ships the app to the ServerApp and
# ClientApp processes as a FAB (built by `flwr run`) and loads it from $FLWR_HOME/apps; the app's
# own tests and scripts run from examples/federated-learning (its pyproject sets pytest's
# pythonpath). Python: $FLOTILLA_PYTHON, else /usr/bin/python3 (3.11 here), else python3 on PATH.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
req="$here/requirements.txt"
[[ -f $req ]] || { echo "venv.sh: $req is missing" >&2; exit 1; }

python=${FLOTILLA_PYTHON:-}
if [[ -z $python ]]; then
  if [[ -x /usr/bin/python3 ]]; then python=/usr/bin/python3; else python=$(command -v python3); fi
fi
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || {
  echo "venv.sh: $python is $("$python" --version 2>&1); flwr 1.42 needs Python 3.10 or newer" \
    "(set FLOTILLA_PYTHON)" >&2
  exit 1
}

hash=$(sha256sum "$req" | cut -c1-12)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/flotilla
venv="$cache/flwr-venv-$hash"
mkdir -p "$cache"

exec 9>"$venv.lock"
flock 9

if [[ ! -f $venv/.flotilla-complete ]]; then
  start=$SECONDS
  echo "venv.sh: building $venv with $("$python" --version 2>&1)" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv" >&2
  # --no-deps: requirements.txt is a full lock (pip freeze), so nothing outside it gets in.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$req" >&2
  "$venv/bin/pip" check >&2
  touch "$venv/.flotilla-complete"
  echo "venv.sh: built in $((SECONDS - start)) s" >&2
fi

echo "$venv"
