#!/usr/bin/env python3
"""Kernel Tuner's brute-force tune of diffusion.cu (one step of 2-D heat diffusion on 4096x4096
cells), checked against the answer computed with numpy; results kept in the cache file named by
the first argument (default kt_diffusion.json)."""
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import tune_kernel

kernel_file = str(Path(__file__).with_name("diffusion.cu"))
nx = ny = 4096
alpha = np.float32(0.2)
current = (np.random.rand(ny, nx) * 100).astype(np.float32)
following = np.zeros_like(current)
args = [following, current, alpha]

expected = current.copy()
centre = current[1:-1, 1:-1]
expected[1:-1, 1:-1] = centre + alpha * (current[1:-1, :-2] + current[1:-1, 2:] + current[:-2, 1:-1]
                                         + current[2:, 1:-1] - np.float32(4) * centre)
answer = [expected, None, None]

tune_params = dict()
tune_params["nx"] = [nx]
tune_params["ny"] = [ny]
tune_params["block_size_x"] = [32, 64, 128, 256]
tune_params["block_size_y"] = [1, 2, 4, 8, 16]
tune_params["tile_size_y"] = [1, 2, 4]
tune_params["use_shared"] = [0, 1]

restrictions = ["block_size_x * block_size_y >= 64 and block_size_x * block_size_y <= 1024"]

tune_kernel("diffuse", kernel_file, (nx, ny), args, tune_params,
            grid_div_y=["block_size_y", "tile_size_y"], restrictions=restrictions,
            answer=answer, atol=1e-3, strategy="brute_force",
            cache=sys.argv[1] if len(sys.argv) > 1 else "kt_diffusion.json", lang="CuPy")
