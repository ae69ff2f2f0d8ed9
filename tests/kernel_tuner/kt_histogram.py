#!/usr/bin/env python3
"""Kernel Tuner's brute-force tune of histogram.cu (256 bins over 2^25 values), checked against
numpy's count; results kept in the cache file named by the first argument (default
kt_histogram.json)."""
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import tune_kernel

kernel_file = str(Path(__file__).with_name("histogram.cu"))
size = 33_554_432
values = np.random.randint(0, 256, size).astype(np.uint32)
bins = np.zeros(256, dtype=np.uint32)
n = np.int32(size)
args = [bins, values, n]
answer = [np.bincount(values, minlength=256).astype(np.uint32), None, None]

tune_params = dict()
tune_params["block_size_x"] = [64, 128, 256, 512, 1024]
tune_params["items_per_thread"] = [1, 4, 16, 64]
tune_params["use_shared"] = [0, 1]

tune_kernel("histogram", kernel_file, size, args, tune_params,
            grid_div_x=["block_size_x", "items_per_thread"], answer=answer, atol=0,
            strategy="brute_force",
            cache=sys.argv[1] if len(sys.argv) > 1 else "kt_histogram.json", lang="CuPy")
