#!/usr/bin/env python3
"""PyTorch's float64 (or complex128) matmul, unmodified: the interposer's first client.

    python3 perf_tests/torch_matmul.py --sizes 4096,8192,16384 [--reps 5] [--label plain]
    python3 perf_tests/torch_matmul.py --complex ...   complex128 (cublasZgemm_v2), 8 n^3 flops
    python3 perf_tests/torch_matmul.py --float32 ...   float32 (cublasSgemm_v2, precision
                                                       "highest"), with --complex complex64
    python3 perf_tests/torch_matmul.py --linear ...    nn.Linear with a bias instead of matmul:
                                                       y = x W^T + b, real only (PyTorch calls
                                                       cublasLtMatmul with a bias epilogue)

Times torch.matmul on N x N float64 CUDA tensors (inputs (U(-1/2,1/2)) exp(phi N(0,1)),
phi = 0.5) with CUDA events (median of --reps after a warm-up), and measures the error
max |c - ref| / (|A||B| + |b|)_ij against a long-double reference on 64 sampled entries (b:
--linear's bias, N values of the same distribution, else 0).  One CSV
line per size on stdout: label,n,ms,tflops,error.  Run it with and without
LD_PRELOAD=libozaki_cublas.so (cmake/dev.sh interposer does both, alternating).
"""
import argparse
import sys

import numpy as np
import torch


def real_inputs(shape, phi, g):
    u = torch.rand(shape, generator=g, device="cuda", dtype=torch.float64) - 0.5
    z = torch.randn(shape, generator=g, device="cuda", dtype=torch.float64)
    return u * torch.exp(phi * z)


def inputs(n, phi, seed, complex_, float32=False, shape=None):
    """An n x n matrix (or a tensor of `shape`) of the standard inputs."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    shape = (n, n) if shape is None else shape
    re = real_inputs(shape, phi, g)
    x = re if not complex_ else torch.complex(re, real_inputs(shape, phi, g))
    if float32:
        return x.to(torch.complex64 if complex_ else torch.float32)
    return x


def sampled_error(a, b, c, samples=64, bias=None):
    n = a.shape[0]
    rng = np.random.default_rng(7)
    rows = rng.integers(0, n, samples)
    cols = rng.integers(0, n, samples)
    # (numpy has no long-double complex on every platform: complex products in parts.)
    a_rows = a[torch.as_tensor(rows, device=a.device)].cpu().numpy()
    b_cols = b[:, torch.as_tensor(cols, device=b.device)].cpu().numpy()
    got = c[torch.as_tensor(rows, device=c.device), torch.as_tensor(cols, device=c.device)]
    got = got.cpu().numpy()
    shift = np.zeros(samples)
    if bias is not None:
        shift = bias[torch.as_tensor(cols, device=bias.device)].cpu().numpy()
    ld = np.longdouble
    worst = 0.0
    for s in range(samples):
        ar, ai = np.real(a_rows[s]).astype(ld), np.imag(a_rows[s]).astype(ld)
        br, bi = np.real(b_cols[:, s]).astype(ld), np.imag(b_cols[:, s]).astype(ld)
        ref_r = (ar * br - ai * bi).sum() + ld(np.real(shift[s]))
        ref_i = (ar * bi + ai * br).sum() + ld(np.imag(shift[s]))
        scale = (np.sqrt(ar * ar + ai * ai) * np.sqrt(br * br + bi * bi)).sum() + abs(ld(shift[s]))
        d = np.sqrt((ld(np.real(got[s])) - ref_r) ** 2 + (ld(np.imag(got[s])) - ref_i) ** 2)
        if scale > 0:
            worst = max(worst, float(d / scale))
    return worst


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="4096,8192,16384")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--phi", type=float, default=0.5)
    p.add_argument("--label", default="torch")
    p.add_argument("--complex", action="store_true", help="complex128 (cublasZgemm_v2)")
    p.add_argument("--float32", action="store_true",
                   help="float32 / complex64 at precision 'highest' (cublasSgemm_v2, no TF32)")
    p.add_argument("--linear", action="store_true",
                   help="torch.nn.functional.linear(x, W, b): cublasLtMatmul with a bias")
    args = p.parse_args()
    if args.linear and args.complex:
        p.error("--linear is real only (PyTorch's bias epilogue path)")
    if args.float32:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
    flops_per = 8.0 if args.complex else 2.0
    for n in (int(s) for s in args.sizes.split(",")):
        a = inputs(n, args.phi, 1, args.complex, args.float32)
        b = inputs(n, args.phi, 2, args.complex, args.float32)
        bias = weight = None
        if args.linear:
            # y = x W^T + b with x = a and W = b^T: the product a @ b plus the bias per column.
            weight = b.T.contiguous()
            bias = inputs(n, args.phi, 3, False, args.float32, shape=(n,))
            op = lambda: torch.nn.functional.linear(a, weight, bias)  # noqa: E731
        else:
            op = lambda: torch.matmul(a, b)  # noqa: E731
        c = op()  # warm-up (and the interposer's first call: Kokkos starts)
        torch.cuda.synchronize()
        times = []
        for _ in range(args.reps):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            c = op()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        ms = sorted(times)[len(times) // 2]
        err = sampled_error(a, b, c, bias=bias)
        print(f"{args.label},{n},{ms:.3f},{flops_per * n**3 / (ms * 1e-3) * 1e-12:.2f},{err:.3e}",
              flush=True)
        del a, b, c, bias, weight
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
