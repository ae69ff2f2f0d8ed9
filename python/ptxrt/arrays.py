"""Device arrays of ptxrt's own: NumPy's shape and dtype over ptxrt.DeviceMemory, with the CUDA
array interface, so that CuPy, PyTorch and Numba read them without a copy
(cupy.asarray(array), torch.as_tensor(array, device="cuda"))."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from ._ptxrt import Context, DeviceMemory

Shape = Union[int, Sequence[int]]


class DeviceArray:
    """A C-contiguous array in device memory, freed with the object."""

    def __init__(self, shape: Shape, dtype: Any = np.float32, context: Optional[Context] = None):
        self.shape: Tuple[int, ...] = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)  # type: ignore[arg-type]
        if any(n < 0 for n in self.shape):
            raise ValueError(f"DeviceArray: a negative extent in shape {self.shape}")
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize
        self.memory = DeviceMemory(self.nbytes, context)

    @property
    def address(self) -> int:
        """The device address a kernel receives for this array."""
        return self.memory.address

    @property
    def __cuda_array_interface__(self) -> dict:
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.memory.address, False),
            "strides": None,
            "version": 3,
        }

    def upload(self, values: np.ndarray) -> "DeviceArray":
        """Copies `values` in (its shape may differ; its size and dtype may not)."""
        host = np.ascontiguousarray(values)
        if host.dtype != self.dtype or host.size != self.size:
            raise ValueError(
                f"upload: {host.size} {host.dtype} values into an array of {self.size} {self.dtype}")
        self.memory.upload(host.reshape(-1).view(np.uint8))
        return self

    def to_numpy(self) -> np.ndarray:
        """A host copy (waits for the work on the context's default stream that writes it)."""
        host = np.empty(self.shape, self.dtype)
        self.memory.download(host.reshape(-1).view(np.uint8))
        return host

    def fill_bytes(self, value: int) -> None:
        """Sets every byte to `value` (0xFF in a float array is NaN: a poisoned output)."""
        self.memory.fill_bytes(value)

    def __repr__(self) -> str:
        return f"<ptxrt.DeviceArray shape={self.shape} dtype={self.dtype} at 0x{self.address:x}>"


def to_device(values: Any, context: Optional[Context] = None) -> DeviceArray:
    """A DeviceArray holding a copy of a host array (anything numpy.asarray takes)."""
    host = np.ascontiguousarray(values)
    return DeviceArray(host.shape, host.dtype, context).upload(host)
