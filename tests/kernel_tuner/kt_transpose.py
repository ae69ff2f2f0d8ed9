#!/usr/bin/env python3
"""Kernel Tuner's brute-force tune of transpose.cu (an 8192x8192 float matrix), checked against
numpy's transpose; results kept in the cache file named by the first argument (default
kt_transpose.json)."""
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import tune_kernel

kernel_file = str(Path(__file__).with_name("transpose.cu"))
width = height = 8192
A = np.arange(width * height, dtype=np.float32).reshape(height, width)
B = np.zeros((width, height), dtype=np.float32)
args = [B, A]
answer = [np.ascontiguousarray(A.T), None]

tune_params = dict()
tune_params["a_width"] = [width]
tune_params["a_height"] = [height]
tune_params["block_size_x"] = [16, 32, 64]
tune_params["block_size_y"] = [1, 2, 4, 8, 16, 32]
tune_params["use_padding"] = [0, 1]
tune_params["read_only"] = [0, 1]

restrictions = ["block_size_y <= block_size_x", "block_size_x * block_size_y <= 1024"]

tune_kernel("transpose", kernel_file, (width, height), args, tune_params,
            grid_div_x=["block_size_x"], grid_div_y=["block_size_x"], restrictions=restrictions,
            answer=answer, atol=0, strategy="brute_force",
            cache=sys.argv[1] if len(sys.argv) > 1 else "kt_transpose.json", lang="CuPy")
