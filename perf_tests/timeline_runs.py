#!/usr/bin/env python3
"""Per-call summary of a GPU timeline written by libozaki_gpu_timeline.so.

Usage: timeline_runs.py TIMELINE.txt [...]

For every ozaki_bench timed run (the region ozaki_bench::timed_run[CONFIG], fences included)
and every top-level ozaki::gemm call outside one, prints its GPU span, the span of the
library's own region inside it, the time before that region (the host's work before the first
launch) and after the last kernel (the final wait), the sum of the Kokkos kernels, and the
largest contributions by name, the INT8 products' profiling regions included.  This is what
separates a slow call's INT8 products from its memory-bound kernels and its host gaps.
"""
import collections
import sys


def marks(path):
    """(gpu_ms, host_ms, kind, name) per line of the timeline file."""
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.split(None, 4)
            if len(parts) < 5:
                continue
            try:
                out.append((float(parts[0]), float(parts[1]), parts[3], parts[4].strip()))
            except ValueError:
                continue
    return out


def summarize(segment):
    """Kernel and INT8-region times by name inside one call's marks."""
    times, counts = collections.defaultdict(float), collections.Counter()
    open_kernels, open_regions = {}, {}
    last_kernel = None
    for gpu, _, kind, name in segment:
        if kind == "[" and name == "ozaki::crt::int8_products":
            open_regions[name] = gpu
        elif kind == "]" and name in open_regions:
            key = "(region) " + name
            times[key] += gpu - open_regions.pop(name)
            counts[key] += 1
        elif kind == "B":
            open_kernels[name] = gpu
        elif kind == "E" and name in open_kernels:
            times[name] += gpu - open_kernels.pop(name)
            counts[name] += 1
            last_kernel = gpu
    return times, counts, last_kernel


def report(path):
    m = marks(path)
    print("==", path)
    stack = []
    for i, (gpu, _, kind, name) in enumerate(m):
        if kind == "[":
            stack.append((name, i))
            continue
        if kind != "]" or not stack:
            continue
        name, i0 = stack.pop()
        inside_timed = any(s[0].startswith("ozaki_bench::timed_run") for s in stack)
        if not (name.startswith("ozaki_bench::timed_run") or
                (name.startswith("ozaki::gemm[") and not inside_timed)):
            continue
        segment = m[i0:i + 1]
        start = m[i0][0]
        times, counts, last_kernel = summarize(segment)
        opens = [x for x in segment if x[2] == "[" and x[3].startswith("ozaki::gemm[")]
        closes = [x for x in segment if x[2] == "]" and x[3].startswith("ozaki::gemm[")]
        library = closes[-1][0] - opens[0][0] if opens and closes else float("nan")
        before = opens[0][0] - start if opens else float("nan")
        kernels = sum(v for k, v in times.items() if not k.startswith("(region)"))
        after = gpu - last_kernel if last_kernel is not None else 0.0
        print(f"{name}: span {gpu - start:.3f} ms, library region {library:.3f}, before it "
              f"{before:.3f}, after the last kernel {after:.3f}, kernels {kernels:.3f}")
        top = sorted(times.items(), key=lambda kv: -kv[1])[:6]
        if top:
            print("    " + "; ".join(f"{k} {v:.2f} ({counts[k]})" for k, v in top))


if __name__ == "__main__":
    for p in sys.argv[1:]:
        report(p)
