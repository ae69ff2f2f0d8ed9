#!/usr/bin/env python3
"""Kernel Tuner's brute-force tune of spmv.cu (y = A x, a CSR matrix of 2^20 rows with 16 nonzeros
in each, in random columns), checked against the product computed with numpy; results kept in the
cache file named by the first argument (default kt_spmv.json)."""
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import tune_kernel

kernel_file = str(Path(__file__).with_name("spmv.cu"))
rows = 1_048_576
per_row = 16
row_offsets = np.arange(0, rows * per_row + 1, per_row, dtype=np.int32)
columns = np.random.randint(0, rows, rows * per_row).astype(np.int32)
values = np.random.uniform(-1, 1, rows * per_row).astype(np.float32)
x = np.random.uniform(-1, 1, rows).astype(np.float32)
y = np.zeros(rows, dtype=np.float32)
args = [y, row_offsets, columns, values, x]
expected = (values * x[columns]).reshape(rows, per_row).sum(axis=1, dtype=np.float32)
answer = [expected, None, None, None, None]

tune_params = dict()
tune_params["rows"] = [rows]
tune_params["block_size_x"] = [64, 128, 256, 512, 1024]
tune_params["threads_per_row"] = [1, 2, 4, 8, 16, 32]
tune_params["read_only"] = [0, 1]

restrictions = ["block_size_x // threads_per_row <= 256"]

tune_kernel("spmv", kernel_file, "rows * threads_per_row", args, tune_params, restrictions=restrictions,
            answer=answer, atol=1e-4, strategy="brute_force",
            cache=sys.argv[1] if len(sys.argv) > 1 else "kt_spmv.json", lang="CuPy")
