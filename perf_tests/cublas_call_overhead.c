/* The host time of one cublasDgemm call, for a program written for cuBLAS alone: run it plain
 * and under LD_PRELOAD=libozaki_cublas.so (cmake/dev.sh clients does both, alternating), and
 * the difference is what the interposer costs a call it does not take.
 *
 *   cublas_call_overhead [label] [calls]
 *
 * Shapes: 64^3 (below OZAKI_CUBLAS_MIN: passed through), 2048 x 2048 x 1024 (Auto runs native
 * FP64 GEMM from the shape alone), 16 x 1024^3 through cublasDgemmStridedBatched (likewise).
 * Per shape, after 20 warm-up calls and a synchronisation: `calls` calls back to back, each
 * timed on the host clock from its start to its return (the enqueue), then one
 * synchronisation; and the whole loop's wall time per call (the device's pace).  A last
 * product checks that C holds op(A) op(B) (sampled entries against long double, within
 * 2^-50 of (|A||B|)_ij), so that a fast wrong answer cannot pass.  One CSV line per shape:
 *   label,shape,host_us_median,host_us_p90,wall_us_per_call,max_error
 * Exit status 1 if a check fails. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK_CUDA(x)                                                                    \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(2);                                                                           \
    }                                                                                    \
  } while (0)
#define CHECK_CUBLAS(x)                                                          \
  do {                                                                           \
    cublasStatus_t s_ = (x);                                                     \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                           \
      fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, (int)s_); \
      exit(2);                                                                   \
    }                                                                            \
  } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* (U(-1/2, 1/2)) exp(phi N(0, 1)), phi = 0.5, from a seed. */
static void fill(double* x, size_t count, uint64_t seed) {
  uint64_t s = seed;
  for (size_t i = 0; i < count; ++i) {
    double u[3];
    for (int j = 0; j < 3; ++j) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      u[j] = (double)(s >> 11) * (1.0 / 9007199254740992.0);
    }
    const double normal = sqrt(-2.0 * log(u[0] + 1e-300)) * cos(6.283185307179586 * u[1]);
    x[i] = (u[2] - 0.5) * exp(0.5 * normal);
  }
}

typedef struct {
  const char* name;
  int m, n, k, batch;
} Shape;

/* max over sampled entries of product `b` of |C - AB| / (|A||B|)_ij (column-major, NN). */
static double sampled_error(const Shape* s, const double* A, const double* B, const double* C) {
  double worst = 0;
  for (int t = 0; t < 31; ++t) {
    const int i = (t * 7919) % s->m, j = (t * 104729) % s->n;
    long double sum = 0, magnitude = 0;
    for (int p = 0; p < s->k; ++p) {
      const long double x = (long double)A[(size_t)p * s->m + i] * B[(size_t)j * s->k + p];
      sum += x;
      magnitude += fabsl(x);
    }
    const double e = magnitude > 0 ? (double)(fabsl(C[(size_t)j * s->m + i] - sum) / magnitude) : 0;
    if (e > worst) worst = e;
  }
  return worst;
}

static int run_shape(const char* label, const Shape* s, int calls, cublasHandle_t handle,
                     cudaStream_t stream) {
  const size_t sa = (size_t)s->m * s->k, sb = (size_t)s->k * s->n, sc = (size_t)s->m * s->n;
  const int batch = s->batch;
  double* A = malloc(sizeof(double) * sa * batch);
  double* B = malloc(sizeof(double) * sb * batch);
  double* C = malloc(sizeof(double) * sc * batch);
  fill(A, sa * batch, 3 + (uint64_t)s->m);
  fill(B, sb * batch, 5 + (uint64_t)s->k);
  double *dA, *dB, *dC;
  CHECK_CUDA(cudaMalloc((void**)&dA, sizeof(double) * sa * batch));
  CHECK_CUDA(cudaMalloc((void**)&dB, sizeof(double) * sb * batch));
  CHECK_CUDA(cudaMalloc((void**)&dC, sizeof(double) * sc * batch));
  CHECK_CUDA(cudaMemcpy(dA, A, sizeof(double) * sa * batch, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, B, sizeof(double) * sb * batch, cudaMemcpyHostToDevice));
  const double one = 1, zero = 0;
  double* host_us = malloc(sizeof(double) * calls);
  double wall = 0;
  for (int round = 0; round < 2; ++round) { /* round 0 warms up */
    const int n = round == 0 ? 20 : calls;
    const double start = now_us();
    for (int i = 0; i < n; ++i) {
      const double t = now_us();
      if (batch > 1) {
        CHECK_CUBLAS(cublasDgemmStridedBatched(
            handle, CUBLAS_OP_N, CUBLAS_OP_N, s->m, s->n, s->k, &one, dA, s->m, (long long)sa, dB,
            s->k, (long long)sb, &zero, dC, s->m, (long long)sc, batch));
      } else {
        CHECK_CUBLAS(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, s->m, s->n, s->k, &one, dA, s->m,
                                 dB, s->k, &zero, dC, s->m));
      }
      if (round == 1) host_us[i] = now_us() - t;
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    wall = (now_us() - start) / n;
  }
  CHECK_CUDA(cudaMemcpy(C, dC, sizeof(double) * sc * batch, cudaMemcpyDeviceToHost));
  double err = 0;
  for (int b = 0; b<batch; b += batch> 1 ? batch - 1 : 1) {
    const double e = sampled_error(s, A + b * sa, B + b * sb, C + b * sc);
    if (e > err) err = e;
  }
  qsort(host_us, calls, sizeof(double), by_value);
  const int failed = !(err <= ldexp(1.0, -50));
  printf("%s,%s,%.3f,%.3f,%.2f,%.3e%s\n", label, s->name, host_us[calls / 2],
         host_us[calls * 9 / 10], wall, err, failed ? ",FAIL" : "");
  fflush(stdout);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  free(A);
  free(B);
  free(C);
  free(host_us);
  return failed;
}

int main(int argc, char** argv) {
  const char* label = argc > 1 ? argv[1] : "plain";
  const int calls = argc > 2 ? atoi(argv[2]) : 400;
  if (calls < 10) {
    fprintf(stderr, "cublas_call_overhead: calls must be at least 10\n");
    return 2;
  }
  static const Shape shapes[] = {
      {"64x64x64", 64, 64, 64, 1},
      {"2048x2048x1024", 2048, 2048, 1024, 1},
      {"16x1024^3-strided-batched", 1024, 1024, 1024, 16},
  };
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  int failed = 0;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
    failed += run_shape(label, &shapes[i], calls, handle, stream);
  cublasDestroy(handle);
  cudaStreamDestroy(stream);
  return failed ? 1 : 0;
}
