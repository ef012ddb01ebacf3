# Shared by tools/build.sh and tools/build-kueue.sh (sourced, not run).

say() { printf '%s\n' "$*" >&2; }

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
