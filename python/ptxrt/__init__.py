"""ptxrt: JIT-compile CUDA kernels with NVRTC, run them through the CUDA Driver API, inspect what
they cost and autotune them.

    import cupy, ptxrt
    program = ptxrt.Program(source)
    scale = ptxrt.Jit.shared().kernel(program, "scale", defines={"BLOCK": 256})
    x = cupy.arange(1000, dtype=cupy.float32)
    scale(ptxrt.blocks_for(x.size, 256), 256, (x, 2.0, x.size))   # CuPy's or PyTorch's arrays

Importing needs no GPU: compiling, resource reports and dry-run plans run anywhere. Every failure
raises ptxrt.Error. The Kernel Tuner interface is ptxrt.kernel_tuner (tune_kernel, run_kernel).
"""
from __future__ import annotations

from ._ptxrt import (
    Context,
    Device,
    DeviceMemory,
    Error,
    Event,
    Graph,
    GraphExec,
    Image,
    Jit,
    Kernel,
    Module,
    Problem,
    Program,
    Stream,
    Symbol,
    TunedKernel,
    compile,
    device_count,
    nvrtc_version,
    plan,
    supported_architectures,
    tune,
)
from .arrays import DeviceArray, to_device

__version__ = "0.1.0"

__all__ = [
    "Context", "Device", "DeviceArray", "DeviceMemory", "Error", "Event", "Graph", "GraphExec",
    "Image", "Jit", "Kernel", "Module", "Problem", "Program", "Stream", "Symbol", "TunedKernel",
    "blocks_for", "compile", "device_count", "nvrtc_version", "plan", "supported_architectures",
    "to_device", "tune",
]


def blocks_for(count: int, per_block: int) -> int:
    """The blocks of `per_block` threads that cover `count` elements (count / per_block, rounded up)."""
    if per_block <= 0:
        raise ValueError(f"blocks_for: per_block must be above 0, not {per_block}")
    return -(-count // per_block)
