#!/usr/bin/env python3
"""A Kernel Tuner script run by ptxrt, unchanged but for its import line: a 3x3 box blur of a
2000x1500 image (sizes no tile divides), its block and tile shape tuned, its output checked
against NumPy's.

    python3 examples/python/kt_blur.py
"""
import numpy as np
from ptxrt.kernel_tuner import tune_kernel  # was: from kernel_tuner import tune_kernel

kernel_string = r"""
__global__ void blur(float* out, const float* in, int width, int height) {
  int y = blockIdx.y * block_size_y + threadIdx.y;
  if (y >= height) return;
  for (int t = 0; t < tile_size_x; ++t) {
    int x = (blockIdx.x * tile_size_x + t) * block_size_x + threadIdx.x;
    if (x >= width) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int xx = min(max(x + dx, 0), width - 1), yy = min(max(y + dy, 0), height - 1);
        sum += in[yy * width + xx];
      }
    out[y * width + x] = sum / 9.0f;
  }
}
"""

width, height = 2000, 1500
image = np.random.rand(height, width).astype(np.float32)
padded = np.pad(image, 1, mode="edge")
expected = sum(padded[1 + dy:1 + dy + height, 1 + dx:1 + dx + width]
               for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / np.float32(9.0)
args = [np.zeros_like(image), image, np.int32(width), np.int32(height)]

tune_params = dict()
tune_params["block_size_x"] = [16, 32, 64, 128]
tune_params["block_size_y"] = [1, 2, 4, 8, 16]
tune_params["tile_size_x"] = [1, 2, 4]
restrictions = ["block_size_x * block_size_y >= 64", "block_size_x * block_size_y <= 1024"]

results, env = tune_kernel("blur", kernel_string, (width, height), args, tune_params,
                           grid_div_x=["block_size_x", "tile_size_x"], restrictions=restrictions,
                           answer=[expected.astype(np.float32), None, None, None], atol=1e-5)
best = min(results, key=lambda result: result["time"])
print(f"{len(results)} configs on {env['device_name']}; the fastest: "
      + ", ".join(f"{name}={best[name]}" for name in tune_params) + f", {best['time']:.4f} ms")
