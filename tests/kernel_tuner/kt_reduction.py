#!/usr/bin/env python3
"""Kernel Tuner's brute-force tune of reduction.cu's first stage (one partial sum per block over
2^25 floats). How many partials there are, and what each holds, depends on num_blocks, so the
check compares their total with the input's; results kept in the cache file named by the first
argument (default kt_reduction.json)."""
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import tune_kernel

kernel_file = str(Path(__file__).with_name("reduction.cu"))
size = 33_554_432
values = np.random.rand(size).astype(np.float32)
n = np.int32(size)

tune_params = dict()
tune_params["block_size_x"] = [64, 128, 256, 512, 1024]
tune_params["vector"] = [1, 2, 4]
tune_params["use_shuffle"] = [0, 1]
tune_params["num_blocks"] = [528, 1056, 2112]

# Kernel Tuner zeroes the outputs before the checked run, so the partials past num_blocks add 0.
partial_sums = np.zeros(max(tune_params["num_blocks"]), dtype=np.float32)
args = [partial_sums, values, n]
total = np.sum(values, dtype=np.float64)
answer = [np.array([total]), None, None]


def verify(answer, result, atol=None):
    return abs(np.sum(result[0], dtype=np.float64) - answer[0][0]) <= 1e-5 * answer[0][0]


tune_kernel("sum_floats", kernel_file, "num_blocks", args, tune_params, grid_div_x=[],
            answer=answer, verify=verify, strategy="brute_force",
            cache=sys.argv[1] if len(sys.argv) > 1 else "kt_reduction.json", lang="CuPy")
