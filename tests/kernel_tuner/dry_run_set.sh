#!/usr/bin/env bash
# Every problem file of the side-by-side set through `ptxrt tune --dry-run` (no GPU), so that the
# set cannot drift from the schema: each must plan (schema, expressions, geometry, the arguments
# against the kernel's signature, one config compiled for sm_90), and its space after the
# constraints must hold as many configs as its Kernel Tuner script's after the restrictions
# (space_size.py, where python3 is found).
#   tests/kernel_tuner/dry_run_set.sh PTXRT_BINARY
set -uo pipefail
ptxrt=${1:?usage: dry_run_set.sh PTXRT_BINARY}
cd "$(dirname "$0")" || exit 2
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
python=$(command -v python3)
status=0
for problem in *.json; do
  name=${problem%.json}
  kernel=${name%_irregular}.cu
  if ! log=$(PTXRT_CACHE_DIR="$cache" "$ptxrt" tune "$kernel" --problem "$problem" --dry-run \
    --arch sm_90 --time 0.1 2>&1) || ! grep -q "^plan for" <<<"$log"; then
    echo "FAILED: $problem with $kernel:"
    echo "$log" | grep -v 'dry run: compiled' | head -20
    status=1
    continue
  fi
  read -r space pruned < <(sed -n 's/.*space \([0-9]*\) configs: \([0-9]*\) pruned by constraints.*/\1 \2/p' <<<"$log" | head -1)
  configs=$((space - pruned))
  if [[ -n $python ]]; then
    kernel_tuner_configs=$("$python" space_size.py "kt_$name.py" | cut -d' ' -f2)
    if [[ $configs != "$kernel_tuner_configs" ]]; then
      echo "FAILED: $problem plans $configs configs, kt_$name.py tunes $kernel_tuner_configs"
      status=1
      continue
    fi
  fi
  echo "plans: $problem ($configs configs${python:+, as kt_$name.py})"
done
exit $status
