#!/usr/bin/env python3
"""Plots an ozaki_bench CSV.

    python3 perf_tests/plot.py results.csv [out.png]
    python3 perf_tests/plot.py --heatmap sweep.csv [out.png] [--config NAME] [--phi X]

Needs matplotlib (present on the GPU machine's image) and the standard library only.

Default mode (suite device): one row of panels per shape: speed (TFLOP/s equivalent, native
DGEMM and cuBLAS emulation as horizontal lines) and normwise error (max |c - ref| / (|A||B|)_mn,
log scale) for Int8Slices with triangular and full pair sets.

--heatmap (suite sweep): speedup_vs_native of one configuration (`default`, the plain call,
unless --config says otherwise) as a heatmap over M = N (rows) x K (columns) at phi = 0.5
(--phi), each cell annotated with the ratio; red below 1 (slower than native), green above.
A second panel shows the same configuration's rows at the other phis (suite sweep: 8192^3 at
phi = 1, 2, 4) and at shapes off the grid (suite criteria: 10000^3, 20000x3000x12000,
32768^3) with their normwise errors.  Missing or failed cells are grey.
"""
import argparse
import csv
import math
import sys
from collections import defaultdict


def number(text):
    """A CSV field as a float: NaN when empty (undefined) or not a number."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def shape_of(row):
    return int(row["m"]), int(row["n"]), int(row["k"])


def shape_label(shape):
    m, n, k = shape
    return f"{m}^3" if m == n == k else f"{m}x{n}x{k}"


def plot_device(rows, out, plt):
    shapes = []
    by_shape = defaultdict(list)
    for r in rows:
        key = "x".join(str(d) for d in shape_of(r))
        if key not in by_shape:
            shapes.append(key)
        by_shape[key].append(r)
    fig, axes = plt.subplots(len(shapes), 2, figsize=(11, 3.2 * len(shapes)), squeeze=False)
    styles = {"native": ("native DGEMM", "k"), "emu:7": ("cuBLAS emulation 55 bits", "r"),
              "emu:auto": ("cuBLAS emulation dynamic", "m")}
    for row, shape in enumerate(shapes):
        speed, error = axes[row]
        for policy, style in (("tri", "o-"), ("full", "s--")):
            pts = sorted((int(r["slices"]), number(r["tflops"]), number(r["err_normwise"]))
                         for r in by_shape[shape]
                         if r["config"].startswith("int8:") and r["config"].endswith(":" + policy)
                         and r["config"].split(":")[1] != "auto" and r["slices"] not in ("", "0"))
            if pts:
                speed.plot([p[0] for p in pts], [p[1] for p in pts], style,
                           label=f"Int8Slices {policy}")
                error.semilogy([p[0] for p in pts], [p[2] for p in pts], style,
                               label=f"Int8Slices {policy}")
        for r in by_shape[shape]:
            if r["config"] in styles:
                label, color = styles[r["config"]]
                for axis, value in ((speed, number(r["tflops"])),
                                    (error, number(r["err_normwise"]))):
                    if math.isfinite(value):
                        axis.axhline(value, linestyle=":", label=label, color=color)
        speed.set_title(f"{shape}: speed")
        speed.set_xlabel("slices S")
        speed.set_ylabel("TFLOP/s (FP64 equivalent)")
        error.set_title(f"{shape}: error")
        error.set_xlabel("slices S")
        error.set_ylabel("max |c - ref| / (|A||B|)")
        speed.legend(fontsize=7)
        error.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def ratio_norm(values, colors):
    """A colour scale in log(ratio), symmetric about 1.0, so that x and 1/x get equally
    strong colours (red below 1, green above)."""
    finite = [v for v in values if math.isfinite(v) and v > 0]
    span = max([abs(math.log(v)) for v in finite] + [math.log(1.25)])
    return colors.LogNorm(vmin=math.exp(-span), vmax=math.exp(span))


def draw_cells(ax, grid, norm, cmap, labels):
    """grid: rows of ratios (NaN: missing); labels: the text of each cell."""
    image = ax.imshow(grid, cmap=cmap, norm=norm, aspect="auto")  # NaN: the "bad" colour
    for i, line in enumerate(grid):
        for j, value in enumerate(line):
            dark = math.isfinite(value) and value > 0 and abs(math.log(value)) > 0.6 * math.log(
                norm.vmax)
            ax.text(j, i, labels[i][j], ha="center", va="center", fontsize=9,
                    color="white" if dark else "black")
    return image


def plot_heatmap(rows, out, plt, config, phi):
    from matplotlib import colors

    mine = [r for r in rows if r["config"] == config]
    at_phi = [r for r in mine if math.isclose(number(r["phi"]), phi)]
    square = [r for r in at_phi if shape_of(r)[0] == shape_of(r)[1]]
    # The grid's K are those that at least two M = N share; single shapes off the grid (the
    # criteria suite's 10000^3, 32768^3, 20000x3000x12000) join the other phis below it.
    ks_seen = {}
    for r in square:
        ks_seen.setdefault(shape_of(r)[2], set()).add(shape_of(r)[0])
    grid_rows = [r for r in square if len(ks_seen[shape_of(r)[2]]) > 1]
    others = sorted((r for r in mine if r not in grid_rows),
                    key=lambda r: (shape_of(r), number(r["phi"])))
    if not grid_rows:
        sys.exit(f"plot.py: no rows of config '{config}' with M = N at phi = {phi:g} "
                 f"(configs in the file: {sorted({r['config'] for r in rows})})")
    mns = sorted({shape_of(r)[0] for r in grid_rows})
    ks = sorted({shape_of(r)[2] for r in grid_rows})
    cell = {}
    for r in grid_rows:  # the last row of a cell wins, as in a rerun appended to the file
        cell[(shape_of(r)[0], shape_of(r)[2])] = number(r["speedup_vs_native"])
    grid = [[cell.get((mn, k), math.nan) for k in ks] for mn in mns]
    values = [v for line in grid for v in line] + [number(r["speedup_vs_native"]) for r in others]
    norm = ratio_norm(values, colors)
    cmap = plt.get_cmap("RdYlGn").copy()
    cmap.set_bad("lightgrey")

    def label(value):
        return f"{value:.2f}x" if math.isfinite(value) else "-"

    heights = [max(len(mns), 2), 1.3] if others else [1]
    fig = plt.figure(figsize=(2.0 + 1.5 * max(len(ks), 3, 0.8 * len(others)),
                              1.2 + 0.55 * sum(heights) + 1.0))
    grid_spec = fig.add_gridspec(len(heights), 1, height_ratios=heights, hspace=0.6)
    ax = fig.add_subplot(grid_spec[0])
    image = draw_cells(ax, grid, norm, cmap, [[label(v) for v in line] for line in grid])
    ax.set_xticks(range(len(ks)))
    ax.set_xticklabels([f"K = {k}" for k in ks])
    ax.set_yticks(range(len(mns)))
    ax.set_yticklabels([f"M = N = {mn}" for mn in mns])
    ax.set_title(f"`{config}` / native FP64 GEMM: speedup (time ratio) at phi = {phi:g}")
    fig.colorbar(image, ax=ax, label="native time / this time")
    if others:
        cubes = {shape_of(r) for r in others}
        ratios = [number(r["speedup_vs_native"]) for r in others]
        texts = [label(number(r["speedup_vs_native"])) + "\nerr " +
                 (f"{number(r['err_normwise']):.1e}" if r["err_normwise"] else "-")
                 for r in others]
        bottom = fig.add_subplot(grid_spec[1])
        draw_cells(bottom, [ratios], norm, cmap, [texts])
        bottom.set_xticks(range(len(others)))
        bottom.set_xticklabels(
            [("" if len(cubes) == 1 else shape_label(shape_of(r)) + "\n") +
             f"phi = {number(r['phi']):g}" for r in others], fontsize=8)
        bottom.set_yticks([])
        where = ("x".join(map(str, next(iter(cubes)))) + " at other phi" if len(cubes) == 1
                 else "shapes off the grid, and other phi")
        bottom.set_title(f"{where} (err: max |c - ref| / (|A||B|)_mn)", fontsize=9)
    fig.savefig(out, dpi=110, bbox_inches="tight")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], usage="%(prog)s [--heatmap] results.csv [out.png]")
    parser.add_argument("csv", help="an ozaki_bench --csv file")
    parser.add_argument("out", nargs="?", help="the picture (default: the CSV's name, .png)")
    parser.add_argument("--heatmap", action="store_true",
                        help="speedup_vs_native over M = N x K (suite sweep)")
    parser.add_argument("--config", default="default",
                        help="--heatmap: the configuration to draw (default: default)")
    parser.add_argument("--phi", type=float, default=0.5,
                        help="--heatmap: the phi of the heatmap (default: 0.5)")
    args = parser.parse_intermixed_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot.py: {args.csv} has no rows")
    out = args.out or args.csv.rsplit(".", 1)[0] + ".png"
    if args.heatmap:
        plot_heatmap(rows, out, plt, args.config, args.phi)
    else:
        plot_device(rows, out, plt)
    print("wrote", out)


if __name__ == "__main__":
    main()
