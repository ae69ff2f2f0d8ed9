#!/usr/bin/env python3
"""Plot `ptxrt tune --json` output: one panel per tune, one bar per config timed (its rate, or
its median time with --time), the winner marked, configs that failed shown as such, and the peer
(cuBLAS) as a line when the tune measured one.

    ptxrt tune matmul --size 4096 --json > tune.json
    scripts/plot_tune.py tune.json -o tune.png
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402

STATUS_COLOURS = {"ok": "tab:blue", "cut": "tab:gray"}
FAILED_COLOUR = "tab:red"
WINNER_COLOUR = "tab:green"


def config_label(config):
    return " ".join(f"{name}={value}" for name, value in sorted(config.items()))


def title_of(report):
    key = report["key"]
    size = "x".join(str(v) for v in key["size"])
    return f'{key["kernel"]} {size} on {key["device"]} ({report["strategy"]})'


def plot_report(axes, report, show_time):
    results = report["results"] + report.get("resumed", [])
    timed = [r for r in results if r["status"] in STATUS_COLOURS]
    failed = [r for r in results if r["status"] not in STATUS_COLOURS]
    value = (lambda r: r["median_ms"]) if show_time else (lambda r: r["rate"] or 0.0)
    # Best first, so that the eye finds the winner at the left.
    timed.sort(key=value, reverse=not show_time)
    winner = report.get("winner")
    winner_label = config_label(winner["config"]) if winner else None
    labels, heights, colours = [], [], []
    for result in timed:
        label = config_label(result["config"])
        labels.append(label)
        heights.append(value(result))
        colours.append(WINNER_COLOUR if label == winner_label else STATUS_COLOURS[result["status"]])
    for result in failed:
        labels.append(config_label(result["config"]))
        heights.append(0.0)
        colours.append(FAILED_COLOUR)
    positions = range(len(labels))
    axes.bar(positions, heights, color=colours)
    for position, result in zip(range(len(timed), len(labels)), failed):
        axes.annotate(result["status"], (position, 0), ha="center", va="bottom", rotation=90,
                      color=FAILED_COLOUR, fontsize=8)
    if winner:
        index = labels.index(winner_label) if winner_label in labels else None
        if index is not None:
            axes.annotate("winner", (index, heights[index]), ha="center", va="bottom",
                          color=WINNER_COLOUR, fontweight="bold")
    peer = report.get("peer")
    if peer:
        axes.axhline(value(peer), color="black", linestyle="--", linewidth=1,
                     label=peer.get("detail", "peer").split(" (")[0])
        axes.legend(loc="upper right")
    axes.set_xticks(list(positions))
    axes.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    unit = "ms" if show_time else (timed[0]["rate_unit"] if timed else "rate")
    axes.set_ylabel(f"median time ({unit})" if show_time else unit)
    axes.set_title(title_of(report))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", help="the JSON `ptxrt tune --json` printed ('-' for stdin)")
    parser.add_argument("-o", "--output", default="tune.png", help="PNG or SVG file to write")
    parser.add_argument("--time", action="store_true", help="plot median time instead of rate")
    arguments = parser.parse_args()
    source = sys.stdin if arguments.input == "-" else open(arguments.input, encoding="utf-8")
    with source:
        reports = json.load(source)
    if isinstance(reports, dict):
        reports = [reports]
    if not reports:
        sys.exit("no tune reports in " + arguments.input)
    width = max(6.0, 0.35 * max(len(r["results"]) + len(r.get("resumed", [])) for r in reports))
    figure, panels = plt.subplots(len(reports), 1, figsize=(width, 4.5 * len(reports)),
                                  squeeze=False)
    for axes, report in zip(panels[:, 0], reports):
        plot_report(axes, report, arguments.time)
    figure.tight_layout()
    figure.savefig(arguments.output, dpi=120)
    print(f"wrote {arguments.output}")


if __name__ == "__main__":
    main()
