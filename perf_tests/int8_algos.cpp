// int8_algos: which INT8 kernel (cublasGemmEx's or one cuBLASLt lists) runs scheme II's products
// fastest on a hot card (docs/benchmarks.md: the INT8 products run at the H200's power cap, so a
// kernel's rate there, not its rate on a cool card, is what a call gets).
//
//   int8_algos --shapes 16384x2048x16384[,...] [--algos 16] [--rounds 7] [--burst 14]
//              [--sets 4] [--interleave L] [--gap-every P --gap-mb MB] [--heat-ms 2000]
//              [--workspace-mb 64]
//
// For each shape M x N x K (C is M x N int32, A and B int8 and K-contiguous: the TN form the
// backend calls), the candidates are cublasGemmEx's default kernel and the first --algos of
// cublasLtMatmulAlgoGetHeuristic.  Operands are random int8 in --sets distinct copies that the
// products of a burst cycle through (each modulus has its own residues: one B panel reused from
// L2 would flatter every kernel).  After --heat-ms of the default kernel, --rounds rounds run
// one burst of --burst products per candidate in turn, so that every candidate sees the same
// power and thermal state; a candidate's time is the median over the rounds after the first.
// --interleave L stores the operands as scheme II does: one buffer per operand whose rows hold
// L moduli's K residues each (leading dimension L K), product p taking modulus p mod L; the
// heuristic is then also asked for the contiguous layout (leading dimension K), and those
// kernels (marked c) run on the interleaved operands too.  The rounds visit every shape's
// candidates in turn, so shapes compare paired too.  --gap-every P --gap-mb MB puts a
// device-to-device copy of MB MiB after every P products of a burst (not timed): the
// memory-bound phases that sit between scheme II's passes, whose lower power may let the
// power-capped products that follow run faster.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tool_args.hpp"

namespace {

using perf_tool::median;
using perf_tool::positive;
using perf_tool::Shape;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(int(s)));
}

/// Device buffer of `bytes` filled with pseudo-random int8 (random data: constant data runs
/// faster on these units than real residues do): one random block of up to 64 MiB, repeated.
std::int8_t* random_int8(std::size_t bytes, std::uint64_t seed) {
  std::vector<std::int8_t> host(std::min<std::size_t>(bytes, std::size_t(64) << 20));
  std::uint64_t h = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : host) {
    h ^= h << 13;
    h ^= h >> 7;
    h ^= h << 17;
    x = static_cast<std::int8_t>(h >> 56);
  }
  void* d = nullptr;
  check(cudaMalloc(&d, bytes), "cudaMalloc");
  for (std::size_t at = 0; at < bytes; at += host.size())
    check(cudaMemcpy(static_cast<char*>(d) + at, host.data(), std::min(host.size(), bytes - at),
                     cudaMemcpyHostToDevice),
          "cudaMemcpy");
  return static_cast<std::int8_t*>(d);
}

template <class T>
T config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T value{};
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof(value), &written) !=
      CUBLAS_STATUS_SUCCESS)
    return T(-1);
  return value;
}

}  // namespace

int main(int argc, char* argv[]) {
  std::vector<Shape> shapes;
  int algos = 16, rounds = 7, burst = 14, sets = 4, interleave = 0, gap_every = 0;
  double heat_ms = 2000, workspace_mb = 64, gap_mb = 0;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      const std::string value = argv[++i];
      if (arg == "--shapes") {
        for (const Shape& s : perf_tool::parse_shapes(value)) shapes.push_back(s);
      } else if (arg == "--algos") {
        algos = int(positive(value, "--algos"));
      } else if (arg == "--rounds") {
        rounds = int(std::max<std::int64_t>(2, positive(value, "--rounds")));
      } else if (arg == "--burst") {
        burst = int(positive(value, "--burst"));
      } else if (arg == "--sets") {
        sets = int(positive(value, "--sets"));
      } else if (arg == "--interleave") {
        interleave = int(positive(value, "--interleave"));
      } else if (arg == "--gap-every") {
        gap_every = int(positive(value, "--gap-every"));
      } else if (arg == "--gap-mb") {
        gap_mb = double(positive(value, "--gap-mb"));
      } else if (arg == "--heat-ms") {
        heat_ms = double(positive(value, "--heat-ms"));
      } else if (arg == "--workspace-mb") {
        workspace_mb = double(positive(value, "--workspace-mb"));
      } else {
        throw std::invalid_argument("unknown option " + arg);
      }
    }
    if (shapes.empty()) throw std::invalid_argument("--shapes needed");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "int8_algos: %s\n", e.what());
    return 2;
  }
  try {
    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    cublasHandle_t blas;
    check(cublasCreate(&blas), "cublasCreate");
    check(cublasSetStream(blas, stream), "cublasSetStream");
    cublasLtHandle_t lt;
    check(cublasLtCreate(&lt), "cublasLtCreate");
    const std::size_t workspace_bytes = std::size_t(workspace_mb * (1 << 20));
    void* workspace = nullptr;
    check(cudaMalloc(&workspace, workspace_bytes), "cudaMalloc(workspace)");
    // Every shape's operands, layouts and candidates first, so that the rounds can visit all
    // shapes' candidates in turn (a comparison across shapes is then paired too).
    struct Case {
      Shape s;
      std::int64_t ld = 0;
      std::vector<std::int8_t*> a, b;
      void* c = nullptr;
      cublasLtMatmulDesc_t desc = nullptr;
      cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
      std::vector<cublasLtMatmulHeuristicResult_t> found;
      int own = 0;  // found[own..]: the contiguous layout's kernels (--interleave)
      std::vector<std::vector<double>> times;
    };
    std::vector<Case> cases;
    const int operand_sets = interleave > 0 ? interleave : sets;
    for (const Shape& s : shapes) {
      Case k;
      k.s = s;
      // Operand p: a[p % sets] (distinct copies), or modulus p % interleave of one buffer.
      k.ld = interleave > 0 ? interleave * s.k : s.k;
      k.a.resize(operand_sets);
      k.b.resize(operand_sets);
      for (int i = 0; i < operand_sets; ++i) {
        if (interleave > 0 && i > 0) {
          k.a[i] = k.a[0] + i * s.k;
          k.b[i] = k.b[0] + i * s.k;
          continue;
        }
        k.a[i] = random_int8(std::size_t(s.m * k.ld), 2 * i + 1);
        k.b[i] = random_int8(std::size_t(s.n * k.ld), 2 * i + 2);
      }
      check(cudaMalloc(&k.c, std::size_t(s.m * s.n) * 4), "cudaMalloc(C)");
      check(cublasLtMatmulDescCreate(&k.desc, CUBLAS_COMPUTE_32I, CUDA_R_32I), "MatmulDescCreate");
      const cublasOperation_t transpose = CUBLAS_OP_T;
      check(cublasLtMatmulDescSetAttribute(k.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                           sizeof(transpose)),
            "TRANSA");
      check(cublasLtMatrixLayoutCreate(&k.la, CUDA_R_8I, s.k, s.m, k.ld), "layout A");
      check(cublasLtMatrixLayoutCreate(&k.lb, CUDA_R_8I, s.k, s.n, k.ld), "layout B");
      check(cublasLtMatrixLayoutCreate(&k.lc, CUDA_R_32I, s.m, s.n, s.m), "layout C");
      cublasLtMatmulPreference_t pref;
      check(cublasLtMatmulPreferenceCreate(&pref), "PreferenceCreate");
      check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &workspace_bytes, sizeof(workspace_bytes)),
            "MAX_WORKSPACE_BYTES");
      auto ask = [&](cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb) {
        std::vector<cublasLtMatmulHeuristicResult_t> found(algos);
        int returned = 0;
        check(cublasLtMatmulAlgoGetHeuristic(lt, k.desc, la, lb, k.lc, k.lc, pref, algos,
                                             found.data(), &returned),
              "AlgoGetHeuristic");
        found.resize(returned);
        return found;
      };
      k.found = ask(k.la, k.lb);
      k.own = int(k.found.size());
      if (interleave > 0) {
        cublasLtMatrixLayout_t la0, lb0;
        check(cublasLtMatrixLayoutCreate(&la0, CUDA_R_8I, s.k, s.m, s.k), "layout A");
        check(cublasLtMatrixLayoutCreate(&lb0, CUDA_R_8I, s.k, s.n, s.k), "layout B");
        const auto more = ask(la0, lb0);
        k.found.insert(k.found.end(), more.begin(), more.end());
        cublasLtMatrixLayoutDestroy(la0);
        cublasLtMatrixLayoutDestroy(lb0);
      }
      cublasLtMatmulPreferenceDestroy(pref);
      k.times.resize(k.found.size() + 1);
      cases.push_back(std::move(k));
    }

    // The memory-bound work between groups of products (--gap-every, --gap-mb): one
    // device-to-device copy, as scheme II's residues and reconstruction sit between its passes.
    void* gap_from = nullptr;
    void* gap_to = nullptr;
    const std::size_t gap_bytes = std::size_t(gap_mb * (1 << 20));
    if (gap_every > 0 && gap_bytes > 0) {
      check(cudaMalloc(&gap_from, gap_bytes), "cudaMalloc(gap)");
      check(cudaMalloc(&gap_to, gap_bytes), "cudaMalloc(gap)");
      check(cudaMemset(gap_from, 0x5a, gap_bytes), "cudaMemset(gap)");
    }
    const int groups = gap_every > 0 ? (burst + gap_every - 1) / gap_every : 1;
    std::vector<cudaEvent_t> marks(2 * groups);
    for (auto& e : marks) check(cudaEventCreate(&e), "cudaEventCreate");

    const std::int32_t one = 1, zero = 0;
    int product = 0;
    // candidate -1: cublasGemmEx's default; candidate i >= 0: found[i].
    auto run = [&](const Case& k, int candidate) {
      const int set = product++ % operand_sets;
      const Shape& s = k.s;
      if (candidate < 0)
        return cublasGemmEx_64(blas, CUBLAS_OP_T, CUBLAS_OP_N, s.m, s.n, s.k, &one, k.a[set],
                               CUDA_R_8I, k.ld, k.b[set], CUDA_R_8I, k.ld, &zero, k.c, CUDA_R_32I,
                               s.m, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
      return cublasLtMatmul(lt, k.desc, &one, k.a[set], k.la, k.b[set], k.lb, &zero, k.c, k.lc, k.c,
                            k.lc, &k.found[candidate].algo, workspace, workspace_bytes, stream);
    };
    // Milliseconds per product of one burst (the gaps not counted); +infinity where the kernel
    // refused the layout.
    auto time_burst = [&](const Case& k, int candidate) {
      for (int g = 0, p = 0; g < groups; ++g) {
        check(cudaEventRecord(marks[2 * g], stream), "cudaEventRecord");
        for (int in_group = 0; p < burst && (gap_every == 0 || in_group < gap_every);
             ++p, ++in_group)
          if (run(k, candidate) != CUBLAS_STATUS_SUCCESS) {
            check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
            return 1.0 / 0.0;
          }
        check(cudaEventRecord(marks[2 * g + 1], stream), "cudaEventRecord");
        if (gap_from != nullptr)
          check(cudaMemcpyAsync(gap_to, gap_from, gap_bytes, cudaMemcpyDeviceToDevice, stream),
                "cudaMemcpyAsync(gap)");
      }
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      double ms = 0;
      for (int g = 0; g < groups; ++g) {
        float part = 0;
        check(cudaEventElapsedTime(&part, marks[2 * g], marks[2 * g + 1]), "cudaEventElapsedTime");
        ms += part;
      }
      return ms / burst;
    };
    // Heat: the first shape's default kernel for heat_ms, so that the rounds start at the cap.
    for (double spent = 0; spent < heat_ms;) spent += time_burst(cases.front(), -1) * burst;
    for (int r = 0; r < rounds; ++r)
      for (Case& k : cases)
        for (std::size_t i = 0; i < k.times.size(); ++i) {
          const double t = time_burst(k, int(i) - 1);
          if (r > 0) k.times[i].push_back(t);
        }

    for (Case& k : cases) {
      const Shape& s = k.s;
      const double ops = 2.0 * s.m * s.n * s.k;
      std::printf("== %lldx%lldx%lld: %d heuristic results, %d rounds of %d products, %d sets",
                  (long long)s.m, (long long)s.n, (long long)s.k, int(k.found.size()), rounds,
                  burst, operand_sets);
      if (gap_from != nullptr)
        std::printf(", a %.0f MiB copy after every %d products", gap_mb, gap_every);
      std::printf("\n%4s %5s %5s %6s %6s %6s %8s %8s %7s %7s %10s %8s %8s\n", "cand", "algo",
                  "tile", "stages", "splitk", "swizz", "cluster", "custom", "waves", "wsMB",
                  "ms/prod", "TOP/s", "min");
      for (std::size_t i = 0; i < k.times.size(); ++i) {
        const double t = median(k.times[i]);
        const double best = *std::min_element(k.times[i].begin(), k.times[i].end());
        if (i == 0) {
          std::printf("%4s %5s %5s %6s %6s %6s %8s %8s %7s %7s %10.4f %8.1f %8.1f\n", "gemmEx", "-",
                      "-", "-", "-", "-", "-", "-", "-", "-", t, ops / t / 1e9, ops / best / 1e9);
          continue;
        }
        const cublasLtMatmulHeuristicResult_t& h = k.found[i - 1];
        const cublasLtMatmulAlgo_t& algo = h.algo;
        std::printf(
            "%3d%c %5d %5d %6d %6d %6d %8d %8d %7.2f %7.1f %10.4f %8.1f %8.1f\n", int(i) - 1,
            int(i) - 1 >= k.own ? 'c' : ' ', config<int>(algo, CUBLASLT_ALGO_CONFIG_ID),
            int(config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID)),
            int(config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID)),
            int(config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)),
            int(config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)),
            int(config<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)),
            int(config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION)),
            double(h.wavesCount), h.workspaceSize / 1048576.0, t, ops / t / 1e9, ops / best / 1e9);
      }
      std::fflush(stdout);
    }
    for (Case& k : cases) {
      cublasLtMatrixLayoutDestroy(k.la);
      cublasLtMatrixLayoutDestroy(k.lb);
      cublasLtMatrixLayoutDestroy(k.lc);
      cublasLtMatmulDescDestroy(k.desc);
      for (int i = 0; i < (interleave > 0 ? 1 : operand_sets); ++i) {
        cudaFree(k.a[i]);
        cudaFree(k.b[i]);
      }
      cudaFree(k.c);
    }
    for (auto& e : marks) cudaEventDestroy(e);
    cudaFree(gap_from);
    cudaFree(gap_to);
    cudaFree(workspace);
    cublasLtDestroy(lt);
    cublasDestroy(blas);
    cudaStreamDestroy(stream);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "int8_algos: %s\n", e.what());
    return 1;
  }
  return 0;
}
