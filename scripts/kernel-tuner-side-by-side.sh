#!/usr/bin/env bash
# ptxrt against Kernel Tuner on tests/kernel_tuner, on a GPU machine with python3, numpy and CuPy
# but no Kernel Tuner and no network: installs Kernel Tuner and the dependencies that a
# brute-force tune with the CuPy backend imports from the wheels in .whl/ (tests/kernel_tuner/
# README.md lists them), then runs scripts/kernel-tuner-side-by-side.py. Logs, reports and
# side-by-side.json go to $OUT when set (a GPU machine that collects that folder), else
# <build>/kernel-tuner-side-by-side.
#   scripts/kernel-tuner-side-by-side.sh [--build build] [problem ...]
set -euo pipefail
cd "$(dirname "$0")/.."
compgen -G ".whl/kernel_tuner-*.whl" >/dev/null || {
  echo "kernel-tuner-side-by-side: no Kernel Tuner wheel in .whl/ (tests/kernel_tuner/README.md says how to fetch them)" >&2
  exit 2
}
python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' || {
  echo "kernel-tuner-side-by-side: the wheels in .whl/ are for CPython 3.12, this is $(python3 -V)" >&2
  exit 2
}
python3 -c 'import numpy, cupy' || {
  echo "kernel-tuner-side-by-side: python3 needs numpy and CuPy" >&2
  exit 2
}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
out_option=()
[ -n "${OUT:-}" ] && out_option=(--out "$OUT")
exec python3 scripts/kernel-tuner-side-by-side.py "${out_option[@]}" "$@"
