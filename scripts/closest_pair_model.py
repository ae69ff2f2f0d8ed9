#!/usr/bin/env python3
"""The distributed closest pair (`ptxrt closest-pair --mpi --method grid`) on paper, past two GPUs.

Reads the --json of a 1-rank and a 2-rank run of one generated set, each rank on its own GPU
(`scripts/mpi-check.sh --scaling` writes them), fits the per-point costs of each phase from them,
and prints the modelled phases at 8, 64 and 512 GPUs for 10^8 and 10^10 points, naming the phase
that bounds each, and what a .bin file of the same set would cost instead. What two GPUs of one
machine cannot show, the network between nodes and a file system's bandwidth, are assumptions:
flags, printed beside the table.

The model of one rank of R, for N generated points (docs/perf-notes.md, "The distributed closest
pair"):
  input  = x·N + p·N/R      every rank makes an interval of the x of all N points once (to decide
                            which it keeps: x), and makes and writes the N/R it keeps (p)
  split  = s                every rank sorts the same sample of 2^18 points on its GPU (no message)
  solve  = g·N/R            the grid method on the slab
  border = b + 2a·log2 R + R·slab/w    every slab's answer, size and band box gathered; the count
                            of points near the borders summed (and those few sent, when any)
  reduce = r                the least answer of those gathered (gathered again only when points
                            near a border travelled)
with a the latency of one step of a collective between nodes and w a GPU's share of the network.
A slab must hold fewer than 2^30 points (the radix sort's look-back counts) and fit its GPU.
A .bin file instead of input: each rank reads its N/R points (8 bytes each) at its share of the
file system, sends all but 1/R of them (16 bytes each, with the index) through the network, and
uploads the N/R it receives from pageable memory.
    scripts/closest_pair_model.py ONE_RANK.json TWO_RANKS.json [--latency-us 5]
        [--network-gbps 25] [--file-system-gbps 100] [--upload-gbps 10] [--gpu-memory-gib 79]
"""
import argparse
import json
import math

PHASES = ["input_ms", "split_ms", "solve_ms", "border_ms", "reduce_ms"]
SLAB_BYTES = 80  # a solved slab's summary: its answer (a pair), its size and its band's box
SLAB_LIMIT = 2**30 - 1  # keys the radix sort takes
# Device bytes a point of a slab takes at once while the grid method solves it: the slab's point
# (8; its index is found again when asked), the grid's key arrays (later its 64-bit codes), order
# arrays (later the sorted indices) and sorted points (24), the cell table and the radix sort's
# workspace (a few).
BYTES_PER_POINT = 36


def slowest(run, phase):
    return max(rank[phase] for rank in run["ranks"])


def fit(one, two):
    n = one["n"]
    if two["n"] != n or one["mpi_ranks"] != 1 or two["mpi_ranks"] != 2:
        raise SystemExit("closest_pair_model: give a 1-rank and a 2-rank run of one set")
    point = slowest(one, "input_ms") / n
    return {
        "n": n,
        "x": max(0.0, (slowest(two, "input_ms") - point * n / 2) / n),
        "point": point,
        "sample": slowest(two, "split_ms"),
        "solve": max(rank["solve_ms"] / max(1, rank["slab_points"]) for rank in two["ranks"]),
        "border": slowest(two, "border_ms"),
        "reduce": slowest(two, "reduce_ms"),
        "setup": max(slowest(one, "setup_ms"), slowest(two, "setup_ms")),
    }


def model(costs, n, ranks, latency_ms, network_bytes_per_ms):
    steps = math.ceil(math.log2(ranks)) if ranks > 1 else 0
    return {
        "input_ms": costs["x"] * n + costs["point"] * n / ranks,
        "split_ms": costs["sample"],
        "solve_ms": costs["solve"] * n / ranks,
        "border_ms": costs["border"] + 2 * latency_ms * steps
        + ranks * SLAB_BYTES / network_bytes_per_ms,
        "reduce_ms": costs["reduce"],
    }


def does_not_fit(n, ranks, gpu_bytes):
    slab = n / ranks
    if slab > SLAB_LIMIT:
        return f"does not fit: a slab of {slab:.3g} points exceeds the radix sort's 2^30 - 1"
    if slab * BYTES_PER_POINT > gpu_bytes:
        return f"does not fit: a slab of {slab:.3g} points needs {slab * BYTES_PER_POINT / 2**30:.0f} GiB"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("one_rank")
    parser.add_argument("two_ranks")
    parser.add_argument("--latency-us", type=float, default=5.0,
                        help="one step of a collective between nodes (assumed)")
    parser.add_argument("--network-gbps", type=float, default=25.0,
                        help="a GPU's share of the network, GB/s (assumed)")
    parser.add_argument("--file-system-gbps", type=float, default=100.0,
                        help="the file system's bandwidth for all ranks together, GB/s (assumed)")
    parser.add_argument("--upload-gbps", type=float, default=10.0,
                        help="a pageable upload to one GPU, GB/s (assumed)")
    parser.add_argument("--gpu-memory-gib", type=float, default=79.0)
    arguments = parser.parse_args()
    costs = fit(json.load(open(arguments.one_rank)), json.load(open(arguments.two_ranks)))
    latency_ms = arguments.latency_us / 1000.0
    network = arguments.network_gbps * 1e6  # bytes per ms
    file_system = arguments.file_system_gbps * 1e6
    upload = arguments.upload_gbps * 1e6
    gpu_bytes = arguments.gpu_memory_gib * 2**30

    print(f"closest pair model, fitted at n={costs['n']:.3g}: per point x {costs['x'] * 1e6:.3f} ns, "
          f"made {costs['point'] * 1e6:.3f} ns, solved {costs['solve'] * 1e6:.3f} ns; sample "
          f"{costs['sample']:.3f} ms, border {costs['border']:.3f} ms, reduce {costs['reduce']:.3f} ms; "
          f"set-up {costs['setup']:.1f} ms apart")
    print(f"  assumed: {arguments.latency_us:g} us per collective step between nodes, "
          f"{arguments.network_gbps:g} GB/s of network per GPU, {arguments.file_system_gbps:g} GB/s "
          f"of file system in all, {arguments.upload_gbps:g} GB/s of pageable upload")
    print("  points  GPUs" + "".join(f"{p[:-3]:>11}" for p in PHASES)
          + "      total  bound;  a .bin file instead")
    for n in [1e8, 1e10]:
        for ranks in [8, 64, 512]:
            reason = does_not_fit(n, ranks, gpu_bytes)
            if reason:
                print(f"  {n:6.0e} {ranks:5d}  {reason}")
                continue
            phases = model(costs, n, ranks, latency_ms, network)
            total = sum(phases.values())
            bound = max(phases, key=phases.get)[:-3]
            instead = {"the file system": n * 8 / file_system,
                       "the exchange": n / ranks * 16 * (ranks - 1) / ranks / network,
                       "the upload": n / ranks * 16 / upload,
                       "the solve": phases["solve_ms"]}
            file_total = total - phases["input_ms"] + sum(instead.values()) - phases["solve_ms"]
            print(f"  {n:6.0e} {ranks:5d}" + "".join(f"{phases[p]:11.2f}" for p in PHASES)
                  + f" {total:10.2f}  {bound};  {file_total:.1f} ms, bound by "
                  + max(instead, key=instead.get) + " ("
                  + ", ".join(f"{what[4:]} {ms:.1f}" for what, ms in instead.items()) + " ms)")


if __name__ == "__main__":
    main()
