/* A program written for cuBLAS alone (C, no ozaki, no Kokkos): the interposer's test client.
 *
 * Each case calls the cuBLAS API the way applications do (padded leading dimensions, both
 * pointer modes, two streams, beta != 0, transposes, two host threads with their own handles)
 * and checks C against a long-double reference on sampled entries (double and double complex,
 * conjugate transposes included): the FP64 cases within
 * 2^-50 of (|alpha||A||B| + |beta C0|) (docs/design.md, "The cuBLAS interposer"), the FP32
 * case within 2^-18.  cublasLtMatmul cases (run_lt_case) add a bias epilogue's |bias| to that
 * scale.  The level-3 cases (run_l3_case: syrk, herk, trsm, trmm, symm, hemm) state their own
 * bounds.  It prints one line per case with the error and a hash of C's bits;
 * unit_tests/interposer_check.sh runs it with and without libozaki_cublas.so and compares.
 * Exit status: the number of cases outside their bound. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_CUDA(x)                                                                    \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(100);                                                                         \
    }                                                                                    \
  } while (0)
#define CHECK_CUBLAS(x)                                                          \
  do {                                                                           \
    cublasStatus_t s_ = (x);                                                     \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                           \
      fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, (int)s_); \
      exit(101);                                                                 \
    }                                                                            \
  } while (0)

enum Api { DGEMM, GEMM_EX_64F, DGEMM_STRIDED_BATCHED, SGEMM };

typedef struct {
  const char* name;
  enum Api api;
  int m, n, k;
  cublasOperation_t ta, tb;
  int pad; /* added to every leading dimension */
  double alpha, beta;
  int device_scalars; /* CUBLAS_POINTER_MODE_DEVICE */
  int stream;         /* 0: the default stream, 1 or 2: a stream of our own */
  int batch;
} Case;

/* Deterministic uniform in [0, 1). */
static double uniform(uint64_t* s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) * (1.0 / 9007199254740992.0);
}

/* (U(-1/2, 1/2)) exp(phi N(0, 1)), phi = 0.5: the project's standard inputs. */
static void fill(double* x, size_t count, uint64_t seed) {
  uint64_t s = seed;
  for (size_t i = 0; i < count; ++i) {
    const double u1 = uniform(&s) + 1e-300, u2 = uniform(&s);
    const double normal = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    x[i] = (uniform(&s) - 0.5) * exp(0.5 * normal);
  }
}

/* FNV-1a of `bytes` more bytes after those that gave `h` (a hash of several buffers). */
static uint64_t hash_more(uint64_t h, const void* data, size_t bytes) {
  const unsigned char* p = (const unsigned char*)data;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

static uint64_t hash_bytes(const void* data, size_t bytes) {
  return hash_more(1469598103934665603ULL, data, bytes);
}

static double at(const double* X, int ld, int row, int col) { return X[(size_t)col * ld + row]; }

/* max over sampled (i, j) of |C - ref| / (|alpha| (|op(A)||op(B)|)_ij + |beta C0_ij|). */
static double sampled_error(const Case* c, const double* A, int lda, const double* B, int ldb,
                            const double* C0, const double* C, int ldc) {
  double worst = 0;
  for (int s = 0; s < 97; ++s) {
    const int i = (int)(((long long)s * 7919) % c->m), j = (int)(((long long)s * 104729) % c->n);
    long double sum = 0, magnitude = 0;
    for (int p = 0; p < c->k; ++p) {
      const double a = c->ta == CUBLAS_OP_N ? at(A, lda, i, p) : at(A, lda, p, i);
      const double b = c->tb == CUBLAS_OP_N ? at(B, ldb, p, j) : at(B, ldb, j, p);
      sum += (long double)a * b;
      magnitude += fabsl((long double)a * b);
    }
    const long double ref = c->alpha * sum + c->beta * (long double)at(C0, ldc, i, j);
    const long double scale = fabsl(c->alpha) * magnitude + fabsl(c->beta * at(C0, ldc, i, j));
    const double e = scale > 0 ? (double)(fabsl(at(C, ldc, i, j) - ref) / scale) : 0.0;
    if (e > worst) worst = e;
  }
  return worst;
}

/* Double complex: cublasZgemm, cublasGemmEx with CUDA_C_64F and cublasLtMatmul with CUDA_C_64F,
   conjugate transposes included. */
enum ZApi { ZGEMM, GEMM_EX_C64F, LT_MATMUL_C64F };

/* The cuBLASLt handle of every cublasLtMatmul case (made in main). */
static cublasLtHandle_t lt_handle;

/* cublasLtMatmul with one descriptor per matrix, D = C unless `D` differs; the descriptors are
   the caller's, destroyed here after the call.  `workspace`: 4 MiB of device memory for the
   algorithm cuBLASLt picks. */
static void lt_matmul(cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                      cublasLtMatrixLayout_t la, const void* B, cublasLtMatrixLayout_t lb,
                      const void* beta, const void* C, cublasLtMatrixLayout_t lc, void* D,
                      cublasLtMatrixLayout_t ld, cudaStream_t stream) {
  const size_t workspace_bytes = (size_t)4 << 20;
  void* workspace;
  CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));
  CHECK_CUBLAS(cublasLtMatmul(lt_handle, desc, alpha, A, la, B, lb, beta, C, lc, D, ld, NULL,
                              workspace, workspace_bytes, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  cudaFree(workspace);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  if (ld != lc) cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
}

/* A cuBLASLt descriptor of compute type `compute` and scale type `type`, with its transposes
   and pointer mode set. */
static cublasLtMatmulDesc_t lt_desc(cublasComputeType_t compute, cudaDataType type,
                                    cublasOperation_t ta, cublasOperation_t tb,
                                    int device_scalars) {
  cublasLtMatmulDesc_t desc;
  CHECK_CUBLAS(cublasLtMatmulDescCreate(&desc, compute, type));
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  const cublasLtPointerMode_t mode =
      device_scalars ? CUBLASLT_POINTER_MODE_DEVICE : CUBLASLT_POINTER_MODE_HOST;
  CHECK_CUBLAS(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof mode));
  return desc;
}

static cublasLtMatrixLayout_t lt_layout(cudaDataType type, int rows, int cols, int ld) {
  cublasLtMatrixLayout_t layout;
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&layout, type, (uint64_t)rows, (uint64_t)cols, ld));
  return layout;
}

typedef struct {
  const char* name;
  enum ZApi api;
  int m, n, k;
  cublasOperation_t ta, tb;
  int pad;
  cuDoubleComplex alpha, beta;
  int device_scalars;
  int stream;
} ZCase;

/* Element (row, col) of a column-major complex matrix stored as interleaved doubles, with
   op's conjugation applied. */
static void zat(const double* X, int ld, int row, int col, int conjugate, long double* re,
                long double* im) {
  const double* x = X + 2 * ((size_t)col * ld + row);
  *re = x[0];
  *im = conjugate ? -x[1] : x[1];
}

/* The complex counterpart of sampled_error: |C - ref| / (|alpha| (|op(A)||op(B)|)_ij +
   |beta C0_ij|) with complex moduli. */
static double zsampled_error(const ZCase* c, const double* A, int lda, const double* B, int ldb,
                             const double* C0, const double* C, int ldc) {
  double worst = 0;
  const int ca = c->ta == CUBLAS_OP_C, cb = c->tb == CUBLAS_OP_C;
  for (int s = 0; s < 97; ++s) {
    const int i = (int)(((long long)s * 7919) % c->m), j = (int)(((long long)s * 104729) % c->n);
    long double sr = 0, si = 0, magnitude = 0;
    for (int p = 0; p < c->k; ++p) {
      long double ar, ai, br, bi;
      if (c->ta == CUBLAS_OP_N)
        zat(A, lda, i, p, 0, &ar, &ai);
      else
        zat(A, lda, p, i, ca, &ar, &ai);
      if (c->tb == CUBLAS_OP_N)
        zat(B, ldb, p, j, 0, &br, &bi);
      else
        zat(B, ldb, j, p, cb, &br, &bi);
      sr += ar * br - ai * bi;
      si += ar * bi + ai * br;
      magnitude += sqrtl(ar * ar + ai * ai) * sqrtl(br * br + bi * bi);
    }
    long double c0r, c0i, cr, ci;
    zat(C0, ldc, i, j, 0, &c0r, &c0i);
    zat(C, ldc, i, j, 0, &cr, &ci);
    const long double xr = c->alpha.x, xi = c->alpha.y, yr = c->beta.x, yi = c->beta.y;
    const long double rr = xr * sr - xi * si + yr * c0r - yi * c0i;
    const long double ri = xr * si + xi * sr + yr * c0i + yi * c0r;
    const long double scale = sqrtl(xr * xr + xi * xi) * magnitude +
                              sqrtl(yr * yr + yi * yi) * sqrtl(c0r * c0r + c0i * c0i);
    const long double d = sqrtl((cr - rr) * (cr - rr) + (ci - ri) * (ci - ri));
    const double e = scale > 0 ? (double)(d / scale) : 0.0;
    if (e > worst) worst = e;
  }
  return worst;
}

static int run_zcase(const ZCase* c, cudaStream_t stream) {
  const int rows_a = c->ta == CUBLAS_OP_N ? c->m : c->k,
            cols_a = c->ta == CUBLAS_OP_N ? c->k : c->m;
  const int rows_b = c->tb == CUBLAS_OP_N ? c->k : c->n,
            cols_b = c->tb == CUBLAS_OP_N ? c->n : c->k;
  const int lda = rows_a + c->pad, ldb = rows_b + c->pad, ldc = c->m + c->pad;
  const size_t sa = (size_t)lda * cols_a, sb = (size_t)ldb * cols_b, sc = (size_t)ldc * c->n;
  double* A = malloc(sizeof(double) * 2 * sa);
  double* B = malloc(sizeof(double) * 2 * sb);
  double* C0 = malloc(sizeof(double) * 2 * sc);
  double* C = malloc(sizeof(double) * 2 * sc);
  fill(A, 2 * sa, 41 + (uint64_t)c->m);
  fill(B, 2 * sb, 43 + (uint64_t)c->n);
  fill(C0, 2 * sc, 47 + (uint64_t)c->k);
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  cuDoubleComplex *dA, *dB, *dC, *dScalars;
  CHECK_CUDA(cudaMalloc((void**)&dA, sizeof(cuDoubleComplex) * sa));
  CHECK_CUDA(cudaMalloc((void**)&dB, sizeof(cuDoubleComplex) * sb));
  CHECK_CUDA(cudaMalloc((void**)&dC, sizeof(cuDoubleComplex) * sc));
  CHECK_CUDA(cudaMalloc((void**)&dScalars, 2 * sizeof(cuDoubleComplex)));
  const cuDoubleComplex scalars[2] = {c->alpha, c->beta};
  CHECK_CUDA(cudaMemcpy(dScalars, scalars, sizeof scalars, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dA, A, sizeof(cuDoubleComplex) * sa, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, B, sizeof(cuDoubleComplex) * sb, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dC, C0, sizeof(cuDoubleComplex) * sc, cudaMemcpyHostToDevice));
  CHECK_CUBLAS(cublasSetPointerMode(
      handle, c->device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
  const cuDoubleComplex* alpha = c->device_scalars ? dScalars : &scalars[0];
  const cuDoubleComplex* beta = c->device_scalars ? dScalars + 1 : &scalars[1];
  if (c->api == ZGEMM) {
    CHECK_CUBLAS(cublasZgemm(handle, c->ta, c->tb, c->m, c->n, c->k, alpha, dA, lda, dB, ldb, beta,
                             dC, ldc));
  } else if (c->api == LT_MATMUL_C64F) {
    const cublasLtMatrixLayout_t lc = lt_layout(CUDA_C_64F, c->m, c->n, ldc);
    lt_matmul(lt_desc(CUBLAS_COMPUTE_64F, CUDA_C_64F, c->ta, c->tb, c->device_scalars), alpha, dA,
              lt_layout(CUDA_C_64F, rows_a, cols_a, lda), dB,
              lt_layout(CUDA_C_64F, rows_b, cols_b, ldb), beta, dC, lc, dC, lc, stream);
  } else {
    CHECK_CUBLAS(cublasGemmEx(handle, c->ta, c->tb, c->m, c->n, c->k, alpha, dA, CUDA_C_64F, lda,
                              dB, CUDA_C_64F, ldb, beta, dC, CUDA_C_64F, ldc, CUBLAS_COMPUTE_64F,
                              CUBLAS_GEMM_DEFAULT));
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(C, dC, sizeof(cuDoubleComplex) * sc, cudaMemcpyDeviceToHost));
  const double err = zsampled_error(c, A, lda, B, ldb, C0, C, ldc);
  int failed = !(err <= ldexp(1.0, -50));
  for (int j = 0; j < c->n; ++j)
    for (int i = c->m; i < ldc; ++i)
      if (memcmp(&C[2 * ((size_t)j * ldc + i)], &C0[2 * ((size_t)j * ldc + i)],
                 2 * sizeof(double)) != 0)
        failed = 1;
  const uint64_t hash = hash_bytes(C, sizeof(cuDoubleComplex) * sc);
  printf("case %-24s err %.3e hash %016llx %s\n", c->name, err, (unsigned long long)hash,
         failed ? "FAIL" : "ok");
  cublasDestroy(handle);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  cudaFree(dScalars);
  free(A);
  free(B);
  free(C0);
  free(C);
  return failed;
}

typedef struct {
  const Case* c;
  cudaStream_t stream; /* created by the caller (0: default) */
  int failed;
} Job;

static int run_case(const Case* c, cudaStream_t stream) {
  const int rows_a = c->ta == CUBLAS_OP_N ? c->m : c->k,
            cols_a = c->ta == CUBLAS_OP_N ? c->k : c->m;
  const int rows_b = c->tb == CUBLAS_OP_N ? c->k : c->n,
            cols_b = c->tb == CUBLAS_OP_N ? c->n : c->k;
  const int lda = rows_a + c->pad, ldb = rows_b + c->pad, ldc = c->m + c->pad;
  const int batch = c->batch > 0 ? c->batch : 1;
  const size_t sa = (size_t)lda * cols_a, sb = (size_t)ldb * cols_b, sc = (size_t)ldc * c->n;
  double* A = malloc(sizeof(double) * sa * batch);
  double* B = malloc(sizeof(double) * sb * batch);
  double* C0 = malloc(sizeof(double) * sc * batch);
  double* C = malloc(sizeof(double) * sc * batch);
  fill(A, sa * batch, 11 + (uint64_t)c->m);
  fill(B, sb * batch, 23 + (uint64_t)c->n);
  fill(C0, sc * batch, 37 + (uint64_t)c->k);
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  double *dA, *dB, *dC, *dScalars;
  CHECK_CUDA(cudaMalloc((void**)&dA, sizeof(double) * sa * batch));
  CHECK_CUDA(cudaMalloc((void**)&dB, sizeof(double) * sb * batch));
  CHECK_CUDA(cudaMalloc((void**)&dC, sizeof(double) * sc * batch));
  CHECK_CUDA(cudaMalloc((void**)&dScalars, 2 * sizeof(double)));
  const double scalars[2] = {c->alpha, c->beta};
  CHECK_CUDA(cudaMemcpy(dScalars, scalars, sizeof scalars, cudaMemcpyHostToDevice));
  int failed = 0;
  uint64_t hash = 0;
  double err = 0;
  if (c->api == SGEMM) {
    /* FP32: ozaki's only with OZAKI_CUBLAS_FP32=1 (interposer_check.sh's fp32 run, within
       this bound); otherwise compared bitwise with the run without the interposer. */
    float *fA = malloc(sizeof(float) * sa), *fB = malloc(sizeof(float) * sb),
          *fC = malloc(sizeof(float) * sc);
    for (size_t i = 0; i < sa; ++i) fA[i] = (float)A[i];
    for (size_t i = 0; i < sb; ++i) fB[i] = (float)B[i];
    for (size_t i = 0; i < sc; ++i) fC[i] = (float)C0[i];
    float *gA, *gB, *gC;
    CHECK_CUDA(cudaMalloc((void**)&gA, sizeof(float) * sa));
    CHECK_CUDA(cudaMalloc((void**)&gB, sizeof(float) * sb));
    CHECK_CUDA(cudaMalloc((void**)&gC, sizeof(float) * sc));
    CHECK_CUDA(cudaMemcpy(gA, fA, sizeof(float) * sa, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(gB, fB, sizeof(float) * sb, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(gC, fC, sizeof(float) * sc, cudaMemcpyHostToDevice));
    const float alpha = (float)c->alpha, beta = (float)c->beta;
    CHECK_CUBLAS(cublasSgemm(handle, c->ta, c->tb, c->m, c->n, c->k, &alpha, gA, lda, gB, ldb,
                             &beta, gC, ldc));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemcpy(fC, gC, sizeof(float) * sc, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < sa; ++i) A[i] = fA[i];
    for (size_t i = 0; i < sb; ++i) B[i] = fB[i];
    for (size_t i = 0; i < sc; ++i) {
      C0[i] = (float)C0[i];
      C[i] = fC[i];
    }
    err = sampled_error(c, A, lda, B, ldb, C0, C, ldc);
    failed = !(err <= ldexp(1.0, -18));
    hash = hash_bytes(fC, sizeof(float) * sc);
    cudaFree(gA);
    cudaFree(gB);
    cudaFree(gC);
    free(fA);
    free(fB);
    free(fC);
  } else {
    CHECK_CUDA(cudaMemcpy(dA, A, sizeof(double) * sa * batch, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dB, B, sizeof(double) * sb * batch, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dC, C0, sizeof(double) * sc * batch, cudaMemcpyHostToDevice));
    CHECK_CUBLAS(cublasSetPointerMode(
        handle, c->device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
    const double* alpha = c->device_scalars ? dScalars : &scalars[0];
    const double* beta = c->device_scalars ? dScalars + 1 : &scalars[1];
    switch (c->api) {
      case DGEMM:
        CHECK_CUBLAS(cublasDgemm(handle, c->ta, c->tb, c->m, c->n, c->k, alpha, dA, lda, dB, ldb,
                                 beta, dC, ldc));
        break;
      case GEMM_EX_64F:
        CHECK_CUBLAS(cublasGemmEx(handle, c->ta, c->tb, c->m, c->n, c->k, alpha, dA, CUDA_R_64F,
                                  lda, dB, CUDA_R_64F, ldb, beta, dC, CUDA_R_64F, ldc,
                                  CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
        break;
      case DGEMM_STRIDED_BATCHED:
        CHECK_CUBLAS(cublasDgemmStridedBatched(handle, c->ta, c->tb, c->m, c->n, c->k, alpha, dA,
                                               lda, (long long)sa, dB, ldb, (long long)sb, beta, dC,
                                               ldc, (long long)sc, batch));
        break;
      default: break;
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemcpy(C, dC, sizeof(double) * sc * batch, cudaMemcpyDeviceToHost));
    for (int b = 0; b < batch; ++b) {
      const double e =
          sampled_error(c, A + b * sa, lda, B + b * sb, ldb, C0 + b * sc, C + b * sc, ldc);
      if (e > err) err = e;
    }
    /* The padding rows of C (i >= m) must be untouched. */
    for (int b = 0; b < batch; ++b)
      for (int j = 0; j < c->n; ++j)
        for (int i = c->m; i < ldc; ++i)
          if (memcmp(&C[b * sc + (size_t)j * ldc + i], &C0[b * sc + (size_t)j * ldc + i],
                     sizeof(double)) != 0)
            failed = 1;
    failed |= !(err <= ldexp(1.0, -50));
    hash = hash_bytes(C, sizeof(double) * sc * batch);
  }
  printf("case %-24s err %.3e hash %016llx %s\n", c->name, err, (unsigned long long)hash,
         failed ? "FAIL" : "ok");
  cublasDestroy(handle);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  cudaFree(dScalars);
  free(A);
  free(B);
  free(C0);
  free(C);
  return failed;
}

/* A cublasDgemm captured into a CUDA graph and replayed twice with new operands: the graph
   must capture (nothing may allocate, synchronise or read the device on the host inside it)
   and replay the product of the data at launch.  Under the interposer the captured call is
   the caller's own cuBLAS call ("pass_": bitwise plain cuBLAS's), in every mode. */
static int run_capture(cudaStream_t stream, const char* name) {
  const int m = 1024, n = 768, k = 1024;
  const Case c = {name, DGEMM, m, n, k, CUBLAS_OP_N, CUBLAS_OP_N, 0, 1.0, 0.0, 0, 1, 0};
  const size_t sa = (size_t)m * k, sb = (size_t)k * n, sc = (size_t)m * n;
  double* A = malloc(sizeof(double) * sa);
  double* B = malloc(sizeof(double) * sb);
  double* C0 = calloc(sc, sizeof(double));
  double* C = malloc(sizeof(double) * sc);
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  void* workspace;
  const size_t workspace_bytes = (size_t)32 << 20;
  CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));
  CHECK_CUBLAS(cublasSetWorkspace(handle, workspace, workspace_bytes));
  double *dA, *dB, *dC;
  CHECK_CUDA(cudaMalloc((void**)&dA, sizeof(double) * sa));
  CHECK_CUDA(cudaMalloc((void**)&dB, sizeof(double) * sb));
  CHECK_CUDA(cudaMalloc((void**)&dC, sizeof(double) * sc));
  const double alpha = 1.0, beta = 0.0;
  int failed = 0;
  double err = 0;
  /* The warm-up call, outside the capture. */
  fill(A, sa, 101);
  fill(B, sb, 103);
  CHECK_CUDA(cudaMemcpyAsync(dA, A, sizeof(double) * sa, cudaMemcpyHostToDevice, stream));
  CHECK_CUDA(cudaMemcpyAsync(dB, B, sizeof(double) * sb, cudaMemcpyHostToDevice, stream));
  CHECK_CUBLAS(
      cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m, dB, k, &beta, dC, m));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const cublasStatus_t captured =
      cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m, dB, k, &beta, dC, m);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUBLAS(captured);
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    fill(A, sa, 201 + (uint64_t)replay);
    fill(B, sb, 301 + (uint64_t)replay);
    /* On the replay's stream: a pageable cudaMemcpy may return before its DMA lands, and a
       non-blocking stream does not wait for the legacy default stream that cudaMemcpy uses. */
    CHECK_CUDA(cudaMemcpyAsync(dA, A, sizeof(double) * sa, cudaMemcpyHostToDevice, stream));
    CHECK_CUDA(cudaMemcpyAsync(dB, B, sizeof(double) * sb, cudaMemcpyHostToDevice, stream));
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemcpy(C, dC, sizeof(double) * sc, cudaMemcpyDeviceToHost));
    const double e = sampled_error(&c, A, m, B, k, C0, C, m);
    if (e > err) err = e;
  }
  failed = !(err <= ldexp(1.0, -50));
  const uint64_t hash = hash_bytes(C, sizeof(double) * sc);
  printf("case %-24s err %.3e hash %016llx %s\n", c.name, err, (unsigned long long)hash,
         failed ? "FAIL" : "ok");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cublasDestroy(handle);
  cudaFree(workspace);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  free(A);
  free(B);
  free(C0);
  free(C);
  return failed;
}

/* One handle moved between two streams (cublasSetStream between calls), as programs that
   reuse a handle across their streams do: each call must run on the stream the handle holds
   at the call, and each C must be right.  The second call is enqueued on stream b while the
   first may still run on stream a, on different operands. */
static int run_moved_handle(cudaStream_t a, cudaStream_t b) {
  const int m = 1024, n = 640, k = 768;
  const Case c = {"moved_handle", DGEMM, m, n, k, CUBLAS_OP_N, CUBLAS_OP_N, 0, 1.0, 0.0, 0, 1, 0};
  const size_t sa = (size_t)m * k, sb = (size_t)k * n, sc = (size_t)m * n;
  double *A[2], *B[2], *C[2], *dA[2], *dB[2], *dC[2];
  double* C0 = calloc(sc, sizeof(double));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  const double alpha = 1.0, beta = 0.0;
  for (int i = 0; i < 2; ++i) {
    A[i] = malloc(sizeof(double) * sa);
    B[i] = malloc(sizeof(double) * sb);
    C[i] = malloc(sizeof(double) * sc);
    fill(A[i], sa, 501 + (uint64_t)i);
    fill(B[i], sb, 601 + (uint64_t)i);
    CHECK_CUDA(cudaMalloc((void**)&dA[i], sizeof(double) * sa));
    CHECK_CUDA(cudaMalloc((void**)&dB[i], sizeof(double) * sb));
    CHECK_CUDA(cudaMalloc((void**)&dC[i], sizeof(double) * sc));
    CHECK_CUDA(cudaMemcpy(dA[i], A[i], sizeof(double) * sa, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dB[i], B[i], sizeof(double) * sb, cudaMemcpyHostToDevice));
  }
  for (int i = 0; i < 2; ++i) {
    CHECK_CUBLAS(cublasSetStream(handle, i == 0 ? a : b));
    CHECK_CUBLAS(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA[i], m, dB[i], k,
                             &beta, dC[i], m));
  }
  /* Only stream b is waited for first: the call on b must not need a's. */
  CHECK_CUDA(cudaStreamSynchronize(b));
  CHECK_CUDA(cudaStreamSynchronize(a));
  double err = 0;
  for (int i = 0; i < 2; ++i) {
    CHECK_CUDA(cudaMemcpy(C[i], dC[i], sizeof(double) * sc, cudaMemcpyDeviceToHost));
    const double e = sampled_error(&c, A[i], m, B[i], k, C0, C[i], m);
    if (e > err) err = e;
  }
  const int failed = !(err <= ldexp(1.0, -50));
  printf("case %-24s err %.3e hash %016llx %s\n", c.name, err,
         (unsigned long long)hash_bytes(C[1], sizeof(double) * sc), failed ? "FAIL" : "ok");
  cublasDestroy(handle);
  for (int i = 0; i < 2; ++i) {
    cudaFree(dA[i]);
    cudaFree(dB[i]);
    cudaFree(dC[i]);
    free(A[i]);
    free(B[i]);
    free(C[i]);
  }
  free(C0);
  return failed;
}

/* cublasLtMatmul, real FP64 or FP32: D = epilogue(alpha op(A) op(B) + beta C [+ bias]), the
   bias one value per row of D.  D is C itself (torch's nn.Linear: beta 0, bias) or a matrix of
   its own with a wider leading dimension, whose rows past m must stay as they were. */
typedef struct {
  const char* name;
  cudaDataType type; /* of A, B, C, D, alpha, beta and the bias */
  cublasComputeType_t compute;
  cublasLtEpilogue_t epilogue; /* DEFAULT, BIAS or GELU_BIAS */
  int m, n, k;
  cublasOperation_t ta, tb;
  int pad; /* added to every leading dimension */
  double alpha, beta;
  int device_scalars; /* CUBLASLT_POINTER_MODE_DEVICE */
  int d_apart;        /* D is not C: leading dimension ldc + 2 */
  double bound;       /* per sampled entry, relative to |alpha||A||B| + |beta C0| + |bias| */
} LtCase;

static int lt_has_bias(const LtCase* c) {
  return c->epilogue == CUBLASLT_EPILOGUE_BIAS || c->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
}

/* The GELU of cuBLASLt's epilogue, in its tanh form (the erf form differs by less than 5e-4,
   far below the bound of the GELU case relative to its scale). */
static long double gelu(long double x) {
  return 0.5L * x * (1.0L + tanhl(0.7978845608028654L * (x + 0.044715L * x * x * x)));
}

/* max over sampled (i, j) of |D - ref| / (|alpha| (|op(A)||op(B)|)_ij + |beta C0_ij| +
   |bias_i|), against a long-double reference of the values as stored (FP32 ones rounded). */
static double lt_sampled_error(const LtCase* c, const double* A, int lda, const double* B, int ldb,
                               const double* C0, int ldc, const double* bias, const double* D,
                               int ldd) {
  double worst = 0;
  for (int s = 0; s < 97; ++s) {
    const int i = (int)(((long long)s * 7919) % c->m), j = (int)(((long long)s * 104729) % c->n);
    long double sum = 0, magnitude = 0;
    for (int p = 0; p < c->k; ++p) {
      const double a = c->ta == CUBLAS_OP_N ? at(A, lda, i, p) : at(A, lda, p, i);
      const double b = c->tb == CUBLAS_OP_N ? at(B, ldb, p, j) : at(B, ldb, j, p);
      sum += (long double)a * b;
      magnitude += fabsl((long double)a * b);
    }
    const long double shift = lt_has_bias(c) ? bias[i] : 0.0L;
    long double ref = c->alpha * sum + c->beta * (long double)at(C0, ldc, i, j) + shift;
    if (c->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS) ref = gelu(ref);
    const long double scale =
        fabsl(c->alpha) * magnitude + fabsl(c->beta * at(C0, ldc, i, j)) + fabsl(shift);
    const double e = scale > 0 ? (double)(fabsl(at(D, ldd, i, j) - ref) / scale) : 0.0;
    if (e > worst) worst = e;
  }
  return worst;
}

/* n values of X (doubles) on the device in `type` (FP32 ones rounded, and X rounded with them,
   so that the reference sees the values the GPU multiplies). */
static void* to_device(double* X, size_t n, cudaDataType type) {
  void* d;
  if (type == CUDA_R_32F) {
    float* f = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; ++i) X[i] = f[i] = (float)X[i];
    CHECK_CUDA(cudaMalloc(&d, sizeof(float) * n));
    CHECK_CUDA(cudaMemcpy(d, f, sizeof(float) * n, cudaMemcpyHostToDevice));
    free(f);
  } else {
    CHECK_CUDA(cudaMalloc(&d, sizeof(double) * n));
    CHECK_CUDA(cudaMemcpy(d, X, sizeof(double) * n, cudaMemcpyHostToDevice));
  }
  return d;
}

/* n values of `type` on the device back into X (doubles); frees the device copy. */
static void from_device(double* X, void* d, size_t n, cudaDataType type) {
  if (type == CUDA_R_32F) {
    float* f = malloc(sizeof(float) * n);
    CHECK_CUDA(cudaMemcpy(f, d, sizeof(float) * n, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i) X[i] = f[i];
    free(f);
  } else {
    CHECK_CUDA(cudaMemcpy(X, d, sizeof(double) * n, cudaMemcpyDeviceToHost));
  }
  cudaFree(d);
}

/* The descriptor of an LtCase: its compute and scale types, transposes, pointer mode and
   epilogue with its bias. */
static cublasLtMatmulDesc_t lt_case_desc(const LtCase* c, const void* bias) {
  cublasLtMatmulDesc_t desc = lt_desc(c->compute, c->type, c->ta, c->tb, c->device_scalars);
  if (c->epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &c->epilogue,
                                                sizeof c->epilogue));
  }
  if (lt_has_bias(c)) {
    CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                sizeof bias));
  }
  return desc;
}

static int run_lt_case(const LtCase* c, cudaStream_t stream) {
  const int rows_a = c->ta == CUBLAS_OP_N ? c->m : c->k,
            cols_a = c->ta == CUBLAS_OP_N ? c->k : c->m;
  const int rows_b = c->tb == CUBLAS_OP_N ? c->k : c->n,
            cols_b = c->tb == CUBLAS_OP_N ? c->n : c->k;
  const int lda = rows_a + c->pad, ldb = rows_b + c->pad, ldc = c->m + c->pad;
  const int ldd = c->d_apart ? ldc + 2 : ldc;
  const size_t sa = (size_t)lda * cols_a, sb = (size_t)ldb * cols_b, sc = (size_t)ldc * c->n,
               sd = (size_t)ldd * c->n;
  double* A = malloc(sizeof(double) * sa);
  double* B = malloc(sizeof(double) * sb);
  double* C0 = malloc(sizeof(double) * sc);
  double* D0 = malloc(sizeof(double) * sd);
  double* D = malloc(sizeof(double) * sd);
  double* bias = malloc(sizeof(double) * c->m);
  double scalars[2] = {c->alpha, c->beta};
  fill(A, sa, 61 + (uint64_t)c->m);
  fill(B, sb, 67 + (uint64_t)c->n);
  fill(C0, sc, 71 + (uint64_t)c->k);
  fill(D0, sd, 73);
  fill(bias, (size_t)c->m, 79);
  void *dA = to_device(A, sa, c->type), *dB = to_device(B, sb, c->type);
  void *dC = to_device(C0, sc, c->type), *dBias = to_device(bias, (size_t)c->m, c->type);
  void* dD = c->d_apart ? to_device(D0, sd, c->type) : dC;
  void* dScalars = to_device(scalars, 2, c->type);
  const float host_scalars32[2] = {(float)c->alpha, (float)c->beta};
  const size_t bytes = c->type == CUDA_R_32F ? sizeof(float) : sizeof(double);
  const char* host_scalars =
      c->type == CUDA_R_32F ? (const char*)host_scalars32 : (const char*)scalars;
  const char* alpha = c->device_scalars ? (const char*)dScalars : host_scalars;
  const cublasLtMatrixLayout_t lc = lt_layout(c->type, c->m, c->n, ldc);
  lt_matmul(lt_case_desc(c, dBias), alpha, dA, lt_layout(c->type, rows_a, cols_a, lda), dB,
            lt_layout(c->type, rows_b, cols_b, ldb), alpha + bytes, dC, lc, dD,
            c->d_apart ? lt_layout(c->type, c->m, c->n, ldd) : lc, stream);
  if (!c->d_apart) memcpy(D0, C0, sizeof(double) * sd);
  from_device(D, dD, sd, c->type);
  const double err = lt_sampled_error(c, A, lda, B, ldb, C0, ldc, bias, D, ldd);
  int failed = !(err <= c->bound);
  for (int j = 0; j < c->n; ++j) /* D's rows past m untouched */
    for (int i = c->m; i < ldd; ++i)
      if (memcmp(&D[(size_t)j * ldd + i], &D0[(size_t)j * ldd + i], sizeof(double)) != 0)
        failed = 1;
  printf("case %-24s err %.3e hash %016llx %s\n", c->name, err,
         (unsigned long long)hash_bytes(D, sizeof(double) * sd), failed ? "FAIL" : "ok");
  if (c->d_apart) cudaFree(dC);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dBias);
  cudaFree(dScalars);
  free(A);
  free(B);
  free(C0);
  free(D0);
  free(D);
  free(bias);
  return failed;
}

/* Batched and grouped calls: cublasDgemmBatched, cublasZgemmBatched, cublasGemmStridedBatchedEx,
   cublasGemmBatchedEx and cublasDgemmGroupedBatched.  A call is groups of products of one shape
   each (a batched call is one group); every product has data of its own, a group's matrices one
   after another in one allocation per operand.  The device arrays of device pointers are written
   on the call's stream just before it, as a program that builds them per call does: the
   interposer must read them in that stream's order. */
enum BatchApi {
  DGEMM_BATCHED,
  ZGEMM_BATCHED,
  GEMM_STRIDED_BATCHED_EX,
  GEMM_BATCHED_EX,
  DGEMM_GROUPED
};

typedef struct {
  int m, n, k;
  cublasOperation_t ta, tb;
  int pad;                     /* added to every leading dimension */
  cuDoubleComplex alpha, beta; /* imaginary parts for ZGEMM_BATCHED only */
  int size;                    /* products in the group */
} Group;

typedef struct {
  const char* name;
  enum BatchApi api;
  cublasComputeType_t compute; /* of the Ex calls */
  int device_scalars;          /* CUBLAS_POINTER_MODE_DEVICE (batched calls only) */
  int stream;
  int groups;
  Group group[3];
  /* Where set, the last group is also reported alone under this name (its bits only). */
  const char* last_group_case;
} BatchCase;

static int run_batch_case(const BatchCase* c, cudaStream_t stream) {
  const int is_complex = c->api == ZGEMM_BATCHED;
  const size_t es = is_complex ? 2 : 1; /* doubles per element */
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  CHECK_CUBLAS(cublasSetPointerMode(
      handle, c->device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
  double *A[3], *B[3], *C0[3], *C[3], *dA[3], *dB[3], *dC[3];
  int lda[3], ldb[3], ldc[3];
  size_t sa[3], sb[3], sc[3];
  int products = 0;
  for (int g = 0; g < c->groups; ++g) products += c->group[g].size;
  void** pointers = malloc(3 * sizeof(void*) * (size_t)products); /* A's, B's, C's */
  int p = 0;
  for (int g = 0; g < c->groups; ++g) {
    const Group* x = &c->group[g];
    const int rows_a = x->ta == CUBLAS_OP_N ? x->m : x->k,
              cols_a = x->ta == CUBLAS_OP_N ? x->k : x->m;
    const int rows_b = x->tb == CUBLAS_OP_N ? x->k : x->n,
              cols_b = x->tb == CUBLAS_OP_N ? x->n : x->k;
    lda[g] = rows_a + x->pad;
    ldb[g] = rows_b + x->pad;
    ldc[g] = x->m + x->pad;
    sa[g] = (size_t)lda[g] * cols_a * es; /* doubles per product */
    sb[g] = (size_t)ldb[g] * cols_b * es;
    sc[g] = (size_t)ldc[g] * x->n * es;
    A[g] = malloc(sizeof(double) * sa[g] * x->size);
    B[g] = malloc(sizeof(double) * sb[g] * x->size);
    C0[g] = malloc(sizeof(double) * sc[g] * x->size);
    C[g] = malloc(sizeof(double) * sc[g] * x->size);
    fill(A[g], sa[g] * x->size, 801 + 10 * (uint64_t)g + (uint64_t)x->m);
    fill(B[g], sb[g] * x->size, 803 + 10 * (uint64_t)g + (uint64_t)x->n);
    fill(C0[g], sc[g] * x->size, 807 + 10 * (uint64_t)g + (uint64_t)x->k);
    CHECK_CUDA(cudaMalloc((void**)&dA[g], sizeof(double) * sa[g] * x->size));
    CHECK_CUDA(cudaMalloc((void**)&dB[g], sizeof(double) * sb[g] * x->size));
    CHECK_CUDA(cudaMalloc((void**)&dC[g], sizeof(double) * sc[g] * x->size));
    CHECK_CUDA(cudaMemcpy(dA[g], A[g], sizeof(double) * sa[g] * x->size, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dB[g], B[g], sizeof(double) * sb[g] * x->size, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dC[g], C0[g], sizeof(double) * sc[g] * x->size, cudaMemcpyHostToDevice));
    for (int i = 0; i < x->size; ++i, ++p) {
      pointers[p] = dA[g] + i * sa[g];
      pointers[products + p] = dB[g] + i * sb[g];
      pointers[2 * products + p] = dC[g] + i * sc[g];
    }
  }
  void** dPointers;
  CHECK_CUDA(cudaMalloc((void**)&dPointers, 3 * sizeof(void*) * (size_t)products));
  CHECK_CUDA(cudaMemcpyAsync(dPointers, pointers, 3 * sizeof(void*) * (size_t)products,
                             cudaMemcpyHostToDevice, stream));
  const void* const* dAp = (const void* const*)dPointers;
  const void* const* dBp = (const void* const*)(dPointers + products);
  void* const* dCp = dPointers + 2 * products;
  const Group* x = &c->group[0];
  /* Batched calls: one group, its scalars on the host or the device. */
  cuDoubleComplex* dScalars;
  CHECK_CUDA(cudaMalloc((void**)&dScalars, 2 * sizeof(cuDoubleComplex)));
  const cuDoubleComplex zscalars[2] = {x->alpha, x->beta};
  const double dscalars[2] = {x->alpha.x, x->beta.x};
  if (is_complex)
    CHECK_CUDA(cudaMemcpy(dScalars, zscalars, sizeof zscalars, cudaMemcpyHostToDevice));
  else
    CHECK_CUDA(cudaMemcpy(dScalars, dscalars, sizeof dscalars, cudaMemcpyHostToDevice));
  const char* host_scalars = is_complex ? (const char*)zscalars : (const char*)dscalars;
  const char* alpha = c->device_scalars ? (const char*)dScalars : host_scalars;
  const char* beta = alpha + es * sizeof(double);
  switch (c->api) {
    case DGEMM_BATCHED:
      CHECK_CUBLAS(cublasDgemmBatched(handle, x->ta, x->tb, x->m, x->n, x->k, (const double*)alpha,
                                      (const double* const*)dAp, lda[0], (const double* const*)dBp,
                                      ldb[0], (const double*)beta, (double* const*)dCp, ldc[0],
                                      x->size));
      break;
    case ZGEMM_BATCHED:
      CHECK_CUBLAS(cublasZgemmBatched(
          handle, x->ta, x->tb, x->m, x->n, x->k, (const cuDoubleComplex*)alpha,
          (const cuDoubleComplex* const*)dAp, lda[0], (const cuDoubleComplex* const*)dBp, ldb[0],
          (const cuDoubleComplex*)beta, (cuDoubleComplex* const*)dCp, ldc[0], x->size));
      break;
    case GEMM_STRIDED_BATCHED_EX:
      CHECK_CUBLAS(cublasGemmStridedBatchedEx(
          handle, x->ta, x->tb, x->m, x->n, x->k, alpha, dA[0], CUDA_R_64F, lda[0],
          (long long)sa[0], dB[0], CUDA_R_64F, ldb[0], (long long)sb[0], beta, dC[0], CUDA_R_64F,
          ldc[0], (long long)sc[0], x->size, c->compute, CUBLAS_GEMM_DEFAULT));
      break;
    case GEMM_BATCHED_EX:
      CHECK_CUBLAS(cublasGemmBatchedEx(
          handle, x->ta, x->tb, x->m, x->n, x->k, alpha, dAp, CUDA_R_64F, lda[0], dBp, CUDA_R_64F,
          ldb[0], beta, dCp, CUDA_R_64F, ldc[0], x->size, c->compute, CUBLAS_GEMM_DEFAULT));
      break;
    case DGEMM_GROUPED: {
      /* cuBLAS's grouped call: per group host arrays, scalars among them. */
      cublasOperation_t ta[3], tb[3];
      int m[3], n[3], k[3], size[3];
      double alphas[3], betas[3];
      for (int g = 0; g < c->groups; ++g) {
        ta[g] = c->group[g].ta;
        tb[g] = c->group[g].tb;
        m[g] = c->group[g].m;
        n[g] = c->group[g].n;
        k[g] = c->group[g].k;
        size[g] = c->group[g].size;
        alphas[g] = c->group[g].alpha.x;
        betas[g] = c->group[g].beta.x;
      }
      CHECK_CUBLAS(cublasDgemmGroupedBatched(
          handle, ta, tb, m, n, k, alphas, (const double* const*)dAp, lda,
          (const double* const*)dBp, ldb, betas, (double* const*)dCp, ldc, c->groups, size));
      break;
    }
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  double err = 0, last_err = 0;
  int failed = 0, last_failed = 0;
  uint64_t hash = 1469598103934665603ULL, last_hash = 0;
  for (int g = 0; g < c->groups; ++g) {
    const Group* y = &c->group[g];
    const Case real = {c->name, DGEMM,      y->m,      y->n, y->k, y->ta, y->tb,
                       y->pad,  y->alpha.x, y->beta.x, 0,    0,    0};
    const ZCase zc = {c->name, ZGEMM,  y->m,     y->n,    y->k, y->ta,
                      y->tb,   y->pad, y->alpha, y->beta, 0,    0};
    CHECK_CUDA(cudaMemcpy(C[g], dC[g], sizeof(double) * sc[g] * y->size, cudaMemcpyDeviceToHost));
    double group_err = 0;
    int group_failed = 0;
    for (int i = 0; i < y->size; ++i) {
      const double *a = A[g] + i * sa[g], *b = B[g] + i * sb[g];
      const double *c0 = C0[g] + i * sc[g], *ci = C[g] + i * sc[g];
      const double e = is_complex ? zsampled_error(&zc, a, lda[g], b, ldb[g], c0, ci, ldc[g])
                                  : sampled_error(&real, a, lda[g], b, ldb[g], c0, ci, ldc[g]);
      if (e > group_err) group_err = e;
      /* The padding rows of C (i >= m) must be untouched. */
      for (int j = 0; j < y->n; ++j)
        if (memcmp(ci + es * ((size_t)j * ldc[g] + y->m), c0 + es * ((size_t)j * ldc[g] + y->m),
                   sizeof(double) * es * (size_t)y->pad) != 0)
          group_failed = 1;
    }
    group_failed |= !(group_err <= ldexp(1.0, -50));
    if (group_err > err) err = group_err;
    failed |= group_failed;
    hash = hash_more(hash, C[g], sizeof(double) * sc[g] * y->size);
    last_err = group_err;
    last_failed = group_failed;
    last_hash = hash_bytes(C[g], sizeof(double) * sc[g] * y->size);
  }
  printf("case %-24s err %.3e hash %016llx %s\n", c->name, err, (unsigned long long)hash,
         failed ? "FAIL" : "ok");
  if (c->last_group_case)
    printf("case %-24s err %.3e hash %016llx %s\n", c->last_group_case, last_err,
           (unsigned long long)last_hash, last_failed ? "FAIL" : "ok");
  cublasDestroy(handle);
  for (int g = 0; g < c->groups; ++g) {
    cudaFree(dA[g]);
    cudaFree(dB[g]);
    cudaFree(dC[g]);
    free(A[g]);
    free(B[g]);
    free(C0[g]);
    free(C[g]);
  }
  cudaFree(dPointers);
  cudaFree(dScalars);
  free(pointers);
  return failed;
}

/* Level-3 routines: cublasDsyrk_v2, cublasZsyrk_v2, cublasZherk_v2, cublasDtrsm_v2,
   cublasZtrsm_v2, cublasDtrmm_v2, cublasZtrmm_v2, cublasDsymm_v2, cublasZsymm_v2 and
   cublasZhemm_v2, which the interposer answers with ozaki's routines under OZAKI_CUBLAS=force.
   What a routine must not read holds NaN (A's other triangle, a unit diagonal; C's other
   triangle for syrk and herk, which must also stay as it was), and the imaginary parts that
   herk and hemm take as zero hold 7.  Checked on sampled entries against long double: syrk,
   herk, trmm, symm and hemm by the forward error relative to |alpha| |op(A)||op(B)| + |beta C0|
   within 2^-50; trsm, on a diagonally dominant A, by the componentwise backward error
   |alpha B0 - op(A) X| / (|op(A)||X| + |alpha B0|) within 2^-48. */
enum L3Api { DSYRK, ZSYRK, ZHERK, DTRSM, ZTRSM, DTRMM, ZTRMM, DSYMM, ZSYMM, ZHEMM };
typedef struct {
  const char* name;
  enum L3Api api;
  cublasSideMode_t side;
  cublasFillMode_t uplo;
  cublasOperation_t trans;
  cublasDiagType_t diag;
  int m, n, k; /* C (trsm: B) is m x n; syrk and herk: n x n with op(A) n x k, m = n */
  int pad;     /* added to every leading dimension */
  cuDoubleComplex alpha, beta; /* real parts only for the real routines and herk */
  int device_scalars;
  int stream;
  int c_apart; /* trmm: C is not B (leading dimension ldb + 2) */
} L3Case;

typedef struct {
  long double re, im;
} LZ;

static LZ lz(long double re, long double im) {
  LZ z = {re, im};
  return z;
}
static LZ lz_mul(LZ a, LZ b) { return lz(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
static LZ lz_add(LZ a, LZ b) { return lz(a.re + b.re, a.im + b.im); }
static LZ lz_conj(LZ a, int conjugate) { return lz(a.re, conjugate ? -a.im : a.im); }
static long double lz_abs(LZ a) { return sqrtl(a.re * a.re + a.im * a.im); }

static int l3_complex(const L3Case* c) {
  return c->api == ZSYRK || c->api == ZHERK || c->api == ZTRSM || c->api == ZTRMM ||
         c->api == ZSYMM || c->api == ZHEMM;
}
static int l3_rank_k(const L3Case* c) { return c->api <= ZHERK; }
static int l3_triangular(const L3Case* c) { return c->api >= DTRSM && c->api <= ZTRMM; }
static int l3_solve(const L3Case* c) { return c->api == DTRSM || c->api == ZTRSM; }
/* A's stored rows (and columns: square but for syrk and herk). */
static int l3_rows_a(const L3Case* c) {
  if (l3_rank_k(c)) return c->trans == CUBLAS_OP_N ? c->n : c->k;
  return c->side == CUBLAS_SIDE_LEFT ? c->m : c->n;
}
static int l3_cols_a(const L3Case* c) {
  return l3_rank_k(c) ? (c->trans == CUBLAS_OP_N ? c->k : c->n) : l3_rows_a(c);
}
/* Whether (row, col) is in the `uplo` triangle (the diagonal included). */
static int in_triangle(cublasFillMode_t uplo, int row, int col) {
  return uplo == CUBLAS_FILL_MODE_LOWER ? row >= col : row <= col;
}

/* Element (row, col) of a column-major matrix of `es` doubles per element. */
static LZ get(const double* X, int es, int ld, int row, int col) {
  const double* x = X + (size_t)es * ((size_t)col * ld + row);
  return lz(x[0], es == 2 ? x[1] : 0.0);
}
static void set(double* X, int es, int ld, int row, int col, double re, double im) {
  double* x = X + (size_t)es * ((size_t)col * ld + row);
  x[0] = re;
  if (es == 2) x[1] = im;
}

/* Entry (row, col) of the square A as the routine reads it: its stored triangle; the other
   triangle zero (trsm, trmm) or mirrored (symm; hemm conjugated, with a real diagonal); a unit
   diagonal one. */
static LZ a_read(const L3Case* c, const double* A, int es, int lda, int row, int col) {
  if (l3_triangular(c) && c->diag == CUBLAS_DIAG_UNIT && row == col) return lz(1, 0);
  if (in_triangle(c->uplo, row, col)) {
    const LZ a = get(A, es, lda, row, col);
    return c->api == ZHEMM && row == col ? lz(a.re, 0) : a;
  }
  if (l3_triangular(c)) return lz(0, 0);
  return lz_conj(get(A, es, lda, col, row), c->api == ZHEMM);
}
/* op(A)(row, col) for trsm and trmm, and for syrk and herk (their A general). */
static LZ op_a(const L3Case* c, const double* A, int es, int lda, int row, int col) {
  const int h = c->trans == CUBLAS_OP_C;
  if (l3_rank_k(c))
    return c->trans == CUBLAS_OP_N ? get(A, es, lda, row, col)
                                   : lz_conj(get(A, es, lda, col, row), h);
  return c->trans == CUBLAS_OP_N ? a_read(c, A, es, lda, row, col)
                                 : lz_conj(a_read(c, A, es, lda, col, row), h);
}

/* A as the case needs it: NaN where the routine must not read (the other triangle of a square
   A, a unit diagonal); for trsm off-diagonal entries divided by the order and a diagonal of
   2 + |a| (diagonally dominant: well conditioned); hemm's diagonal imaginary parts 7. */
static void l3_fill_a(const L3Case* c, double* A, int es, int lda) {
  const int rows = l3_rows_a(c), cols = l3_cols_a(c);
  fill(A, (size_t)es * lda * cols, 901 + (uint64_t)c->api);
  if (l3_rank_k(c)) return;
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      const LZ a = get(A, es, lda, i, j);
      if (!in_triangle(c->uplo, i, j) ||
          (l3_triangular(c) && c->diag == CUBLAS_DIAG_UNIT && i == j))
        set(A, es, lda, i, j, NAN, NAN);
      else if (l3_solve(c) && i != j)
        set(A, es, lda, i, j, (double)a.re / rows, (double)a.im / rows);
      else if (l3_solve(c))
        set(A, es, lda, i, j, 2.0 + fabs((double)a.re), (double)a.im);
      else if (c->api == ZHEMM && i == j)
        set(A, es, lda, i, j, (double)a.re, 7.0);
    }
}

/* A case's host data.  B0: trmm's, symm's and trsm's B before the call; C0: C before the call
   (B0 itself where C is B: trsm, trmm in place), C after it; C and C0 share ldc. */
typedef struct {
  int es, lda, ldb, ldc;
  double *A, *B0, *C0, *C, *B; /* B: B after the call (trmm with C apart) */
} L3Data;

/* The sum over p of op(A)(i, p) X(p, j) (side L; side R X(i, p) op(A)(p, j); syrk and herk
   op(A)(i, p) op(A)(j, p), herk's conjugated), and the sum of the terms' moduli. */
static void l3_product(const L3Case* c, const L3Data* d, const double* X, int ldx, int i, int j,
                       LZ* sum, long double* magnitude) {
  const int es = d->es, left = c->side == CUBLAS_SIDE_LEFT;
  const int inner = l3_rank_k(c) ? c->k : (left ? c->m : c->n);
  *sum = lz(0, 0);
  *magnitude = 0;
  for (int p = 0; p < inner; ++p) {
    LZ x, y;
    if (l3_rank_k(c)) {
      x = op_a(c, d->A, es, d->lda, i, p);
      y = lz_conj(op_a(c, d->A, es, d->lda, j, p), c->api == ZHERK);
    } else if (left) {
      x = l3_triangular(c) ? op_a(c, d->A, es, d->lda, i, p) : a_read(c, d->A, es, d->lda, i, p);
      y = get(X, es, ldx, p, j);
    } else {
      x = get(X, es, ldx, i, p);
      y = l3_triangular(c) ? op_a(c, d->A, es, d->lda, p, j) : a_read(c, d->A, es, d->lda, p, j);
    }
    *sum = lz_add(*sum, lz_mul(x, y));
    *magnitude += lz_abs(x) * lz_abs(y);
  }
}

/* At (i, j): trsm's componentwise backward error |alpha B0 - op(A) X| / (|op(A)||X| +
   |alpha B0|), X the result; the others' forward error |C - ref| / (|alpha| |op(A)||op(B)| +
   |beta C0|), herk's C0 with a real diagonal. */
static double l3_entry_error(const L3Case* c, const L3Data* d, int i, int j) {
  const int es = d->es, real_scalars = es == 1 || c->api == ZHERK;
  const LZ alpha = lz(c->alpha.x, real_scalars ? 0 : c->alpha.y);
  const LZ beta = lz(c->beta.x, real_scalars ? 0 : c->beta.y);
  LZ sum, residual;
  long double magnitude, scale;
  if (l3_solve(c)) {
    l3_product(c, d, d->C, d->ldc, i, j, &sum, &magnitude);
    const LZ rhs = lz_mul(alpha, get(d->B0, es, d->ldb, i, j));
    residual = lz(rhs.re - sum.re, rhs.im - sum.im);
    scale = magnitude + lz_abs(rhs);
  } else {
    l3_product(c, d, d->B0, d->ldb, i, j, &sum, &magnitude);
    LZ c0 = l3_triangular(c) ? lz(0, 0) : get(d->C0, es, d->ldc, i, j);
    if (c->api == ZHERK && i == j) c0.im = 0;
    const LZ ref = lz_add(lz_mul(alpha, sum), lz_mul(beta, c0));
    const LZ out = get(d->C, es, d->ldc, i, j);
    residual = lz(out.re - ref.re, out.im - ref.im);
    scale = lz_abs(alpha) * magnitude + lz_abs(lz_mul(beta, c0));
  }
  return scale > 0 ? (double)(lz_abs(residual) / scale) : 0.0;
}

/* The worst error over 97 sampled entries (syrk and herk: in C's `uplo` triangle). */
static double l3_sampled_error(const L3Case* c, const L3Data* d) {
  double worst = 0;
  for (int s = 0; s < 97; ++s) {
    int i = (int)(((long long)s * 7919) % c->m), j = (int)(((long long)s * 104729) % c->n);
    if (l3_rank_k(c) && !in_triangle(c->uplo, i, j)) {
      const int t = i;
      i = j;
      j = t;
    }
    const double e = l3_entry_error(c, d, i, j);
    if (isnan(e)) return e;
    if (e > worst) worst = e;
  }
  return worst;
}

/* Whether everything the call must not write is as it was: C's rows past m, syrk's and herk's
   other triangle of C (NaN), and B where C is apart from it. */
static int l3_untouched(const L3Case* c, const L3Data* d) {
  const size_t bytes = sizeof(double) * d->es;
  for (int j = 0; j < c->n; ++j)
    for (int i = 0; i < d->ldc; ++i)
      if ((i >= c->m || (l3_rank_k(c) && !in_triangle(c->uplo, i, j))) &&
          memcmp(d->C + (size_t)d->es * ((size_t)j * d->ldc + i),
                 d->C0 + (size_t)d->es * ((size_t)j * d->ldc + i), bytes) != 0)
        return 0;
  return d->B == NULL || memcmp(d->B, d->B0, bytes * (size_t)d->ldb * c->n) == 0;
}

/* The case's cuBLAS call; alpha and beta point at two scalars of its type (host or device),
   trsm's B is C. */
static void l3_call(const L3Case* c, cublasHandle_t h, const void* alpha, const void* beta,
                    const void* A, int lda, const void* B, int ldb, void* C, int ldc) {
  typedef const double* D;
  typedef const cuDoubleComplex* Z;
  double* dc = (double*)C;
  cuDoubleComplex* zc = (cuDoubleComplex*)C;
  const cublasSideMode_t s = c->side;
  const cublasFillMode_t u = c->uplo;
  const cublasOperation_t t = c->trans;
  const cublasDiagType_t g = c->diag;
  const int m = c->m, n = c->n, k = c->k;
  switch (c->api) {
    case DSYRK:
      CHECK_CUBLAS(cublasDsyrk(h, u, t, n, k, (D)alpha, (D)A, lda, (D)beta, dc, ldc));
      break;
    case ZSYRK:
      CHECK_CUBLAS(cublasZsyrk(h, u, t, n, k, (Z)alpha, (Z)A, lda, (Z)beta, zc, ldc));
      break;
    case ZHERK:
      CHECK_CUBLAS(cublasZherk(h, u, t, n, k, (D)alpha, (Z)A, lda, (D)beta, zc, ldc));
      break;
    case DTRSM: CHECK_CUBLAS(cublasDtrsm(h, s, u, t, g, m, n, (D)alpha, (D)A, lda, dc, ldc)); break;
    case ZTRSM: CHECK_CUBLAS(cublasZtrsm(h, s, u, t, g, m, n, (Z)alpha, (Z)A, lda, zc, ldc)); break;
    case DTRMM:
      CHECK_CUBLAS(cublasDtrmm(h, s, u, t, g, m, n, (D)alpha, (D)A, lda, (D)B, ldb, dc, ldc));
      break;
    case ZTRMM:
      CHECK_CUBLAS(cublasZtrmm(h, s, u, t, g, m, n, (Z)alpha, (Z)A, lda, (Z)B, ldb, zc, ldc));
      break;
    case DSYMM:
      CHECK_CUBLAS(cublasDsymm(h, s, u, m, n, (D)alpha, (D)A, lda, (D)B, ldb, (D)beta, dc, ldc));
      break;
    case ZSYMM:
      CHECK_CUBLAS(cublasZsymm(h, s, u, m, n, (Z)alpha, (Z)A, lda, (Z)B, ldb, (Z)beta, zc, ldc));
      break;
    case ZHEMM:
      CHECK_CUBLAS(cublasZhemm(h, s, u, m, n, (Z)alpha, (Z)A, lda, (Z)B, ldb, (Z)beta, zc, ldc));
      break;
  }
}

/* Whether the case's C is its B: trsm (in place), and trmm unless its C is apart. */
static int l3_c_is_b(const L3Case* c) { return l3_solve(c) || (l3_triangular(c) && !c->c_apart); }

/* The case's host data, allocated and filled (l3_fill_a; C0 of syrk and herk NaN in the other
   triangle, herk's diagonal imaginary parts 7). */
static L3Data l3_host_data(const L3Case* c) {
  const int es = l3_complex(c) ? 2 : 1;
  L3Data d = {es, l3_rows_a(c) + c->pad, c->m + c->pad, 0, NULL, NULL, NULL, NULL, NULL};
  d.ldc = l3_rank_k(c) ? c->n + c->pad : (c->c_apart ? d.ldb + 2 : d.ldb);
  const size_t sb = (size_t)es * d.ldb * c->n, sc = (size_t)es * d.ldc * c->n;
  d.A = malloc(sizeof(double) * es * (size_t)d.lda * l3_cols_a(c));
  l3_fill_a(c, d.A, es, d.lda);
  if (!l3_rank_k(c)) {
    d.B0 = malloc(sizeof(double) * sb);
    fill(d.B0, sb, 911 + (uint64_t)c->m);
  }
  if (c->c_apart) d.B = malloc(sizeof(double) * sb);
  d.C0 = l3_c_is_b(c) ? d.B0 : malloc(sizeof(double) * sc);
  d.C = malloc(sizeof(double) * sc);
  if (l3_c_is_b(c)) return d;
  fill(d.C0, sc, 917 + (uint64_t)c->n);
  for (int j = 0; j < c->n && l3_rank_k(c); ++j)
    for (int i = 0; i < c->n; ++i)
      if (!in_triangle(c->uplo, i, j))
        set(d.C0, es, d.ldc, i, j, NAN, NAN);
      else if (c->api == ZHERK && i == j)
        set(d.C0, es, d.ldc, i, j, get(d.C0, es, d.ldc, i, j).re, 7.0);
  return d;
}

static void* l3_to_device(const double* X, size_t doubles) {
  void* d;
  CHECK_CUDA(cudaMalloc(&d, sizeof(double) * doubles));
  CHECK_CUDA(cudaMemcpy(d, X, sizeof(double) * doubles, cudaMemcpyHostToDevice));
  return d;
}

static int run_l3_case(const L3Case* c, cudaStream_t stream) {
  L3Data d = l3_host_data(c);
  const int es = d.es;
  const size_t sa = (size_t)es * d.lda * l3_cols_a(c), sb = (size_t)es * d.ldb * c->n,
               sc = (size_t)es * d.ldc * c->n;
  void* dA = l3_to_device(d.A, sa);
  void* dB = d.B0 ? l3_to_device(d.B0, sb) : NULL;
  void* dC = l3_c_is_b(c) ? dB : l3_to_device(d.C0, sc);
  /* Scalars of the call's type: double for the real routines and herk. */
  const int real_scalars = es == 1 || c->api == ZHERK;
  const cuDoubleComplex zscalars[2] = {c->alpha, c->beta};
  const double dscalars[2] = {c->alpha.x, c->beta.x};
  const void* host_scalars = real_scalars ? (const void*)dscalars : (const void*)zscalars;
  const size_t scalar_bytes = real_scalars ? sizeof(double) : sizeof(cuDoubleComplex);
  char* dScalars;
  CHECK_CUDA(cudaMalloc((void**)&dScalars, 2 * scalar_bytes));
  CHECK_CUDA(cudaMemcpy(dScalars, host_scalars, 2 * scalar_bytes, cudaMemcpyHostToDevice));
  const char* alpha = c->device_scalars ? dScalars : (const char*)host_scalars;
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  CHECK_CUBLAS(cublasSetPointerMode(
      handle, c->device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
  l3_call(c, handle, alpha, alpha + scalar_bytes, dA, d.lda, dB, d.ldb, dC, d.ldc);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(d.C, dC, sizeof(double) * sc, cudaMemcpyDeviceToHost));
  if (d.B) CHECK_CUDA(cudaMemcpy(d.B, dB, sizeof(double) * sb, cudaMemcpyDeviceToHost));
  const double err = l3_sampled_error(c, &d);
  const int failed = !(err <= ldexp(1.0, l3_solve(c) ? -48 : -50)) || !l3_untouched(c, &d);
  printf("case %-24s err %.3e hash %016llx %s\n", c->name, err,
         (unsigned long long)hash_bytes(d.C, sizeof(double) * sc), failed ? "FAIL" : "ok");
  cublasDestroy(handle);
  if (dC != dB) cudaFree(dC);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dScalars);
  if (d.C0 != d.B0) free(d.C0);
  free(d.A);
  free(d.B0);
  free(d.B);
  free(d.C);
  return failed;
}

static void* run_job(void* arg) {
  Job* job = (Job*)arg;
  job->failed = run_case(job->c, job->stream);
  return NULL;
}

int main(void) {
  /* Names starting with "pass_" are calls the interposer must pass through unchanged. */
  static const Case cases[] = {
      {"dgemm_nn_padded", DGEMM, 1536, 1280, 2048, CUBLAS_OP_N, CUBLAS_OP_N, 3, 1.5, 0.5, 0, 1, 0},
      {"dgemm_tn_device_scalars", DGEMM, 1024, 1100, 1300, CUBLAS_OP_T, CUBLAS_OP_N, 5, -0.75, 2.0,
       1, 2, 0},
      {"dgemm_nt_default_stream", DGEMM, 1200, 1024, 1024, CUBLAS_OP_N, CUBLAS_OP_T, 0, 1.0, 0.0, 0,
       0, 0},
      {"dgemm_cc", DGEMM, 1024, 1024, 1500, CUBLAS_OP_C, CUBLAS_OP_C, 1, 1.0, 1.0, 0, 1, 0},
      {"gemmex_64f_tt", GEMM_EX_64F, 1024, 1536, 1024, CUBLAS_OP_T, CUBLAS_OP_T, 7, 2.0, -1.0, 1, 1,
       0},
      {"dgemm_strided_batched", DGEMM_STRIDED_BATCHED, 1024, 1024, 1024, CUBLAS_OP_N, CUBLAS_OP_N,
       0, 1.0, 0.25, 0, 2, 3},
      {"pass_dgemm_small", DGEMM, 64, 48, 80, CUBLAS_OP_N, CUBLAS_OP_N, 2, 1.0, 0.5, 0, 1, 0},
      {"pass_sgemm", SGEMM, 1024, 1024, 1024, CUBLAS_OP_N, CUBLAS_OP_N, 0, 1.0, 0.5, 0, 1, 0},
      {"pass_batched_small", DGEMM_STRIDED_BATCHED, 32, 32, 32, CUBLAS_OP_N, CUBLAS_OP_T, 1, 1.0,
       0.0, 0, 2, 64},
  };
  static const ZCase zcases[] = {
      {"zgemm_nc_padded_device",
       ZGEMM,
       1024,
       1280,
       1536,
       CUBLAS_OP_N,
       CUBLAS_OP_C,
       3,
       {1.5, -0.5},
       {0.5, 0.25},
       1,
       1},
      {"zgemm_tn_real_scalars",
       ZGEMM,
       1100,
       1024,
       1024,
       CUBLAS_OP_T,
       CUBLAS_OP_N,
       0,
       {1.0, 0.0},
       {0.0, 0.0},
       0,
       0},
      {"gemmex_c64f_ct",
       GEMM_EX_C64F,
       1024,
       1024,
       1300,
       CUBLAS_OP_C,
       CUBLAS_OP_T,
       5,
       {0.0, 1.0},
       {-1.0, 0.0},
       0,
       2},
      {"lt_z64_cn_device",
       LT_MATMUL_C64F,
       1024,
       1100,
       1280,
       CUBLAS_OP_C,
       CUBLAS_OP_N,
       2,
       {0.5, -1.0},
       {1.0, 0.5},
       1,
       2},
      {"pass_zgemm_small",
       ZGEMM,
       40,
       50,
       60,
       CUBLAS_OP_N,
       CUBLAS_OP_N,
       1,
       {1.0, 0.0},
       {0.5, 0.5},
       0,
       1},
  };
  /* cublasLtMatmul: FP64 without an epilogue (device scalars, D is C) and with a bias (D apart
     from C), the interposer's to take; FP32 with a bias as torch's nn.Linear calls it (beta 0,
     D is C), taken only with OZAKI_CUBLAS_FP32=1; a TF32 compute type and a GELU epilogue, which
     it must pass through whole. */
  static const LtCase lt_cases[] = {
      {"lt_fp64_tn_device", CUDA_R_64F, CUBLAS_COMPUTE_64F, CUBLASLT_EPILOGUE_DEFAULT, 1024, 1280,
       1100, CUBLAS_OP_T, CUBLAS_OP_N, 3, 1.5, 0.5, 1, 0, 0x1p-50},
      {"lt_fp64_bias_nt_d_apart", CUDA_R_64F, CUBLAS_COMPUTE_64F, CUBLASLT_EPILOGUE_BIAS, 1536,
       1024, 1024, CUBLAS_OP_N, CUBLAS_OP_T, 1, -1.0, 0.25, 0, 1, 0x1p-50},
      {"pass_lt_fp32_bias", CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLASLT_EPILOGUE_BIAS, 1024, 1024,
       1024, CUBLAS_OP_T, CUBLAS_OP_N, 0, 1.0, 0.0, 0, 0, 0x1p-18},
      {"pass_lt_tf32_bias", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLASLT_EPILOGUE_BIAS, 1024,
       1024, 1024, CUBLAS_OP_T, CUBLAS_OP_N, 0, 1.0, 0.0, 0, 0, 0x1p-9},
      {"pass_lt_gelu_bias", CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLASLT_EPILOGUE_GELU_BIAS, 1024, 1024,
       1024, CUBLAS_OP_T, CUBLAS_OP_N, 0, 1.0, 0.0, 0, 0, 0x1p-10},
  };
  /* Batched calls of pointer arrays, the FP64 GemmEx batches and a grouped call of two groups
     of different shapes (2 and 1 products), the interposer's to take (under force) product by
     product; a grouped call's third group, below OZAKI_CUBLAS_MIN, stays cuBLAS's as a grouped
     call of its own (its bits reported alone); a batch of small products and a GemmEx batch in
     the pedantic compute type, which it must pass through whole. */
  static const BatchCase batch_cases[] = {
      {"dgemm_batched_device",
       DGEMM_BATCHED,
       CUBLAS_COMPUTE_64F,
       1,
       1,
       1,
       {{640, 576, 704, CUBLAS_OP_N, CUBLAS_OP_T, 3, {1.5, 0}, {0.5, 0}, 3}},
       NULL},
      {"zgemm_batched_cn",
       ZGEMM_BATCHED,
       CUBLAS_COMPUTE_64F,
       0,
       2,
       1,
       {{576, 640, 608, CUBLAS_OP_C, CUBLAS_OP_N, 1, {0.5, -1.0}, {1.0, 0.25}, 2}},
       NULL},
      {"gemm_strided_batched_ex",
       GEMM_STRIDED_BATCHED_EX,
       CUBLAS_COMPUTE_64F,
       0,
       1,
       1,
       {{704, 640, 576, CUBLAS_OP_T, CUBLAS_OP_N, 2, {-1.0, 0}, {0.25, 0}, 2}},
       NULL},
      {"gemm_batched_ex_device",
       GEMM_BATCHED_EX,
       CUBLAS_COMPUTE_64F,
       1,
       2,
       1,
       {{576, 704, 640, CUBLAS_OP_N, CUBLAS_OP_N, 0, {2.0, 0}, {-1.0, 0}, 2}},
       NULL},
      {"dgemm_grouped",
       DGEMM_GROUPED,
       CUBLAS_COMPUTE_64F,
       0,
       1,
       3,
       {{640, 576, 704, CUBLAS_OP_N, CUBLAS_OP_N, 1, {1.0, 0}, {0.5, 0}, 2},
        {768, 544, 608, CUBLAS_OP_T, CUBLAS_OP_T, 2, {-0.5, 0}, {1.0, 0}, 1},
        {48, 40, 56, CUBLAS_OP_N, CUBLAS_OP_T, 1, {1.0, 0}, {0.5, 0}, 1}},
       "pass_dgemm_grouped_small"},
      {"pass_dgemm_batched_small",
       DGEMM_BATCHED,
       CUBLAS_COMPUTE_64F,
       0,
       2,
       1,
       {{32, 32, 32, CUBLAS_OP_N, CUBLAS_OP_N, 1, {1.0, 0}, {0.0, 0}, 16}},
       NULL},
      {"pass_gemm_strided_batched_ex_pedantic",
       GEMM_STRIDED_BATCHED_EX,
       CUBLAS_COMPUTE_64F_PEDANTIC,
       0,
       1,
       1,
       {{576, 576, 576, CUBLAS_OP_N, CUBLAS_OP_N, 0, {1.0, 0}, {0.5, 0}, 2}},
       NULL},
  };
  /* Level-3 routines (run_l3_case): sides, triangles, transposes and diagonals mixed, both
     pointer modes, trmm in place and with its C apart from B.  Under force the interposer takes
     every one through ozaki; under auto trsm and trmm pass, and so do syrk and herk at these
     sizes (below n = 12288). */
  static const L3Case l3_cases[] = {
      {"dsyrk_lt_device",
       DSYRK,
       CUBLAS_SIDE_LEFT,
       CUBLAS_FILL_MODE_LOWER,
       CUBLAS_OP_T,
       CUBLAS_DIAG_NON_UNIT,
       576,
       576,
       640,
       3,
       {1.5, 0},
       {0.5, 0},
       1,
       1,
       0},
      {"zsyrk_un",
       ZSYRK,
       CUBLAS_SIDE_LEFT,
       CUBLAS_FILL_MODE_UPPER,
       CUBLAS_OP_N,
       CUBLAS_DIAG_NON_UNIT,
       544,
       544,
       608,
       1,
       {0.5, -1.0},
       {1.0, 0.25},
       0,
       2,
       0},
      {"zherk_lc_device",
       ZHERK,
       CUBLAS_SIDE_LEFT,
       CUBLAS_FILL_MODE_LOWER,
       CUBLAS_OP_C,
       CUBLAS_DIAG_NON_UNIT,
       608,
       608,
       576,
       2,
       {-0.75, 0},
       {1.25, 0},
       1,
       1,
       0},
      {"dtrsm_llnn",
       DTRSM,
       CUBLAS_SIDE_LEFT,
       CUBLAS_FILL_MODE_LOWER,
       CUBLAS_OP_N,
       CUBLAS_DIAG_NON_UNIT,
       576,
       544,
       0,
       3,
       {1.5, 0},
       {0, 0},
       0,
       1,
       0},
      {"dtrsm_rltu_device",
       DTRSM,
       CUBLAS_SIDE_RIGHT,
       CUBLAS_FILL_MODE_LOWER,
       CUBLAS_OP_T,
       CUBLAS_DIAG_UNIT,
       608,
       576,
       0,
       1,
       {-2.0, 0},
       {0, 0},
       1,
       2,
       0},
      {"ztrsm_rucu_device",
       ZTRSM,
       CUBLAS_SIDE_RIGHT,
       CUBLAS_FILL_MODE_UPPER,
       CUBLAS_OP_C,
       CUBLAS_DIAG_UNIT,
       544,
       608,
       0,
       1,
       {0.5, 0.5},
       {0, 0},
       1,
       2,
       0},
      {"dtrmm_lutu_c_apart",
       DTRMM,
       CUBLAS_SIDE_LEFT,
       CUBLAS_FILL_MODE_UPPER,
       CUBLAS_OP_T,
       CUBLAS_DIAG_UNIT,
       608,
       544,
       0,
       2,
       {-1.0, 0},
       {0, 0},
       0,
       1,
       1},
      {"ztrmm_rlnn_device",
       ZTRMM,
       CUBLAS_SIDE_RIGHT,
       CUBLAS_FILL_MODE_LOWER,
       CUBLAS_OP_N,
       CUBLAS_DIAG_NON_UNIT,
       576,
       640,
       0,
       0,
       {1.0, -0.5},
       {0, 0},
       1,
       2,
       0},
      {"ztrmm_llcn_c_apart",
       ZTRMM,
       CUBLAS_SIDE_LEFT,
       CUBLAS_FILL_MODE_LOWER,
       CUBLAS_OP_C,
       CUBLAS_DIAG_NON_UNIT,
       544,
       576,
       0,
       1,
       {0.0, 1.0},
       {0, 0},
       0,
       1,
       1},
      {"dsymm_ru",
       DSYMM,
       CUBLAS_SIDE_RIGHT,
       CUBLAS_FILL_MODE_UPPER,
       CUBLAS_OP_N,
       CUBLAS_DIAG_NON_UNIT,
       544,
       576,
       0,
       3,
       {2.0, 0},
       {-1.0, 0},
       0,
       1,
       0},
      {"zsymm_ll_device",
       ZSYMM,
       CUBLAS_SIDE_LEFT,
       CUBLAS_FILL_MODE_LOWER,
       CUBLAS_OP_N,
       CUBLAS_DIAG_NON_UNIT,
       576,
       544,
       0,
       1,
       {0.5, 1.0},
       {0.0, 1.0},
       1,
       2,
       0},
      {"zhemm_lu",
       ZHEMM,
       CUBLAS_SIDE_LEFT,
       CUBLAS_FILL_MODE_UPPER,
       CUBLAS_OP_N,
       CUBLAS_DIAG_NON_UNIT,
       608,
       576,
       0,
       2,
       {1.0, 0.25},
       {0.5, -0.5},
       0,
       1,
       0},
  };
  cudaStream_t streams[3] = {0, 0, 0};
  CHECK_CUDA(cudaStreamCreate(&streams[1]));
  CHECK_CUDA(cudaStreamCreate(&streams[2]));
  CHECK_CUBLAS(cublasLtCreate(&lt_handle));
  int failures = 0;
  /* The program's device-wide settings stay its own: the interposer's Kokkos, started by the
     first call it takes, must not leave the device's cache preference changed. */
  enum cudaFuncCache cache_before = cudaFuncCachePreferNone, cache_after = cudaFuncCachePreferNone;
  CHECK_CUDA(cudaDeviceGetCacheConfig(&cache_before));
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    failures += run_case(&cases[i], streams[cases[i].stream]);
  for (size_t i = 0; i < sizeof zcases / sizeof zcases[0]; ++i)
    failures += run_zcase(&zcases[i], streams[zcases[i].stream]);
  for (size_t i = 0; i < sizeof lt_cases / sizeof lt_cases[0]; ++i)
    failures += run_lt_case(&lt_cases[i], streams[1 + i % 2]);
  for (size_t i = 0; i < sizeof batch_cases / sizeof batch_cases[0]; ++i)
    failures += run_batch_case(&batch_cases[i], streams[batch_cases[i].stream]);
  for (size_t i = 0; i < sizeof l3_cases / sizeof l3_cases[0]; ++i)
    failures += run_l3_case(&l3_cases[i], streams[l3_cases[i].stream]);
  /* Captures on a stream that synchronises with the default stream and on a non-blocking one
     (torch.cuda.graph's kind), each replayed with new data. */
  failures += run_capture(streams[1], "graph_capture");
  cudaStream_t graph_stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&graph_stream, cudaStreamNonBlocking));
  failures += run_capture(graph_stream, "graph_capture_nonblocking");
  cudaStreamDestroy(graph_stream);
  failures += run_moved_handle(streams[1], streams[2]);
  /* Two host threads, each with its own handle on its own stream, at once. */
  static const Case threaded[2] = {
      {"threads_a", DGEMM, 2048, 1024, 1536, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1.0, 0.5, 0, 1, 0},
      {"threads_b", DGEMM, 1024, 2048, 1024, CUBLAS_OP_T, CUBLAS_OP_N, 0, -1.0, 1.0, 1, 2, 0},
  };
  Job jobs[2];
  pthread_t tid[2];
  for (int t = 0; t < 2; ++t) {
    jobs[t].c = &threaded[t];
    jobs[t].stream = streams[1 + t];
    jobs[t].failed = 0;
    pthread_create(&tid[t], NULL, run_job, &jobs[t]);
  }
  for (int t = 0; t < 2; ++t) {
    pthread_join(tid[t], NULL);
    failures += jobs[t].failed;
  }
  cudaStreamDestroy(streams[1]);
  cudaStreamDestroy(streams[2]);
  cublasLtDestroy(lt_handle);
  CHECK_CUDA(cudaDeviceGetCacheConfig(&cache_after));
  if (cache_after != cache_before) {
    printf("case device_cache_config FAILED: the device's cache preference changed from %d to %d\n",
           (int)cache_before, (int)cache_after);
    ++failures;
  }
  printf("cublas_client: %d of %d cases outside their bound\n", failures,
         (int)(sizeof cases / sizeof cases[0] + sizeof zcases / sizeof zcases[0] +
               sizeof lt_cases / sizeof lt_cases[0] + sizeof batch_cases / sizeof batch_cases[0] +
               sizeof l3_cases / sizeof l3_cases[0]) +
             5);
  return failures;
}
