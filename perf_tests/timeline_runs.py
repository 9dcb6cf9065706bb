#!/usr/bin/env python3
"""Per-call summary of a GPU timeline written by libozaki_gpu_timeline.so.

Usage: timeline_runs.py TIMELINE.txt [...]
       timeline_runs.py --region PREFIX TIMELINE.txt [...]

For every ozaki_bench timed run (the region ozaki_bench::timed_run[CONFIG], fences included)
and every top-level ozaki::gemm call outside one, prints its GPU span, the span of the
library's own region inside it, the time before that region (the host's work before the first
launch) and after the last kernel (the final wait), the sum of the Kokkos kernels, and the
largest contributions by name, the INT8 products' profiling regions included.  This is what
separates a slow call's INT8 products from its memory-bound kernels and its host gaps.

With --region, for the last region whose name starts with PREFIX (e.g. paired_run[ozaki], a
level3_bench timed run): its GPU span, the time inside each kernel name and each ozaki::gemm[...]
region name (inclusive, counted once where they nest), and the span covered by neither (host
gaps and launches).  This is where a level-3 routine's time goes: its diagonal blocks, its GEMMs
by algorithm, and what lies between them.
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


def region_report(path, prefix):
    m = marks(path)
    last = None
    stack = []
    for i, (gpu, _, kind, name) in enumerate(m):
        if kind == "[":
            stack.append((name, i))
        elif kind == "]" and stack:
            name, i0 = stack.pop()
            if name.startswith(prefix):
                last = (i0, i)
    print("==", path, prefix)
    if last is None:
        print("    no region named", prefix)
        return
    segment = m[last[0]:last[1] + 1]
    span = segment[-1][0] - segment[0][0]
    times, counts = collections.defaultdict(float), collections.Counter()
    covered = 0.0
    opened = []  # the kernels and gemm regions open, outermost first: (name, kind, start)
    for gpu, _, kind, name in segment[1:-1]:
        timed = kind in "BE" or name.startswith("ozaki::gemm[")
        if not timed:
            continue
        if kind in "[B":
            opened.append((name, kind, gpu))
        elif opened:
            name0, kind0, start = opened.pop()
            key = ("(region) " if kind0 == "[" else "") + name0
            times[key] += gpu - start
            counts[key] += 1
            if not opened:
                covered += gpu - start
    print(f"    span {span:.3f} ms; outside every kernel and ozaki::gemm region {span - covered:.3f}")
    for k, v in sorted(times.items(), key=lambda kv: -kv[1])[:12]:
        print(f"    {v:10.3f} ms {counts[k]:5d}  {k}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--region":
        for p in args[2:]:
            region_report(p, args[1])
    else:
        for p in args:
            report(p)
