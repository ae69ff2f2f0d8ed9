#!/usr/bin/env python3
"""Fits the SGEMM shape heuristic (runtime/blas/sgemm_heuristic.cpp) to recorded benches.

    scripts/fit_sgemm_heuristic.py docs/perf-data/sgemm-menu-shapes-h200.json.xz \
        docs/perf-data/sgemm-menu-11-h200.json.xz ... --dram-gb-per-s 4800 \
        [--search N [--seed S] [--cross-validate]]

Each bench (`ptxrt bench sgemm --menu`, its --json, e.g. of `--random 20 --seed 11`, or the tables
it writes as each shape ends, on stderr with --json; or an older `--all` bench) times every menu
config at every split whose slices are 64 deep or more on each shape, so that no pick of a model
refitted here goes untimed; either may be xz-compressed (a name ending in .xz). This script mirrors
the C++ model (rounds of resident blocks, each block's flop at its config's full rate, a per-round
overhead, ring fill and stores of C, the split's reduction) and prints, per shape, the config the
model picks, its measured rate and the best measured. With --search N it runs N steps of a seeded
random search over the model's constants and the menu's rates, each kept within bounds that
preserve its physical meaning, scoring the measured rate of each pick against the shape's best (the
worst shape counted thrice), and prints the best set found. With --cross-validate it instead fits
to all benches but one and prints how close the picks come to the best measured on that one, for
each bench: what a fit is worth on shapes it never saw (a shape several benches timed counts with
the last one's rows, and is left out of the training of each bench that timed it). The C++ file is
the reference: copy a chosen set there by hand, then rerun this without --search to check it.

--keep-best-at MxNxK (repeatable) keeps the search to sets whose pick at that benched shape
measures within 0.5 % of its best: the large squares, which a fit to many small shapes would
otherwise trade for a little elsewhere.

Five switches try a change to the model before the C++ takes it: --constant NAME=VALUE
(repeatable) sets one of the model's constants (CONSTANTS below, e.g. reduce_launch_ms, a split's
fixed cost) before the picks, or before the search starts from them; --min-slice-depth N rates
splits whose slices are N deep or more (the C++: 128); --few-blocks-slice-depth N also rates
those N deep or more where the split's blocks fit one round of the SMs (the C++: never);
--share-by warps counts a partial round's occupancy share in resident warps alone (full at
warps_for_full_rate) instead of warps times each thread's TM·TN results (the C++, full at
results_for_full_rate: a thread of 4×4 results has a quarter of the independent FMAs of one of
8×8 to hide latency with); and
--dram-gb-per-s gives the benched device's theoretical DRAM bandwidth where the benches do not
record it (benches before `dram_gb_per_s` was in the JSON; 4800 for an H200, NVIDIA's figure; the
C++ reads it from the device: `ptxrt devices` shows it).
"""
import argparse
import json
import math
import os
import random
import re

from sgemm_heldout import read_text

SM_COUNT = 132
DRAM_GB_PER_S = 3352.0  # the H100 SXM's theoretical: 2 x 2619 MHz x 5120 bits
MIN_SLICE_DEPTH = 128
# sgemm_vector_a_min_depth: the FFMA configs load A by vectors only where slices are deeper.
VECTOR_A_MIN_DEPTH = 256
# sgemm_tensor_cores_min_k: the tensor cores' configs are rated only where K is this deep.
TENSOR_CORES_MIN_K = 224
# --few-blocks-slice-depth: slices this deep are rated too where the split's blocks fit one round
# of the SMs (0: never).
FEW_BLOCKS_SLICE_DEPTH = 0


def declared_splits():
    """SPLIT_K's declared values in ptx_src/sgemm.cu, ascending (the C++ reads the same line)."""
    kernel = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ptx_src', 'sgemm.cu')
    with open(kernel, encoding='utf-8') as source:
        line = re.search(r'ptxrt: define SPLIT_K in \{([^}]*)\}', source.read()).group(1)
    return sorted(int(value) for value in line.split(','))


SPLITS = declared_splits()
# sgemm_pad_b_max_share and sgemm_pad_reference_gflop_per_sm: a ragged B is copied to padded
# rows (sgemm_path) where the copy, at this share of the DRAM bandwidth after a launch of
# PAD_LAUNCH_MS, takes at most that share of the product at that rate per SM.
PAD_B_MAX_SHARE = 0.25
PAD_REFERENCE_GFLOP_PER_SM = 303.0
PAD_COPY_EFFICIENCY = 0.8
PAD_LAUNCH_MS = 6e-3

# The C++ constants (sgemm_heuristic.cpp) and their search bounds; warps_for_full_rate is only
# --share-by warps' (the C++ counts results).
# How a partial round's occupancy share is counted: 'results' (the C++) or 'warps' (--share-by).
SHARE_BY = 'results'
CONSTANTS = dict(round_overhead_ms=0.3959e-3, fill_bytes_per_ms=47.87e6, warps_for_full_rate=4.95,
                 results_for_full_rate=585.5,
                 reduce_launch_ms=4.0e-3, memory_efficiency=2.135, split_penalty=1.01,
                 store_bytes_per_ms=24.64e6)
BOUNDS = dict(round_overhead_ms=(0.3e-3, 2e-3), fill_bytes_per_ms=(20e6, 100e6),
              warps_for_full_rate=(4.0, 16.0), results_for_full_rate=(64.0, 2048.0),
              reduce_launch_ms=(1e-3, 8e-3),
              memory_efficiency=(0.6, 3.0), split_penalty=(1.0, 1.1),
              store_bytes_per_ms=(5e6, 60e6))
# The menu: (warps_m, warps_n, lanes_m, thread_m, thread_n, block_k, stages, min_blocks,
# vector_a, tf32x3), full rate aligned, any alignment (TFLOP/s), registers per thread through the
# aligned entries and through the any-alignment one (as the C++ menu says).
MENU = [((4, 2, 4, 8, 16, 32, 4, 1, True, False), 50.9, 47.29, 250, 244),
        ((2, 4, 4, 8, 8, 16, 4, 1, True, False), 50.55, 39.59, 128, 151),
        ((4, 2, 4, 8, 8, 16, 3, 2, False, False), 45.95, 38.77, 128, 128),
        ((2, 2, 8, 8, 8, 16, 3, 2, True, False), 46.03, 40.85, 153, 152),
        ((2, 2, 4, 8, 8, 16, 3, 3, True, False), 49.31, 40.81, 147, 155),
        ((2, 2, 4, 8, 4, 16, 3, 4, True, False), 43.19, 36.66, 96, 106),
        ((2, 2, 4, 4, 4, 16, 3, 4, True, False), 33.53, 28.48, 72, 80),
        ((4, 1, 4, 8, 8, 16, 3, 3, True, False), 42.11, 39.08, 151, 152),
        ((2, 2, 4, 8, 4, 8, 4, 4, True, False), 39.59, 30.49, 95, 93),
        ((4, 1, 8, 8, 8, 16, 3, 3, True, False), 30.39, 29.97, 168, 164),
        ((4, 1, 4, 8, 4, 16, 3, 4, True, False), 33.5, 32.58, 120, 120),
        ((2, 1, 8, 8, 8, 16, 3, 4, True, False), 33.71, 31.14, 186, 190),
        ((2, 2, 8, 4, 4, 16, 3, 4, True, False), 30.36, 26.31, 79, 72),
        ((1, 4, 4, 8, 4, 16, 3, 4, True, False), 37.59, 33.98, 95, 118),
        ((4, 1, 4, 8, 8, 8, 4, 3, True, False), 40.0, 36.6, 149, 127),
        ((2, 2, 4, 8, 8, 16, 3, 4, True, False), 45.95, 40.75, 127, 124),
        # 3xTF32 on the tensor cores (docs/perf-notes.md, "3xTF32 on the tensor cores").
        ((2, 4, 8, 8, 16, 16, 3, 1, True, True), 55.53, 53.3, 255, 255),
        ((2, 4, 8, 8, 8, 16, 3, 1, True, True), 53.52, 47.8, 254, 243),
        ((2, 2, 8, 8, 8, 16, 3, 2, True, True), 51.1, 49.5, 255, 252),
        ((2, 2, 4, 8, 8, 16, 3, 2, True, True), 50.2, 47.1, 255, 255),
        ((1, 4, 4, 8, 4, 16, 3, 3, True, True), 40.5, 39.5, 165, 165),
        # 128x32, for products of few columns ("A 128×32 tile on the tensor cores, and seed 7878").
        ((4, 1, 4, 8, 4, 16, 3, 3, True, True), 38.0, 37.0, 168, 168)]
# How far search() moves a rate from MENU's, by what it refits (--refit): the FFMA entries with
# the constants, the tensor cores' rates alone, or the FFMA entries' any-alignment rates alone.
# Most menu benches in docs/perf-data predate the tensor cores and count a pick of theirs untimed,
# so the FFMA fit leaves the tensor cores' rates as they are; their own fit moves their rates
# further, and nothing else. The any-alignment fit is for a change to that path alone (the
# kernel's ragged epilogue), judged by benches of ragged shapes.
RATE_STEP = {'ffma': 0.05, 'tf32x3': 0.3, 'any-alignment': 0.1}


# --entry: the entries search() alone moves, each a tile (block_m, block_n) or a dict of some of
# sgemm.cu's constants (empty: every entry that --refit names).
ONLY_ENTRIES = []


def matches(config, entry):
    """Whether the menu's `config` is the --entry `entry`: its tile, or those constants' values."""
    if isinstance(entry, tuple):
        return tile(config)[:2] == entry
    values = dict(zip(ENTRY_NAMES, config))
    return all(values[name] == value for name, value in entry.items())


def fitted(refit, only=None):
    """The indices in MENU of the entries search() refits: of those `refit` names, the ones that
    match an entry of `only` (default: ONLY_ENTRIES; empty: all of them)."""
    only = ONLY_ENTRIES if only is None else only
    return [index for index, entry in enumerate(MENU) if entry[0][9] == (refit == 'tf32x3') and
            (not only or any(matches(entry[0], one) for one in only))]


# What an SM of CC 9.0 holds (include/ptxrt/core/occupancy.hpp's table): registers in 4
# sub-partitions, allocated per warp in units of 256; shared memory with 1 KiB reserved per
# block, in units of 128.
SM_WARPS, SM_BLOCKS, SM_REGISTERS, SM_SHARED = 64, 32, 65536, 228 * 1024

ROW = re.compile(r'[* ]\s+([\d.]+) \[.*?\]\s+[\d.]+%\s+\S+.*?\s(\d+x\d+x\d+ \d+x\d+/thread .*?)'
                 r'(?: \((?:default, )?listed\))?(?:\s+<- best)?\s*$')
CONFIG = re.compile(r'(\d+)x(\d+)x(\d+) (\d+)x(\d+)/thread (\d+)x(\d+) warps lanes (\d+)x(\d+) '
                    r'(\d+) stages min (\d+) blocks/SM(.*)')


def config_key(text):
    g = CONFIG.match(text).groups()
    rest = g[11]
    if 'group' in rest or 'skip' in rest:
        return None
    split = int(re.search(r'split (\d+)', rest).group(1)) if 'split' in rest else 1
    return (int(g[5]), int(g[6]), int(g[7]), int(g[3]), int(g[4]), int(g[2]), int(g[9]),
            int(g[10]), 'vector A' in rest, split, '3xTF32' in rest)


DEFINES = ('WARPS_M', 'WARPS_N', 'LANES_M', 'TM', 'TN', 'BK', 'STAGES', 'MIN_BLOCKS')
# The constants a menu entry's config carries, in its order.
ENTRY_NAMES = DEFINES + ('VECTOR_A', 'TF32X3')


def read_bench_json(path):
    shapes = {}
    for record in json.loads(read_text(path))['shapes']:
        rows = {'cublas': record['cublas_tflops']}
        for row in record['rows']:
            config = row['config']
            if row.get('failure') or config['GROUP_M'] != 1 or config['SKIP_IDLE_WARPS']:
                continue
            key = (tuple(config[name] for name in DEFINES) +
                   (bool(config['VECTOR_A']), config['SPLIT_K'], bool(config.get('TF32X3', 0))))
            rows[key] = row['tflops']
        shapes[(record['m'], record['n'], record['k'])] = rows
    return shapes


def recorded_dram_gb_per_s(paths):
    """The theoretical DRAM bandwidth the JSON benches recorded, None where none did. An error
    where they disagree (benches of different devices fit no one model) or where one records a
    device of other than SM_COUNT SMs (the model's rounds and rates count those)."""
    reports = {path: json.loads(read_text(path)) for path in paths if is_json(path)}
    for path, report in reports.items():
        if report.get('sm_count', SM_COUNT) != SM_COUNT:
            raise SystemExit(f'{path}: a device of {report["sm_count"]} SMs; this model counts '
                             f'{SM_COUNT}')
    recorded = {report.get('dram_gb_per_s') for report in reports.values()} - {None}
    if len(recorded) > 1:
        raise SystemExit(f'the benches record different DRAM bandwidths: {sorted(recorded)}')
    return recorded.pop() if recorded else None


def is_json(path):
    """Whether a bench is its JSON rather than its tables (either may be xz-compressed)."""
    return path.removesuffix('.xz').endswith('.json')


def read_bench(path):
    if is_json(path):
        return read_bench_json(path)
    shapes, shape = {}, None
    for line in read_text(path).splitlines():
        header = re.match(r'== (\d+)x(\d+)x(\d+)', line)
        if header:
            shape = tuple(map(int, header.groups()))
            shapes[shape] = {}
        elif shape and 'cuBLAS SGEMM (no TF32)' in line:
            shapes[shape]['cublas'] = float(line.split()[0])
        elif shape:
            row = ROW.match(line)
            if row and config_key(row.group(2)):
                shapes[shape][config_key(row.group(2))] = float(row.group(1))
    # A run stopped early (its tables are written as each shape ends) leaves its last shape's
    # header without a table.
    return {shape: rows for shape, rows in shapes.items() if 'cublas' in rows and len(rows) > 1}


def ceil_div(a, b):
    return -(-a // b)


def tile(config):
    warps_m, warps_n, lanes_m, thread_m, thread_n, block_k, stages, min_blocks = config[:8]
    return (warps_m * lanes_m * thread_m, warps_n * (32 // lanes_m) * thread_n, block_k, stages,
            min_blocks, warps_m * warps_n)


def slice_depth(config, split, k):
    block_k = tile(config)[2]
    return k if split <= 1 else min(ceil_div(ceil_div(k, block_k), split) * block_k, k)


def resident_blocks(config, registers):
    """Blocks of `config` an SM holds: compute_occupancy's arithmetic for CC 9.0."""
    block_m, block_n, block_k, stages, _, warps = tile(config)
    warp_registers = ceil_div(registers * 32, 256) * 256
    by_registers = SM_REGISTERS // 4 // warp_registers * 4 // warps
    # SgemmConfig::shared_bytes: the FFMAs' ring, or (tf32x3) A by rows and B padded by 8.
    stage_floats = (block_m * (block_k + 4) + block_k * (block_n + 8) if config[9]
                    else block_k * (block_m + 4 + block_n))
    shared = ceil_div(stages * stage_floats * 4 + 1024, 128) * 128
    return min(SM_WARPS // warps, SM_BLOCKS, by_registers, SM_SHARED // shared)


def estimate_ms(config, split, tflops, registers, m, n, k, c):
    block_m, block_n, block_k, stages, _, warps = tile(config)
    resident = resident_blocks(config, registers)
    blocks = ceil_div(m, block_m) * ceil_div(n, block_n) * split
    slots = SM_COUNT * resident
    sm_rate = tflops * 1e9 / SM_COUNT
    depth = slice_depth(config, split, k)
    # Whole BK tiles (the last padded with zeros), but for the FFMAs at BK 16 unsplit, which stop
    # at K.
    stops_at_k = not config[9] and block_k == 16 and split == 1
    computed_depth = depth if stops_at_k else ceil_div(depth, block_k) * block_k
    block_flop = 2.0 * block_m * block_n * computed_depth
    fill = resident * min((stages - 1) * block_k, depth) * (block_m + block_n) * 4
    # The round's tiles of C stored (a warp's store touches a line per row of lanes, config[2]);
    # the other resident blocks' main loops hide the rest.
    store = block_m * block_n * 4 / c['store_bytes_per_ms'] * config[2] / 4
    overhead = c['round_overhead_ms'] + fill / c['fill_bytes_per_ms'] + store
    milliseconds = blocks // slots * (resident * block_flop / sm_rate + overhead)
    rest = blocks % slots
    if rest:
        def share(resident_warps):
            if SHARE_BY == 'results':
                results = resident_warps * config[3] * config[4]
                return min(1.0, math.sqrt(results / c['results_for_full_rate']))
            return min(1.0, math.sqrt(resident_warps / c['warps_for_full_rate']))
        busiest = math.ceil(rest / SM_COUNT)
        milliseconds += (busiest * block_flop /
                         (sm_rate * share(busiest * warps) / share(resident * warps)) + overhead)
    if split > 1:
        milliseconds += (2.0 * split * m * n * 4 /
                         (DRAM_GB_PER_S * c['memory_efficiency'] * 1e6) + c['reduce_launch_ms'])
    return milliseconds


def path(m, n, k, vector_a):
    """sgemm_path on 16-byte aligned addresses: 'vectors', 'padded_b' or 'any_alignment'."""
    if vector_a and k % 4 != 0:
        return 'any_alignment'
    if n % 4 == 0:
        return 'vectors'
    product_ms = 2.0 * m * n * k / (PAD_REFERENCE_GFLOP_PER_SM * 1e6 * SM_COUNT)
    padded = pad_ms(n, k) <= PAD_B_MAX_SHARE * product_ms
    return 'padded_b' if padded else 'any_alignment'


def pad_ms(n, k):
    pitch = ceil_div(n, 4) * 4
    return k * (n + pitch) * 4 / (DRAM_GB_PER_S * PAD_COPY_EFFICIENCY * 1e6) + PAD_LAUNCH_MS


def choose(m, n, k, c, menu):
    best = None
    # The pick drops vector A where it cannot run, so the rate is its path's without; the path
    # depends on neither the config nor the split.
    route = path(m, n, k, False)
    padding_ms = pad_ms(n, k) if route == 'padded_b' else 0.0
    for config, tflops, any_alignment_tflops, registers, any_alignment_registers in menu:
        if config[9] and k < TENSOR_CORES_MIN_K:
            continue
        if route == 'any_alignment':
            rate, registers = any_alignment_tflops, any_alignment_registers
        else:
            rate = tflops
        block_m, block_n = tile(config)[:2]
        tiles = ceil_div(m, block_m) * ceil_div(n, block_n)
        for split in SPLITS:
            depth = slice_depth(config, split, k)
            if split > 1 and depth < MIN_SLICE_DEPTH and not (
                    FEW_BLOCKS_SLICE_DEPTH and depth >= FEW_BLOCKS_SLICE_DEPTH
                    and tiles * split <= SM_COUNT):
                break
            milliseconds = estimate_ms(config, split, rate, registers, m, n, k, c) + padding_ms
            cost = milliseconds * (c['split_penalty'] if split > 1 else 1.0)
            if best is None or cost < best[0]:
                best = (cost, config, split)
    config, split = best[1], best[2]
    return config[:8] + (keeps_vector_a(config, split, m, n, k), split, config[9])


def keeps_vector_a(config, split, m, n, k, min_depth=VECTOR_A_MIN_DEPTH):
    """sgemm_pick_vector_a: vector A where the vector entry runs and, on the FFMA configs, where
    slices are deeper than `min_depth`."""
    return (config[8] and path(m, n, k, True) != 'any_alignment' and
            (config[9] or slice_depth(config, split, k) > min_depth))


def picks(shapes, c, menu):
    """(shape, pick, its measured rate or None, the best measured, cuBLAS) per shape."""
    for shape, rows in shapes.items():
        pick = choose(*shape, c, menu)
        best = max(rate for key, rate in rows.items() if key != 'cublas')
        got = rows.get(pick)
        if got is None and shallow_vector_a(shape, pick, menu):
            # Benches from before VECTOR_A_MIN_DEPTH timed this pick with vector A, which measured
            # up to 14 % slower: that rate stands in for it.
            got = rows.get(pick[:8] + (True,) + pick[9:])
        yield shape, pick, got, best, rows['cublas']


def shallow_vector_a(shape, pick, menu):
    """Whether `pick` is a menu entry with vector A that lost it to VECTOR_A_MIN_DEPTH alone."""
    entry = pick[:8] + (True, pick[10])
    return (not pick[8] and any(config == entry for config, *_ in menu) and
            keeps_vector_a(entry, pick[9], *shape, min_depth=0))


def shares(shapes, c, menu, untimed):
    """Each pick's measured rate over the shape's best measured; `untimed` for a pick the benches
    did not time."""
    return [(got / best if got else untimed) for _, _, got, best, _ in picks(shapes, c, menu)]


# Shapes (m, n, k) where a set's pick must measure within KEEP_BEST_SHARE of the best
# (--keep-best-at): the large squares, where users compare the family's best with cuBLAS.
KEEP_BEST_AT = set()
KEEP_BEST_SHARE = 0.995


def score(shapes, c, menu):
    # A pick the bench did not time counts as 0.85 of the best.
    of_best = shares(shapes, c, menu, 0.85)
    for shape, share in zip(shapes, of_best):
        if shape in KEEP_BEST_AT and share < KEEP_BEST_SHARE:
            return -math.inf
    return sum(of_best) + 2 * min(of_best)


def search(shapes, steps, seed=1, start=None, refit='ffma'):
    """From `start` (default: CONSTANTS) and MENU's rates, the best set the search finds; `refit`
    names the entries it moves (fitted()); the constants move only in a refit of all the FFMA
    entries (not with the tensor cores', the any-alignment rates or --entry)."""
    rng = random.Random(seed)
    constants, menu = dict(start or CONSTANTS), [list(entry) for entry in MENU]
    best = score(shapes, constants, menu)
    step, entries = RATE_STEP[refit], fitted(refit)
    for _ in range(steps):
        trial_constants, trial_menu = dict(constants), [list(entry) for entry in menu]
        if refit == 'ffma' and not ONLY_ENTRIES and rng.random() < 0.6:
            unused = 'warps_for_full_rate' if SHARE_BY == 'results' else 'results_for_full_rate'
            name = rng.choice([name for name in BOUNDS if name != unused])
            trial_constants[name] = rng.uniform(*BOUNDS[name])
        else:
            index = rng.choice(entries)
            factor = rng.uniform(1 - step, 1 + step)
            # Both rates, or the aligned or the any-alignment one alone.
            columns = ((2,),) if refit == 'any-alignment' else ((1, 2), (1,), (2,))
            for column in rng.choice(columns):
                trial_menu[index][column] = MENU[index][column] * factor
        # Loading B a float at a time is never faster than by 16 bytes.
        if any(entry[2] > entry[1] for entry in trial_menu):
            continue
        trial = score(shapes, trial_constants, trial_menu)
        if trial >= best:
            best, constants, menu = trial, trial_constants, trial_menu
    return constants, menu


def share_of_best(shapes, c, menu):
    """The mean over `shapes` of each pick's measured rate over the best measured (0 untimed)."""
    of_best = shares(shapes, c, menu, 0.0)
    return sum(of_best) / len(of_best)


def cross_validate(benches, steps, seed, refit):
    """Per bench: the search fitted to the shapes of the other benches, its picks judged on this
    one's. A shape that several benches timed counts with the rows of the last (a later bench
    adds configs: the menu grew), and belongs to every bench that timed it: it is judged with
    each of them and trained on by none of them. An FFMA fit starts with every constant in the
    middle of its bounds (geometric), not from CONSTANTS, which may have been fitted to the bench
    judged; a fit of the tensor cores' rates keeps CONSTANTS."""
    merged, held_out_sets = {}, {}
    for path in benches:
        shapes = read_bench(path)
        merged.update(shapes)
        held_out_sets[path] = set(shapes)
    middle = dict(CONSTANTS, **{name: math.sqrt(low * high) for name, (low, high) in BOUNDS.items()})
    for held_out, judged in held_out_sets.items():
        training = {shape: rows for shape, rows in merged.items() if shape not in judged}
        shapes = {shape: merged[shape] for shape in judged}
        constants, menu = search(training, steps, seed, middle if refit == 'ffma' else CONSTANTS,
                                 refit)
        print(f'{held_out}: the picks reach {share_of_best(shapes, constants, menu):.3f} of the '
              f'best measured, fitted to the others ({share_of_best(shapes, CONSTANTS, MENU):.3f} '
              'with the constants given)')


def shape_argument(text):
    """An MxNxK command-line shape, as (m, n, k) of positive sizes."""
    found = re.fullmatch(r'([1-9]\d*)x([1-9]\d*)x([1-9]\d*)', text)
    if not found:
        raise argparse.ArgumentTypeError(f'MxNxK with positive sizes, got {text!r}')
    return tuple(int(size) for size in found.groups())


def entry_argument(text):
    """An --entry: an MxN tile, as (block_m, block_n), or NAME=VALUE,... of sgemm.cu's constants
    that the menu's entries carry, as a dict (VECTOR_A and TF32X3 as booleans)."""
    found = re.fullmatch(r'([1-9]\d*)x([1-9]\d*)', text)
    if found:
        return tuple(int(size) for size in found.groups())
    values = {}
    for setting in text.split(','):
        name, _, value = setting.partition('=')
        if name not in ENTRY_NAMES or not re.fullmatch(r'\d+', value) or name in values:
            raise argparse.ArgumentTypeError(
                f'MxN, or NAME=VALUE,... with each of {", ".join(ENTRY_NAMES)} at most once and a '
                f'whole number, got {text!r}')
        values[name] = bool(int(value)) if name in ('VECTOR_A', 'TF32X3') else int(value)
    return values


def constant_argument(text):
    """A NAME=VALUE command-line setting of one of the model's constants, as (name, value)."""
    name, _, value = text.partition('=')
    if name not in CONSTANTS:
        raise argparse.ArgumentTypeError(f'{name!r} is none of the model\'s constants '
                                         f'({", ".join(sorted(CONSTANTS))})')
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise argparse.ArgumentTypeError(f'{name} takes a positive number, got {value!r}')
    return name, number


def main():
    global MIN_SLICE_DEPTH, SHARE_BY, DRAM_GB_PER_S, FEW_BLOCKS_SLICE_DEPTH
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('benches', nargs='*')
    parser.add_argument('--pick', action='append', default=[], metavar='MxNxK',
                        type=shape_argument,
                        help='print the model\'s pick at each shape (no benches): a CPU test '
                             'holds them equal to the C++ heuristic\'s on an H100')
    parser.add_argument('--constant', action='append', default=[], metavar='NAME=VALUE',
                        type=constant_argument,
                        help='set one of the model\'s constants (repeatable): the picks, and a '
                             'search\'s start, use it')
    parser.add_argument('--search', type=int, default=0, metavar='N')
    parser.add_argument('--refit', choices=tuple(RATE_STEP), default='ffma',
                        help='what --search moves: the FFMA entries\' rates and the constants '
                             '(default), the tensor cores\' rates alone, or the FFMA entries\' '
                             'any-alignment rates alone')
    parser.add_argument('--entry', type=entry_argument, action='append', default=[],
                        metavar='MxN|NAME=VALUE,...',
                        help='what --search moves: only the rates of the entries of this tile, '
                             'or with these values of sgemm.cu\'s constants (BK=8,MIN_BLOCKS=3), '
                             'among those --refit names (new entries fitted to the benches that '
                             'timed them, the rest of the menu as it is); repeatable')
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--cross-validate', action='store_true',
                        help='fit (--search N) to all benches but one and judge the picks on that '
                             'one, for each bench')
    parser.add_argument('--keep-best-at', action='append', default=[], metavar='MxNxK',
                        type=shape_argument,
                        help='a benched shape where the search keeps only sets whose pick '
                             f'measures within {1 - KEEP_BEST_SHARE:.1%}% of the best; '
                             'repeatable')
    parser.add_argument('--ffma-only', action='store_true',
                        help='the menu without the tensor cores: a device before CC 8.0, or '
                             'benches that did not time them')
    parser.add_argument('--min-slice-depth', type=int, default=MIN_SLICE_DEPTH, metavar='N')
    parser.add_argument('--few-blocks-slice-depth', type=int, default=FEW_BLOCKS_SLICE_DEPTH,
                        metavar='N',
                        help='also rate splits of slices N deep or more where the split\'s blocks '
                             'fit one round of the SMs')
    parser.add_argument('--share-by', choices=('warps', 'results'), default=SHARE_BY)
    parser.add_argument('--dram-gb-per-s', type=float, metavar='GB',
                        help='the benched device\'s theoretical DRAM bandwidth (default: what the '
                             'benches record, else an H100 SXM\'s)')
    arguments = parser.parse_args()
    CONSTANTS.update(arguments.constant)
    MIN_SLICE_DEPTH, SHARE_BY = arguments.min_slice_depth, arguments.share_by
    FEW_BLOCKS_SLICE_DEPTH = arguments.few_blocks_slice_depth
    KEEP_BEST_AT.update(arguments.keep_best_at)
    if arguments.ffma_only:
        if arguments.refit == 'tf32x3':
            parser.error('--refit tf32x3 fits the tensor cores, which --ffma-only leaves out')
        MENU[:] = [entry for entry in MENU if not entry[0][9]]
    for entry in arguments.entry:
        if not fitted(arguments.refit, [entry]):
            named = ('x'.join(map(str, entry)) if isinstance(entry, tuple) else
                     ','.join(f'{name}={int(value)}' for name, value in entry.items()))
            parser.error(f'--entry {named}: no {arguments.refit} entry of the menu has that '
                         f'{"tile" if isinstance(entry, tuple) else "config"}')
    ONLY_ENTRIES[:] = arguments.entry
    recorded = recorded_dram_gb_per_s(arguments.benches)  # refuses a bench of another device
    DRAM_GB_PER_S = arguments.dram_gb_per_s or recorded or DRAM_GB_PER_S
    if arguments.pick:
        for m, n, k in arguments.pick:
            pick = choose(m, n, k, CONSTANTS, MENU)
            values = pick[:8] + (int(pick[8]), pick[9], int(pick[10]))
            print(f'{m}x{n}x{k}', ' '.join(f'{name}={value}' for name, value in
                                           zip(DEFINES + ('VECTOR_A', 'SPLIT_K', 'TF32X3'),
                                               values)))
        return
    if not arguments.benches:
        parser.error('give benches to fit, or --pick shapes')
    if arguments.cross_validate:
        if not arguments.search or len(arguments.benches) < 2:
            parser.error('--cross-validate needs --search N and two benches or more')
        cross_validate(arguments.benches, arguments.search, arguments.seed, arguments.refit)
        return
    shapes = {}
    for path in arguments.benches:
        shapes.update(read_bench(path))
    for shape in sorted(KEEP_BEST_AT - set(shapes)):
        parser.error(f'--keep-best-at {"x".join(map(str, shape))}: not a shape the benches timed')
    if arguments.refit == 'tf32x3':
        # Only the benches that timed the tensor cores can say where they win.
        shapes = {shape: rows for shape, rows in shapes.items()
                  if any(key != 'cublas' and key[-1] for key in rows)}
    constants, menu = CONSTANTS, MENU
    if arguments.search:
        constants, menu = search(shapes, arguments.search, arguments.seed, refit=arguments.refit)
        if score(shapes, constants, menu) == -math.inf:
            held = ', '.join('x'.join(map(str, shape)) for shape in sorted(KEEP_BEST_AT))
            raise SystemExit(f'no set the search tried picks within {1 - KEEP_BEST_SHARE:.1%} of '
                             f'the best at {held}: search longer, or from other constants')
        print('constants:', {name: float(f'{value:.4g}') for name, value in constants.items()})
        print('menu rates:', [(round(entry[1], 2), round(entry[2], 2)) for entry in menu])
    at_best = near_best = 0
    ratios, unmeasured = [], 0
    for shape, pick, got, best, cublas in picks(shapes, constants, menu):
        if got:
            ratios.append(got / cublas)
        else:
            unmeasured += 1
        block_m, block_n, block_k = tile(pick[:9])[:3]
        at_best += got == best
        near_best += bool(got) and got >= 0.98 * best
        print(f'{"x".join(map(str, shape)):>16}: {block_m}x{block_n}x{block_k} split {pick[9]:<2} '
              f'measured {got or float("nan"):6.2f} best {best:6.2f} TFLOP/s, '
              f'{(got or float("nan")) / cublas:.3f}x cuBLAS')
    print(f'the pick is the measured best on {at_best} of {len(shapes)} shapes, within 2 % of it '
          f'on {near_best}')
    ratios.sort()
    print(f'measured picks against cuBLAS: median {ratios[len(ratios) // 2]:.3f}, 10th percentile '
          f'{ratios[len(ratios) // 10]:.3f}, worst {ratios[0]:.3f}, '
          f'{sum(ratio >= 0.9 for ratio in ratios)} of {len(ratios)} at 0.90x or more; '
          f'{unmeasured} picks the benches did not time')


if __name__ == '__main__':
    main()
