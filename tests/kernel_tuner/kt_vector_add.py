#!/usr/bin/env python3
"""Kernel Tuner's brute-force tune of vector_add.cu (c = a + b), its results kept in the cache file
named by the first argument (default kt_vector_add.json)."""
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import tune_kernel

kernel_file = str(Path(__file__).with_name("vector_add.cu"))
size = 16_777_216
a = np.random.rand(size).astype(np.float32)
b = np.random.rand(size).astype(np.float32)
c = np.zeros_like(a)
n = np.int32(size)
args = [c, a, b, n]

tune_params = dict()
tune_params["block_size_x"] = [64 * i for i in range(1, 17)]
tune_params["tile_size_x"] = [1, 2, 4]

answer = [a + b, None, None, None]

tune_kernel("vector_add", kernel_file, size, args, tune_params,
            grid_div_x=["block_size_x", "tile_size_x"], answer=answer,
            strategy="brute_force", cache=sys.argv[1] if len(sys.argv) > 1 else "kt_vector_add.json",
            lang="CuPy")
