#!/usr/bin/env python3
"""The interposer's host cost per declined call, from cublas_call_overhead's alternated rounds.

    overhead_pairs.py clients.csv

reads the `== cublas_call_overhead` block of `cmake/dev.sh clients` (rows
label,shape,host_us_median,host_us_p90,wall_us_per_call,max_error, rounds alternating
plain, ozaki) and prints, per shape, the interposed round's median host time less the plain
round's before it, for every round, and the median of those differences with its spread (the
smallest and largest): the rounds' drift cancels in each pair, so the median difference resolves
a microsecond where the rounds' medians alone move by several.
"""
import statistics
import sys


def rows(path):
    inside = False
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("=="):
                inside = line.startswith("== cublas_call_overhead")
                continue
            if inside and line and not line.startswith("label"):
                fields = line.split(",")
                if len(fields) >= 3:
                    yield fields[0], fields[1], float(fields[2])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    plain, ozaki = {}, {}
    for label, shape, host_us in rows(sys.argv[1]):
        (plain if label == "plain" else ozaki).setdefault(shape, []).append(host_us)
    print("shape,rounds,median_difference_us,min_us,max_us")
    for shape in plain:
        diffs = [o - p for p, o in zip(plain[shape], ozaki.get(shape, []))]
        if diffs:
            print(f"{shape},{len(diffs)},{statistics.median(diffs):.2f},{min(diffs):.2f},"
                  f"{max(diffs):.2f}")


if __name__ == "__main__":
    main()
