#!/usr/bin/env bash
# `pip install .` as a user runs it, into a fresh virtual environment that sees this Python's
# packages (scikit-build-core, nanobind, NumPy, pytest: no network, no build isolation); then the
# package's tests import the installed package, and `python -m ptxrt` finds a CLI. For time on
# two cores, the wheel is built at -O0 and without the CLI (`python -m ptxrt` then runs the
# build's, from PATH); a plain `pip install .` builds Release with the CLI inside.
#   check_pip_install.sh PYTHON SOURCE WORK BUILD
set -euo pipefail
python=$1 source=$2 work=$3 build=$4
rm -rf "$work"
"$python" -m venv --system-site-packages "$work/venv"
venv_python=$work/venv/bin/python
"$venv_python" -m pip install --quiet --no-build-isolation --no-deps -C build-dir="$work/build" \
  -C cmake.build-type=Debug -C cmake.define.PTXRT_BUILD_TOOLS=OFF "$source"
cd "$work"
"$venv_python" - <<'CHECK'
import pathlib
import ptxrt
package = pathlib.Path(ptxrt.__file__).parent
assert package.parent.name == "site-packages", package
for name in ("ptxrt-tune-worker", "_ptxrt.pyi", "py.typed", "kernel_tuner.py"):
    assert (package / name).is_file(), f"the wheel lacks {name}"
print("pip install: the package in", package)
CHECK
PATH="$build:$PATH" "$venv_python" -m ptxrt --version
"$venv_python" -m pytest -q -p no:cacheprovider -rs "$source/tests/python"
