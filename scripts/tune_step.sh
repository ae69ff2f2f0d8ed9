# Sourced by scripts/tune-check.sh and scripts/tune-any-check.sh, which set $out and $status.
step() {  # step NAME COMMAND...: runs with a fresh cache, output in $out/NAME.json, log in NAME.log
  local name=$1; shift
  local start=$SECONDS
  PTXRT_CACHE_DIR=$(mktemp -d) "$@" >"$out/$name.json" 2>"$out/$name.log"
  local rc=$?
  [ $rc -eq 0 ] || status=1
  echo "$name: exit $rc, $((SECONDS - start)) s"
}
