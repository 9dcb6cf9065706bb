// residue_products_rate: scheme II's pass products through the library's own sm_90a kernel
// (backends/cuda/residue_products_sm90.cu: residue tiles, 1 byte per entry and modulus)
// against cublasGemmEx (INT32 products, what the reconstruction reads otherwise), on a hot card:
// its check (every residue of every product against cuBLAS's) and both rates.
//
//   residue_products_rate [--shape RxCxK] [--moduli L] [--rounds 5] [--burst 1]
//                         [--heat-ms 1500] [--check 1] [--pairs 1]
//
// Products as the backend's: P_l(r, c) = sum_k A_l(r, k) B_l(c, k) for l < L, A's rows holding
// L moduli's K residues each (leading dimension L K, modulus l at offset l K) and B's alike
// (scheme II's interleaved layout), random int8 in [-127, 127].  After --heat-ms of cuBLAS
// passes, --rounds rounds time one burst of --burst passes of each in turn (the products run
// at the H200's power cap: only a hot, alternating comparison is fair); the first round is
// dropped and the median reported.  --pairs 0 runs the kernel's CTAs one per tile instead of
// in clusters of 2 that load B's tiles once for both.
#include "residue_products_sm90.hpp"
#include "tool_args.hpp"

#include <ozaki/impl/crt/residue_tiles.hpp>
#include <ozaki/options.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

#define CHECK_CUDA(x)                                                                         \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define CHECK_CUBLAS(x)                                                               \
  do {                                                                                \
    cublasStatus_t s_ = (x);                                                          \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                \
      std::fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, (int)s_); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

using ozaki::Impl::ResidueTiles;

__global__ void fill_random(std::int8_t* x, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x[i] = static_cast<std::int8_t>(static_cast<int>(z % 255) - 127);
  }
}

/// Residue tiles whose byte differs from the symmetric residue of cuBLAS's product, counted.
__global__ void count_mismatches(const std::int32_t* ref, const std::int8_t* tiles, int rows,
                                 int cols, std::int64_t tiles_c, std::int64_t per_plane,
                                 const int* moduli, int L, unsigned long long* mismatches) {
  unsigned long long local = 0;
  for (std::int64_t at = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       at < per_plane * L; at += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const int l = static_cast<int>(at / per_plane);
    // byte = (tile vectors + v) slots vector_bytes + vector_bytes s + b (residue_tiles.hpp)
    const std::int64_t byte = at % per_plane;
    constexpr int vector_bytes = ResidueTiles::vector_bytes, slots = ResidueTiles::slots;
    const int b = static_cast<int>(byte % vector_bytes);
    const int s = static_cast<int>(byte / vector_bytes % slots);
    const int v = static_cast<int>(byte / (slots * vector_bytes) % ResidueTiles::vectors);
    const std::int64_t tile = byte / ResidueTiles::tile_bytes;
    const int i = vector_bytes * v + b;
    const std::int64_t r = tile / tiles_c * ResidueTiles::rows + ResidueTiles::row_in_tile(s, i);
    const std::int64_t c =
        tile % tiles_c * ResidueTiles::columns + ResidueTiles::column_in_tile(s, i);
    long long want = 0;  // rows and columns past the products: residues of zero sums
    if (r < rows && c < cols) {
      const int m = moduli[l];
      want = ref[static_cast<std::int64_t>(l) * rows * cols + r +
                 c * static_cast<std::int64_t>(rows)] %
             m;
      const long long high = m == 256 ? 127 : (m - 1) / 2, low = high - m + 1;
      if (want > high) want -= m;
      if (want < low) want += m;
    }
    local += tiles[at] != want;
  }
  atomicAdd(mismatches, local);
}

}  // namespace

int main(int argc, char** argv) {
  int rows = 16384, cols = 2048, K = 16384;
  int L = 14, rounds = 5, heat_ms = 1500, burst = 1, check = 1, pairs = 1;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> const char* {
        if (i + 1 >= argc) {
          std::fprintf(stderr, "%s needs a value\n", a.c_str());
          std::exit(2);
        }
        return argv[++i];
      };
      // Positive integers as the other tools read them (tool_args.hpp), --heat-ms 0 too (no
      // heating); --check and --pairs are 0 or 1.
      auto count = [&](const char* what, bool zero_allowed = false) {
        const std::string text = next();
        if (zero_allowed && text == "0") return 0;
        const std::int64_t v = perf_tool::positive(text, what);
        if (v > std::numeric_limits<int>::max()) throw std::invalid_argument(what);
        return static_cast<int>(v);
      };
      if (a == "--shape") {
        const std::vector<perf_tool::Shape> shapes = perf_tool::parse_shapes(next());
        if (shapes.size() != 1 ||
            std::max({shapes[0].m, shapes[0].n, shapes[0].k}) > std::numeric_limits<int>::max()) {
          std::fprintf(stderr, "--shape takes one RxCxK of int sizes\n");
          return 2;
        }
        rows = static_cast<int>(shapes[0].m);
        cols = static_cast<int>(shapes[0].n);
        K = static_cast<int>(shapes[0].k);
      } else if (a == "--moduli") {
        L = count("--moduli");
      } else if (a == "--rounds") {
        rounds = count("--rounds");
      } else if (a == "--heat-ms") {
        heat_ms = count("--heat-ms", true);
      } else if (a == "--burst") {
        burst = count("--burst");
      } else if (a == "--check" || a == "--pairs") {
        const std::string v = next();
        if (v != "0" && v != "1") {
          std::fprintf(stderr, "%s takes 0 or 1\n", a.c_str());
          return 2;
        }
        (a == "--check" ? check : pairs) = v == "1";
      } else {
        std::fprintf(stderr, "unknown argument %s\n", a.c_str());
        return 2;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "residue_products_rate: %s\n", e.what());
    return 2;
  }
  if (L < 1 || L > ozaki::max_moduli || K % 16 != 0 || rows < 1 || cols < 1 || rounds < 1 ||
      burst < 1) {
    std::fprintf(stderr, "need 1 <= L <= %d, K a multiple of 16, positive sizes\n",
                 ozaki::max_moduli);
    return 2;
  }
  const std::int64_t a_bytes = static_cast<std::int64_t>(rows) * L * K;
  const std::int64_t b_bytes = static_cast<std::int64_t>(cols) * L * K;
  const std::int64_t per_product = static_cast<std::int64_t>(rows) * cols;
  const ResidueTiles t = ResidueTiles::of(rows, cols);
  std::int8_t *A = nullptr, *B = nullptr, *tiles = nullptr;
  std::int32_t* P = nullptr;
  int* moduli = nullptr;
  CHECK_CUDA(cudaMalloc(&A, a_bytes));
  CHECK_CUDA(cudaMalloc(&B, b_bytes));
  CHECK_CUDA(cudaMalloc(&P, per_product * L * 4));
  CHECK_CUDA(cudaMalloc(&tiles, t.plane_bytes() * L));
  CHECK_CUDA(cudaMalloc(&moduli, sizeof(int) * L));
  CHECK_CUDA(cudaMemcpy(moduli, ozaki::crt_moduli, sizeof(int) * L, cudaMemcpyHostToDevice));
  fill_random<<<1024, 256>>>(A, a_bytes, 1);
  fill_random<<<1024, 256>>>(B, b_bytes, 2);
  CHECK_CUDA(cudaDeviceSynchronize());

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, stream));
  auto cublas_pass = [&] {
    const int alpha = 1, beta = 0;
    for (int l = 0; l < L; ++l) {
      CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, K, &alpha,
                                A + static_cast<std::int64_t>(l) * K, CUDA_R_8I, L * K,
                                B + static_cast<std::int64_t>(l) * K, CUDA_R_8I, L * K, &beta,
                                P + l * per_product, CUDA_R_32I, rows, CUBLAS_COMPUTE_32I,
                                CUBLAS_GEMM_DEFAULT));
    }
  };
  ozaki::Impl::cuda::ResidueProducts problem;
  problem.a = A;
  problem.b = B;
  problem.rows_a = rows;
  problem.rows_b = cols;
  problem.kpad = K;
  problem.moduli = L;
  problem.tiles = tiles;
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  std::string why_not;
  if (!ozaki::Impl::cuda::residue_products_supported(device, problem, why_not)) {
    std::fprintf(stderr, "the residue-product kernel does not run here: %s\n", why_not.c_str());
    return 1;
  }
  auto ours = [&] { ozaki::Impl::cuda::residue_products(problem, pairs == 1, stream); };

  std::printf("pass %d x %d x %d, %d moduli (interleaved operands, ld = %d K)\n", rows, cols, K, L,
              L);
  if (check) {
    unsigned long long* mism = nullptr;
    CHECK_CUDA(cudaMalloc(&mism, sizeof(unsigned long long)));
    cublas_pass();
    CHECK_CUDA(cudaMemsetAsync(tiles, 0x5A, t.plane_bytes() * L, stream));
    ours();
    CHECK_CUDA(cudaMemsetAsync(mism, 0, sizeof(unsigned long long), stream));
    count_mismatches<<<1024, 256, 0, stream>>>(P, tiles, rows, cols, t.tiles_c, t.plane_bytes(),
                                               moduli, L, mism);
    unsigned long long h = 0;
    CHECK_CUDA(cudaMemcpyAsync(&h, mism, sizeof h, cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::printf("check: %llu of %lld residue bytes differ from cublasGemmEx's products' residues\n",
                h, static_cast<long long>(t.plane_bytes() * L));
    CHECK_CUDA(cudaFree(mism));
    if (h != 0) return 1;
  }
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  const auto heat_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(heat_ms);
  while (std::chrono::steady_clock::now() < heat_end) {
    cublas_pass();
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }
  const char* names[2] = {"cublasGemmEx (int32)", "residue tiles (int8)"};
  std::vector<double> times[2];
  for (int round = 0; round < rounds + 1; ++round) {
    for (int c = 0; c < 2; ++c) {
      CHECK_CUDA(cudaEventRecord(e0, stream));
      for (int b = 0; b < burst; ++b) {
        if (c == 0)
          cublas_pass();
        else
          ours();
      }
      CHECK_CUDA(cudaEventRecord(e1, stream));
      CHECK_CUDA(cudaEventSynchronize(e1));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      if (round > 0) times[c].push_back(ms / burst);
    }
  }
  const double ops = 2.0 * rows * cols * static_cast<double>(K) * L;
  for (int c = 0; c < 2; ++c) {
    const double ms = perf_tool::median(times[c]);
    std::printf("%-22s %8.3f ms per pass  %7.1f TOP/s  (rounds:", names[c], ms,
                ops / (ms * 1e-3) / 1e12);
    for (double x : times[c]) std::printf(" %.3f", x);
    std::printf(")\n");
  }
  return 0;
}
