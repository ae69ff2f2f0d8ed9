#!/usr/bin/env python3
"""A complete ptxrt program in Python: compile a kernel specialised by a define, read what it
costs the SM (no GPU needed), launch it on NumPy data copied to the GPU, and check the result.

    python3 examples/python/saxpy.py [n]
"""
import sys

import numpy as np

import ptxrt

SOURCE = r'''
// ptxrt: define BLOCK in {64, 128, 256, 512, 1024} default 256
extern "C" __global__ void __launch_bounds__(BLOCK) saxpy(float* out, const float* x,
                                                          const float* y, float a, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
'''


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_003
    block = 256
    program = ptxrt.Program(SOURCE, "saxpy.cu")
    for kernel in ptxrt.compile(program, arch="sm_90", defines={"BLOCK": block}).resources([block]):
        occupancy = kernel["occupancy"][0]
        print(f"{kernel['name']}: {kernel['registers']} registers, "
              f"{occupancy['fraction']:.0%} occupancy on sm_90 ({occupancy['limit']})")
    if ptxrt.device_count() == 0:
        print("no CUDA device: compiled only")
        return 0
    rng = np.random.default_rng()
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    saxpy = ptxrt.Jit.shared().kernel(program, "saxpy", defines={"BLOCK": block})
    out = ptxrt.DeviceArray(n, np.float32)
    out.fill_bytes(0xFF)  # NaN: an element the kernel misses shows
    saxpy(ptxrt.blocks_for(n, block), block, (out, ptxrt.to_device(x), ptxrt.to_device(y), 2.0, n))
    error = float(np.max(np.abs(out.to_numpy() - (np.float32(2.0) * x + y))))
    print(f"saxpy of {n} floats on {ptxrt.Device(0).name}: max error {error:g}")
    return 0 if error <= 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
