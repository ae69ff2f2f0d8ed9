#!/usr/bin/env bash
# Every problem file of the side-by-side set through `ptxrt tune --dry-run` (no GPU), so that the
# set cannot drift from the schema: each file that ptxrt accepts must plan (schema, expressions,
# geometry, the arguments against the kernel's signature, one config compiled for sm_90); the
# files written for features ptxrt may not have yet (README.md, "Files that wait for a feature")
# may be refused, and the run says which were.
#   tests/kernel_tuner/dry_run_set.sh PTXRT_BINARY
set -uo pipefail
ptxrt=${1:?usage: dry_run_set.sh PTXRT_BINARY}
cd "$(dirname "$0")" || exit 2
may_be_refused=" convolution_2d.json diffusion.json reduction.json spmv.json spmv_irregular.json "
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
status=0
for problem in *.json; do
  kernel=${problem%%-*}
  kernel=${kernel%.json}
  kernel=${kernel%_irregular}.cu
  if log=$(PTXRT_CACHE_DIR="$cache" "$ptxrt" tune "$kernel" --problem "$problem" --dry-run \
    --arch sm_90 --time 0.1 2>&1) && grep -q "^plan for" <<<"$log"; then
    echo "plans: $problem ($(grep -m1 -o 'space [0-9]* configs: [0-9]* pruned by constraints' <<<"$log"))"
  elif [[ $may_be_refused == *" $problem "* ]]; then
    echo "refused, waits for a feature: $problem: $(grep -m1 'error' <<<"$log")"
  else
    echo "FAILED: $problem with $kernel:"
    echo "$log" | grep -v 'dry run: compiled' | head -20
    status=1
  fi
done
exit $status
