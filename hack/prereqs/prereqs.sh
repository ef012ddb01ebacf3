#!/usr/bin/env bash
# prereqs.sh checks, before a make target starts, that this machine has what the target needs,
# and for each thing missing prints why it is needed and the exact command that installs it.
#
#   hack/prereqs/prereqs.sh build            Go 1.26+, gcc, git, make, Node.js 20.19+ with npm
#   hack/prereqs/prereqs.sh demo             what build needs (the demo builds bin/flotilla first)
#   hack/prereqs/prereqs.sh demo-fl          + Python 3.10+ with venv (Flower comes from PyPI)
#   hack/prereqs/prereqs.sh demo-real        + root, containerd, runc, the CNI plugins, iproute2, iptables
#   hack/prereqs/prereqs.sh test             + Prometheus, Chromium, Python's venv, iptables, containerd,
#                                    runc, the CNI plugins and root
#   hack/prereqs/prereqs.sh --packages T...  the Debian packages the targets T miss, one per line (what
#                                    .ci/run installs with apt-get); always exits 0
#
# Exit status: 0 when nothing is missing, 1 otherwise (after printing every missing thing, not
# only the first). The one list of what each target needs is here: the Makefile, .ci/run and the
# README's fresh-machine paragraph all follow it.
set -uo pipefail

packages_only=false
if [[ ${1:-} == --packages ]]; then
  packages_only=true
  shift
fi
[[ $# -gt 0 ]] || { echo "usage: hack/prereqs/prereqs.sh [--packages] build|demo|demo-fl|test ..." >&2; exit 2; }

# version_at_least HAVE WANT: true when dotted version HAVE >= WANT.
version_at_least() {
  [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" == "$2" ]]
}

python_bin() {
  if [[ -n ${FLOTILLA_PYTHON:-} ]]; then echo "$FLOTILLA_PYTHON"
  elif [[ -x /usr/bin/python3 ]]; then echo /usr/bin/python3
  else command -v python3 || true
  fi
}

missing=()  # "package|why and how" per missing thing; package is "" when apt cannot install it
need() { missing+=("$1|$2"); }

check_build() {
  if ! command -v go >/dev/null 2>&1; then
    need "" "Go 1.26 or newer: install it from https://go.dev/dl/ (Debian 12's golang is too old) and put its bin/ on PATH"
  else
    v=$(go env GOVERSION 2>/dev/null); v=${v#go}
    version_at_least "${v:-0}" 1.26 || need "" "Go 1.26 or newer (found go$v): install it from https://go.dev/dl/"
  fi
  command -v gcc >/dev/null 2>&1 || need gcc "gcc (cgo, for the race detector and some test binaries): apt-get install gcc"
  command -v git >/dev/null 2>&1 || need git "git (version stamps, check-generated): apt-get install git"
  command -v make >/dev/null 2>&1 || need make "make: apt-get install make"
  command -v sha256sum >/dev/null 2>&1 || need coreutils "sha256sum (cache keys of built binaries): apt-get install coreutils"
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    need "" "Node.js 20.19 or newer with npm (the dashboard's web app, web/dashboard, builds with Vite 8): install it from https://nodejs.org/ (Debian 12's nodejs 18 is too old)"
  else
    v=$(node --version 2>/dev/null); v=${v#v}
    version_at_least "${v:-0}" 20.19 || need "" "Node.js 20.19 or newer (found v$v; Vite 8 refuses older ones): install it from https://nodejs.org/"
  fi
}

check_python() {
  py=$(python_bin)
  if [[ -z $py ]] || ! "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
    need python3 "Python 3.10 or newer (Flower 1.42, hack/flwr/venv.sh): apt-get install python3 python3-venv python3-pip, or set FLOTILLA_PYTHON"
    return
  fi
  if ! "$py" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    need python3-venv "Python's venv module for $py (hack/flwr/venv.sh makes Flower's venv from PyPI): apt-get install python3-venv python3-pip"
    missing+=("python3-pip|")
  fi
}

# check_real_nodes: what a real node (internal/local/realnode) needs besides root.
check_real_nodes() {
  command -v containerd >/dev/null 2>&1 || need containerd "containerd (real nodes, internal/local/realnode, run real containers): apt-get install containerd"
  command -v runc >/dev/null 2>&1 || need runc "runc (containerd's runtime on real nodes): apt-get install runc"
  [[ -x ${FLOTILLA_CNI_DIR:-/usr/lib/cni}/bridge ]] || need containernetworking-plugins "the CNI plugins in /usr/lib/cni (real nodes' pod network): apt-get install containernetworking-plugins"
  command -v ip >/dev/null 2>&1 || need iproute2 "ip (real nodes' network namespaces and links): apt-get install iproute2"
  command -v nsenter >/dev/null 2>&1 || need util-linux "nsenter (real nodes run their kubelet in their network namespace): apt-get install util-linux"
  command -v iptables >/dev/null 2>&1 || need iptables "iptables (kube-proxy and the isolation chain of real nodes): apt-get install iptables"
}

check_test() {
  command -v prometheus >/dev/null 2>&1 || need prometheus "a Prometheus server binary (the dynamic-scoring tests scrape with a real one): apt-get install prometheus"
  command -v chromium >/dev/null 2>&1 || need chromium "Chromium (the dashboard's browser tests, test/dashboard, drive it headless): apt-get install chromium"
  command -v iptables >/dev/null 2>&1 || need iptables "iptables (the chaos tests cut the network between the hub and a spoke): apt-get install iptables"
  check_real_nodes
  if [[ $(id -u) -ne 0 ]] && ! sudo -n true >/dev/null 2>&1; then
    need "" "root, or passwordless sudo (the chaos tests add and remove their own iptables rules): run make test as root, or give $(id -un) passwordless sudo"
  fi
  check_python
}

for target in "$@"; do
  case $target in
    build | demo | demo-kueue) check_build ;;
    demo-fl) check_build; check_python ;;
    test) check_build; check_test ;;
    demo-real)
      check_build; check_real_nodes
      [[ $(id -u) -eq 0 ]] || need "" "root (real nodes make network namespaces, cgroups and mounts): run make demo-real as root" ;;
    *) echo "hack/prereqs/prereqs.sh: unknown target $target (build, demo, demo-kueue, demo-fl, demo-real, test)" >&2; exit 2 ;;
  esac
done

if $packages_only; then
  for m in "${missing[@]}"; do
    [[ -n ${m%%|*} ]] && echo "${m%%|*}"
  done | sort -u
  exit 0
fi

((${#missing[@]} == 0)) && exit 0
echo "This machine lacks what make $* needs:" >&2
declare -A said=()
for m in "${missing[@]}"; do
  why=${m#*|}
  [[ -z $why || -n ${said[$why]:-} ]] && continue
  said[$why]=1
  echo "  - $why" >&2
done
pkgs=$(for m in "${missing[@]}"; do [[ -n ${m%%|*} ]] && echo "${m%%|*}"; done | sort -u | tr '\n' ' ')
[[ -n $pkgs ]] && echo "On Debian, as root: apt-get update && apt-get install -y ${pkgs% }" >&2
exit 1
