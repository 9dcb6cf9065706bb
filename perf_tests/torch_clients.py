#!/usr/bin/env python3
"""Unmodified PyTorch float64 code as the interposer's client: solvers and CUDA graphs.

    python3 perf_tests/torch_clients.py --label plain [--n 8192] [--eigh-n 4096] [--reps 5]
                                        [--bmm-n 1024] [--bmm-batch 16]
                                        [--ops cholesky,solve,qr,eigh,lstsq,bmm,graph]

Run it once plain and once under LD_PRELOAD=libozaki_cublas.so (cmake/dev.sh clients does both,
alternating).  Each operation runs on fresh float64 CUDA inputs (U(-1/2,1/2)) exp(phi N(0,1)),
phi = 0.5, after a warm-up; its time is the median of --reps runs timed with CUDA events.  Every
result is checked before it is timed, so a wrong answer fails the run (exit status 1):

  cholesky  L of A = X X^T / n + I:                ||L L^T - A||_F / ||A||_F        <= 1e-12
  solve     X of A X = B (A well conditioned):     ||A X - B||_F / (||A||_F ||X||_F) <= 1e-12
  qr        Q R of A:                              ||Q R - A||_F / ||A||_F          <= 1e-12
  eigh      V, w of a symmetric A:                 ||A V - V diag(w)||_F / ||A||_F  <= 1e-12
  lstsq     X of min ||A X - B|| (A tall):         ||A^T (A X - B)||_F / (||A||_F^2 ||X||_F) <= 1e-12
  trsm      X of L X = B (L lower, dominant diagonal; only with --ops trsm):
                                                   ||L X - B||_F / (||L||_F ||X||_F + ||B||_F) <= 1e-12
  bmm       16 products of 1024^3 (--bmm-batch, --bmm-n):               max |c - ref| / (|A||B|)_ij      <= 2^-50
  graph     c = a @ b captured with torch.cuda.graph and replayed twice with new a and b
            copied in (float64 and complex128): each replay's C within 2^-50 of (|A||B|)_ij
            on sampled entries against long double, and different from the last replay's.

One CSV line per operation on stdout: label,op,n,ms,check (the check's value).
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_matmul import inputs, sampled_error  # noqa: E402

BOUND = 2.0**-50  # the interposer's per-entry bound relative to (|A||B|)_ij (cublas_client.c)


def median_ms(run, reps):
    run()  # warm-up (the interposer's first call starts its Kokkos)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]


def rel(x, scale):
    return float(torch.linalg.norm(x) / scale)


def spd(n, seed):
    x = inputs(n, 0.5, seed, False)
    return x @ x.T / n + torch.eye(n, device="cuda", dtype=torch.float64)


def op_cholesky(n, reps):
    a = spd(n, 11)
    low = torch.linalg.cholesky(a)
    check = rel(low @ low.T - a, torch.linalg.norm(a))
    return median_ms(lambda: torch.linalg.cholesky(a), reps), check, 1e-12


def op_solve(n, reps):
    a = inputs(n, 0.5, 12, False) + n**0.5 * torch.eye(n, device="cuda", dtype=torch.float64)
    b = inputs(n, 0.5, 13, False)
    x = torch.linalg.solve(a, b)
    check = rel(a @ x - b, torch.linalg.norm(a) * torch.linalg.norm(x))
    return median_ms(lambda: torch.linalg.solve(a, b), reps), check, 1e-12


def op_qr(n, reps):
    a = inputs(n, 0.5, 14, False)
    q, r = torch.linalg.qr(a)
    check = rel(q @ r - a, torch.linalg.norm(a))
    return median_ms(lambda: torch.linalg.qr(a), reps), check, 1e-12


def op_eigh(n, reps):
    x = inputs(n, 0.5, 15, False)
    a = (x + x.T) / 2
    w, v = torch.linalg.eigh(a)
    check = rel(a @ v - v * w, torch.linalg.norm(a))
    return median_ms(lambda: torch.linalg.eigh(a), reps), check, 1e-12


def op_lstsq(n, reps):
    a = inputs(n, 0.5, 16, False)[:, : n // 2]
    b = inputs(n, 0.5, 17, False)[:, :256]
    x = torch.linalg.lstsq(a, b).solution
    norm_a = torch.linalg.norm(a)
    check = rel(a.T @ (a @ x - b), norm_a * norm_a * torch.linalg.norm(x))
    return median_ms(lambda: torch.linalg.lstsq(a, b), reps), check, 1e-12


def op_bmm(n, batch, reps):
    a = torch.stack([inputs(n, 0.5, 100 + i, False) for i in range(batch)])
    b = torch.stack([inputs(n, 0.5, 200 + i, False) for i in range(batch)])
    c = torch.bmm(a, b)
    check = max(sampled_error(a[i], b[i], c[i], samples=16) for i in (0, batch // 2, batch - 1))
    # A call of well under a millisecond at the default size: at least 25 timed runs, so that
    # the median is steady to a percent where the others need 5.
    return median_ms(lambda: torch.bmm(a, b), max(reps, 25)), check, BOUND


def op_trsm(n, reps):
    """X of L X = B, L lower triangular with a dominant diagonal, B with n columns: what
    torch.linalg.solve_triangular hands cublasDtrsm.  Its check is the normwise backward error."""
    low = torch.tril(inputs(n, 0.5, 18, False)) + n**0.5 * torch.eye(n, device="cuda", dtype=torch.float64)
    b = inputs(n, 0.5, 19, False)
    x = torch.linalg.solve_triangular(low, b, upper=False)
    check = rel(low @ x - b, torch.linalg.norm(low) * torch.linalg.norm(x) + torch.linalg.norm(b))
    return median_ms(lambda: torch.linalg.solve_triangular(low, b, upper=False), reps), check, 1e-12


def op_graph(n, reps, complex_):
    """Capture c = a @ b, then replay with new operands copied into a and b."""
    a = inputs(n, 0.5, 21, complex_)
    b = inputs(n, 0.5, 22, complex_)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as torch's docs ask
        c = a @ b
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c = a @ b
    worst, previous = 0.0, None
    for replay in range(2):
        a.copy_(inputs(n, 0.5, 31 + replay, complex_))
        b.copy_(inputs(n, 0.5, 41 + replay, complex_))
        graph.replay()
        torch.cuda.synchronize()
        worst = max(worst, sampled_error(a, b, c))
        if previous is not None and torch.equal(previous, c):
            worst = float("inf")  # the replay did not recompute from the new data
        previous = c.clone()
    return median_ms(graph.replay, reps), worst, BOUND


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--label", default="plain")
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--eigh-n", type=int, default=4096)
    p.add_argument("--graph-n", type=int, default=4096)
    p.add_argument("--bmm-n", type=int, default=1024, help="bmm's products are n^3")
    p.add_argument("--bmm-batch", type=int, default=16)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--ops", default="cholesky,solve,qr,eigh,lstsq,bmm,graph")
    args = p.parse_args()
    ops = {
        "cholesky": lambda: op_cholesky(args.n, args.reps),
        "solve": lambda: op_solve(args.n, args.reps),
        "qr": lambda: op_qr(args.n, args.reps),
        "eigh": lambda: op_eigh(args.eigh_n, args.reps),
        "lstsq": lambda: op_lstsq(args.n, args.reps),
        "bmm": lambda: op_bmm(args.bmm_n, args.bmm_batch, args.reps),
        "trsm": lambda: op_trsm(args.n, args.reps),
        "graph": lambda: op_graph(args.graph_n, args.reps, False),
        "graph-z": lambda: op_graph(args.graph_n, args.reps, True),
    }
    sizes = {"eigh": args.eigh_n, "bmm": f"{args.bmm_batch}x{args.bmm_n}", "graph": args.graph_n, "graph-z": args.graph_n}
    failed = 0
    for name in args.ops.split(","):
        names = ["graph", "graph-z"] if name == "graph" else [name]
        for op in names:
            try:
                ms, check, bound = ops[op]()
                ok = check <= bound
            except Exception as e:  # a failed capture or solver: the run fails, others go on
                print(f"{op}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
                ms, check, ok = float("nan"), float("nan"), False
            failed += not ok
            print(f"{args.label},{op},{sizes.get(op, args.n)},{ms:.3f},{check:.3e}"
                  f"{'' if ok else ',FAIL'}", flush=True)
            torch.cuda.empty_cache()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
