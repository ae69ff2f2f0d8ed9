#!/usr/bin/env python3
"""Kernel Tuner's brute-force tune of convolution_2d.cu (a 15x15 filter in constant memory over a
4096x4096 image), checked against the naive kernel beside it; results kept in the cache file named
by the first argument (default kt_convolution_2d.json)."""
import sys
from pathlib import Path

import numpy as np
from kernel_tuner import run_kernel, tune_kernel

kernel_file = str(Path(__file__).with_name("convolution_2d.cu"))
width = height = 4096
filter_size = 15
problem_size = (width, height)

output = np.zeros(width * height, dtype=np.float32)
image = np.random.rand((width + filter_size - 1) * (height + filter_size - 1)).astype(np.float32)
filter_weights = np.random.rand(filter_size * filter_size).astype(np.float32)
args = [output, image]
cmem_args = {"filter": filter_weights}

tune_params = dict()
tune_params["image_width"] = [width]
tune_params["image_height"] = [height]
tune_params["filter_width"] = [filter_size]
tune_params["filter_height"] = [filter_size]
tune_params["block_size_x"] = [16, 32, 64, 128]
tune_params["block_size_y"] = [1, 2, 4, 8, 16]
tune_params["tile_size_x"] = [1, 2, 4]
tune_params["tile_size_y"] = [1, 2, 4]
tune_params["use_padding"] = [0, 1]

restrictions = [
    "block_size_x * block_size_y >= 64",
    "block_size_x * block_size_y <= 1024",
    "tile_size_x * tile_size_y <= 4",
    "use_padding == 0 or block_size_x % 32 != 0",
]

reference_params = {name: values[0] for name, values in tune_params.items()}
reference_params.update(block_size_x=16, block_size_y=16)
reference = run_kernel("convolution_2d_reference", kernel_file, problem_size, args, reference_params,
                       cmem_args=cmem_args, lang="CuPy")
answer = [reference[0], None]

tune_kernel("convolution_2d", kernel_file, problem_size, args, tune_params,
            grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
            restrictions=restrictions, cmem_args=cmem_args, answer=answer, atol=1e-3,
            strategy="brute_force",
            cache=sys.argv[1] if len(sys.argv) > 1 else "kt_convolution_2d.json", lang="CuPy")
