#!/usr/bin/env python3
"""scripts/plot_tune.py on tunes recorded on an H100 (tests/data/tune): the winner's bar is marked,
a failed config is drawn as such, the peer is a line, and the command writes PNG and SVG files.
Exits non-zero on the first failed expectation."""
import copy
import json
import os
import subprocess
import sys
import tempfile

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SOURCE, "scripts"))
try:
    import matplotlib
except ImportError:  # scripts/setup.sh installs it; a GPU machine without a registry may lack it
    print("plot_tune: skipped, matplotlib is not installed")
    sys.exit(77)
matplotlib.use("Agg")
import matplotlib.colors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import plot_tune  # noqa: E402

RECORDED = os.path.join(SOURCE, "tests", "data", "tune", "h100-matmul-4096-closest-pair-1m.json")


def expect(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)


def drawn(report, show_time=False):
    figure, axes = plt.subplots()
    plot_tune.plot_report(axes, report, show_time)
    labels = [tick.get_text() for tick in axes.get_xticklabels()]
    bars = list(axes.patches)
    notes = {text.get_text(): text for text in axes.texts}
    plt.close(figure)
    return axes, labels, bars, notes


def same_colour(bar, name):
    return matplotlib.colors.same_color(bar.get_facecolor(), name)


with open(RECORDED, encoding="utf-8") as file:
    reports = json.load(file)
matmul, closest_pair = reports

# The winner is the fastest ok config, drawn first (best rate at the left), green and labelled.
axes, labels, bars, notes = drawn(matmul)
expect(labels[0] == "TILE_WIDTH=32", f"the winner first, got {labels}")
expect(same_colour(bars[0], plot_tune.WINNER_COLOUR), "the winner's bar is the winner colour")
expect("winner" in notes and notes["winner"].xy[0] == 0, "'winner' is written over the winner")
expect(len(bars) == len(matmul["results"]), "one bar per config")
rates = [bar.get_height() for bar in bars]
expect(rates == sorted(rates, reverse=True), f"bars by rate, best first: {rates}")
expect(rates[0] == matmul["winner"]["rate"], "the winner's bar is its rate")
# The peer (cuBLAS) is a dashed line at its rate, named in the legend.
peer_lines = [line for line in axes.get_lines() if line.get_linestyle() == "--"]
expect(len(peer_lines) == 1 and peer_lines[0].get_ydata()[0] == matmul["peer"]["rate"],
       "cuBLAS is a dashed line at its rate")
expect(axes.get_legend().get_texts()[0].get_text() == "cuBLAS SGEMM", "the legend names cuBLAS")

# With --time: lowest median first, the winner still first; no peer line without a peer.
axes, labels, bars, notes = drawn(closest_pair, show_time=True)
expect(labels[0] == "BASE=128", f"the fastest first by time, got {labels}")
expect([bar.get_height() for bar in bars] == sorted(bar.get_height() for bar in bars),
       "bars by time, fastest first")
expect(not [line for line in axes.get_lines() if line.get_linestyle() == "--"],
       "no peer line for a tune without a peer")

# A crashed config (a planted faulting one) is a red, labelled bar after the timed ones.
crashed = copy.deepcopy(closest_pair)
crashed["results"][0]["status"] = "crashed"
axes, labels, bars, notes = drawn(crashed)
expect(same_colour(bars[-1], plot_tune.FAILED_COLOUR), "the crashed config's bar is red")
expect("crashed" in notes, "the crashed config is labelled with its status")

# The command writes both formats from the JSON `ptxrt tune --json` prints.
with tempfile.TemporaryDirectory() as scratch:
    for name, magic in (("tune.png", b"\x89PNG"), ("tune.svg", b"<svg")):
        output = os.path.join(scratch, name)
        subprocess.run([sys.executable, os.path.join(SOURCE, "scripts", "plot_tune.py"), RECORDED,
                        "-o", output], check=True, capture_output=True)
        with open(output, "rb") as file:
            head = file.read(512)
        expect(magic in head, f"{name} is a {magic!r} file")
print("plot_tune: all expectations hold")
