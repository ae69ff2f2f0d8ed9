"""The package's stubs read by a type checker: the examples check clean, a misuse does not."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ptxrt
from conftest import REPOSITORY

pytest.importorskip("mypy")
PACKAGE_ROOT = str(Path(ptxrt.__file__).resolve().parents[1])


def mypy(*paths, text=None):
    command = [sys.executable, "-m", "mypy", "--no-incremental", "--ignore-missing-imports",
               "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}"]
    command += ["-c", text] if text else list(paths)
    environment = dict(os.environ)
    # An installed package is found as any typed package is (PEP 561); a build tree's by path.
    if Path(PACKAGE_ROOT).name not in ("site-packages", "dist-packages"):
        environment["MYPYPATH"] = PACKAGE_ROOT
    return subprocess.run(command, capture_output=True, text=True, env=environment, cwd=REPOSITORY)


def test_the_stubs_describe_the_extension():
    stub = Path(ptxrt.__file__).with_name("_ptxrt.pyi").read_text()
    for name in ("class Program", "class Kernel", "def compile(", "def tune(", "class TunedKernel"):
        assert name in stub


def test_the_examples_type_check():
    result = mypy(str(REPOSITORY / "examples" / "python"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_misuse_is_caught_by_the_type_checker():
    result = mypy(text='import ptxrt\nptxrt.compile(ptxrt.Program("k"), arch=90)\n')
    assert result.returncode == 1
    assert 'Argument "arch" to "compile" has incompatible type "int"' in result.stdout
