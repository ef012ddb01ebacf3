# Shared by tools/build.sh and tools/build-kueue.sh (sourced, not run).

say() { printf '%s\n' "$*" >&2; }
die() { say "tools/$(basename "$0"): $*"; exit 1; }

command -v go >/dev/null 2>&1 || die "no Go toolchain on PATH: install Go 1.26 or newer (https://go.dev/doc/install) and run again"

# Builds are cached outside the checkout, in a folder per set of pins.
cache_root=${FLOTILLA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/flotilla}

# go build -v names each package as it compiles it; count them against the dependency total so
# a cold build shows where it is.
progress() { # label total
  local label=$1 total=$2 n=0 start=$SECONDS last=0
  while IFS= read -r line; do
    case "$line" in
      *" "*|"#"*) say "$line" ;; # not a package path: a compiler message
      *) n=$((n + 1))
         if (( SECONDS - last >= 10 )); then
           last=$SECONDS
           say "$(printf '[%s] compiled %d of at most %d packages (%ds)' "$label" "$n" "$total" $((SECONDS - start)))"
         fi ;;
    esac
  done
  say "$(printf '[%s] done: compiled %d packages in %ds' "$label" "$n" $((SECONDS - start)))"
}
