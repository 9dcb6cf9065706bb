#!/usr/bin/env python3
"""Plots an ozaki_bench CSV: for each shape, TFLOP/s and error against the slice count.

    python3 perf_tests/plot.py results.csv [out.png]

Needs matplotlib (present on the GPU machine's image).  One row of panels per shape: speed
(TFLOP/s equivalent, native DGEMM and cuBLAS emulation as horizontal lines) and normwise error
(max |c - ref| / (|A||B|)_mn, log scale) for Int8Slices with triangular and full pair sets.
"""
import csv
import sys
from collections import defaultdict


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(open(sys.argv[1])))
    shapes = []
    by_shape = defaultdict(list)
    for r in rows:
        key = f"{r['m']}x{r['n']}x{r['k']}"
        if key not in by_shape:
            shapes.append(key)
        by_shape[key].append(r)
    fig, axes = plt.subplots(len(shapes), 2, figsize=(11, 3.2 * len(shapes)), squeeze=False)
    for row, shape in enumerate(shapes):
        speed, error = axes[row]
        for policy, style in (("tri", "o-"), ("full", "s--")):
            pts = sorted((int(r["slices"]), float(r["tflops"]), float(r["err_normwise"] or "nan"))
                         for r in by_shape[shape]
                         if r["config"].startswith("int8:") and r["config"].endswith(":" + policy)
                         and r["config"].split(":")[1] != "auto")
            if pts:
                speed.plot([p[0] for p in pts], [p[1] for p in pts], style, label=f"Int8Slices {policy}")
                error.semilogy([p[0] for p in pts], [p[2] for p in pts], style, label=f"Int8Slices {policy}")
        for r in by_shape[shape]:
            if r["config"] in ("native", "emu:7", "emu:auto"):
                label = {"native": "native DGEMM", "emu:7": "cuBLAS emulation 55 bits",
                         "emu:auto": "cuBLAS emulation dynamic"}[r["config"]]
                speed.axhline(float(r["tflops"]), linestyle=":", label=label,
                              color={"native": "k", "emu:7": "r", "emu:auto": "m"}[r["config"]])
                error.axhline(float(r["err_normwise"]), linestyle=":", label=label,
                              color={"native": "k", "emu:7": "r", "emu:auto": "m"}[r["config"]])
        speed.set_title(f"{shape}: speed")
        speed.set_xlabel("slices S")
        speed.set_ylabel("TFLOP/s (FP64 equivalent)")
        error.set_title(f"{shape}: error")
        error.set_xlabel("slices S")
        error.set_ylabel("max |c - ref| / (|A||B|)")
        speed.legend(fontsize=7)
        error.legend(fontsize=7)
    fig.tight_layout()
    out = sys.argv[2] if len(sys.argv) > 2 else sys.argv[1].rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=110)
    print("wrote", out)


if __name__ == "__main__":
    main()
