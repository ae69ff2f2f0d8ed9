#!/usr/bin/env python3
"""Kernel Tuner's brute-force tune of squared_distance.cu (a cost function over 2^24 values, one
partial cost per block). How many partials there are depends on the config, so the check compares
their total with the cost numpy computes; results kept in the cache file named by the first
argument (default kt_squared_distance.json)."""
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import tune_kernel

kernel_file = str(Path(__file__).with_name("squared_distance.cu"))
size = 16_777_216
model = np.random.uniform(-1, 1, size).astype(np.float32)
observed = (model + np.random.uniform(-0.1, 0.1, size)).astype(np.float32)
n = np.int32(size)

tune_params = dict()
tune_params["block_size_x"] = [64, 128, 256, 512, 1024]
tune_params["items_per_thread"] = [1, 2, 4, 8, 16]
tune_params["use_shuffle"] = [0, 1]

restrictions = ["block_size_x * items_per_thread >= 256"]

# Kernel Tuner zeroes the outputs before the checked run, so the partials past the config's add 0.
partial_costs = np.zeros((size + 63) // 64, dtype=np.float32)
args = [partial_costs, model, observed, n]
cost = np.sum((model.astype(np.float64) - observed) ** 2)
answer = [np.array([cost]), None, None, None]


def verify(answer, result, atol=None):
    return abs(np.sum(result[0], dtype=np.float64) - answer[0][0]) <= 1e-4 * answer[0][0]


tune_kernel("squared_distance", kernel_file, size, args, tune_params,
            grid_div_x=["block_size_x", "items_per_thread"], restrictions=restrictions,
            answer=answer, verify=verify, strategy="brute_force",
            cache=sys.argv[1] if len(sys.argv) > 1 else "kt_squared_distance.json", lang="CuPy")
