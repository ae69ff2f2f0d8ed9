"""The Python package's tests: without a GPU the tests marked gpu report skipped; the rest
(compiling, resource reports, errors, problems, dry-run plans, the Kernel Tuner interface's
translation, the stubs) run anywhere."""
import os
from pathlib import Path

import pytest

import ptxrt

REPOSITORY = Path(__file__).resolve().parents[2]
KERNEL_TUNER_SET = REPOSITORY / "tests" / "kernel_tuner"


def gpu_count() -> int:
    try:
        return ptxrt.device_count()
    except ptxrt.Error:
        return 0


HAS_GPU = gpu_count() > 0


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="no CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A compile cache and tuning database of the test's own (folders private to the user)."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("PTXRT_CACHE_DIR", str(cache))
    return tmp_path
