#!/usr/bin/env python3
"""Kernel Tuner's brute-force tune of spmv.cu on a CSR matrix of 2^20 rows whose lengths vary (16
nonzeros a row on average: sorted random row offsets), checked against the product computed with
numpy; results kept in the cache file named by the first argument (default
kt_spmv_irregular.json)."""
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import tune_kernel

kernel_file = str(Path(__file__).with_name("spmv.cu"))
rows = 1_048_576
nonzeros = rows * 16
inner_offsets = np.sort(np.random.randint(0, nonzeros + 1, rows - 1))
row_offsets = np.concatenate(([0], inner_offsets, [nonzeros])).astype(np.int32)
columns = np.random.randint(0, rows, nonzeros).astype(np.int32)
values = np.random.uniform(-1, 1, nonzeros).astype(np.float32)
x = np.random.uniform(-1, 1, rows).astype(np.float32)
y = np.zeros(rows, dtype=np.float32)
args = [y, row_offsets, columns, values, x]
products = np.concatenate(([0], np.cumsum(values.astype(np.float64) * x[columns])))
expected = (products[row_offsets[1:]] - products[row_offsets[:-1]]).astype(np.float32)
answer = [expected, None, None, None, None]

tune_params = dict()
tune_params["rows"] = [rows]
tune_params["block_size_x"] = [64, 128, 256, 512, 1024]
tune_params["threads_per_row"] = [1, 2, 4, 8, 16, 32]
tune_params["read_only"] = [0, 1]

restrictions = ["block_size_x // threads_per_row <= 256"]

tune_kernel("spmv", kernel_file, "rows * threads_per_row", args, tune_params, restrictions=restrictions,
            answer=answer, atol=1e-3, strategy="brute_force",
            cache=sys.argv[1] if len(sys.argv) > 1 else "kt_spmv_irregular.json", lang="CuPy")
