#!/usr/bin/env python3
"""Kernel Tuner's brute-force tune of matmul.cu (C = A B, 2048x2048 floats), checked against
numpy's product; results kept in the cache file named by the first argument (default
kt_matmul.json)."""
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import tune_kernel

kernel_file = str(Path(__file__).with_name("matmul.cu"))
n = 2048
A = np.random.uniform(-1, 1, (n, n)).astype(np.float32)
B = np.random.uniform(-1, 1, (n, n)).astype(np.float32)
C = np.zeros_like(A)
args = [C, A, B]
answer = [A @ B, None, None]

tune_params = dict()
tune_params["n"] = [n]
tune_params["block_size_x"] = [16, 32]
tune_params["block_size_y"] = [4, 8, 16]
tune_params["tile_size_x"] = [1, 2, 4, 8]
tune_params["tile_size_y"] = [1, 2, 4, 8]
tune_params["tile_k"] = [16, 32]

restrictions = ["block_size_x * tile_size_x <= 128", "block_size_y * tile_size_y <= 128"]

tune_kernel("matmul", kernel_file, (n, n), args, tune_params,
            grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
            restrictions=restrictions, answer=answer, atol=1e-3, strategy="brute_force",
            cache=sys.argv[1] if len(sys.argv) > 1 else "kt_matmul.json", lang="CuPy")
