// int8_algos: which of cuBLASLt's INT8 kernels runs scheme II's products fastest on a hot card
// (docs/benchmarks.md: the INT8 products run at the H200's power cap, so a kernel's rate there,
// not its rate on a cool card, is what a call gets).
//
//   int8_algos --shapes 16384x2048x16384[,...] [--algos 16] [--rounds 7] [--burst 14]
//              [--sets 4] [--interleave L] [--heat-ms 2000] [--workspace-mb 64]
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
// kernels (marked c) run on the interleaved operands too.
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

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(int(s)));
}

struct Shape {
  std::int64_t m, n, k;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::int64_t positive(const std::string& s, const char* what) {
  std::size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || v < 1) throw std::invalid_argument(std::string(what) + " '" + s + "'");
  return v;
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char* argv[]) {
  std::vector<Shape> shapes;
  int algos = 16, rounds = 7, burst = 14, sets = 4, interleave = 0;
  double heat_ms = 2000, workspace_mb = 64;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      const std::string value = argv[++i];
      if (arg == "--shapes") {
        for (const auto& item : split(value, ',')) {
          const auto d = split(item, 'x');
          if (d.size() != 3) throw std::invalid_argument("shape '" + item + "' (expected MxNxK)");
          shapes.push_back({positive(d[0], "M"), positive(d[1], "N"), positive(d[2], "K")});
        }
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
    cudaEvent_t begin, end;
    check(cudaEventCreate(&begin), "cudaEventCreate");
    check(cudaEventCreate(&end), "cudaEventCreate");

    for (const Shape& s : shapes) {
      // Operand p: a[p % sets] (distinct copies), or modulus p % interleave of one buffer.
      const std::int64_t ld = interleave > 0 ? interleave * s.k : s.k;
      if (interleave > 0) sets = interleave;
      std::vector<std::int8_t*> a(sets), b(sets);
      for (int i = 0; i < sets; ++i) {
        if (interleave > 0 && i > 0) {
          a[i] = a[0] + i * s.k;
          b[i] = b[0] + i * s.k;
          continue;
        }
        a[i] = random_int8(std::size_t(s.m * ld), 2 * i + 1);
        b[i] = random_int8(std::size_t(s.n * ld), 2 * i + 2);
      }
      void* c = nullptr;
      check(cudaMalloc(&c, std::size_t(s.m * s.n) * 4), "cudaMalloc(C)");

      cublasLtMatmulDesc_t desc;
      check(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32I, CUDA_R_32I), "MatmulDescCreate");
      const cublasOperation_t transpose = CUBLAS_OP_T;
      check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                           sizeof(transpose)),
            "TRANSA");
      cublasLtMatrixLayout_t la, lb, lc;
      check(cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, s.k, s.m, ld), "layout A");
      check(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, s.k, s.n, ld), "layout B");
      check(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32I, s.m, s.n, s.m), "layout C");
      cublasLtMatmulPreference_t pref;
      check(cublasLtMatmulPreferenceCreate(&pref), "PreferenceCreate");
      check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &workspace_bytes, sizeof(workspace_bytes)),
            "MAX_WORKSPACE_BYTES");
      std::vector<cublasLtMatmulHeuristicResult_t> found(algos);
      int returned = 0;
      check(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, algos, found.data(),
                                           &returned),
            "AlgoGetHeuristic");
      found.resize(returned);
      const int own = returned;  // found[own..]: the contiguous layout's kernels
      if (interleave > 0) {
        cublasLtMatrixLayout_t la0, lb0;
        check(cublasLtMatrixLayoutCreate(&la0, CUDA_R_8I, s.k, s.m, s.k), "layout A");
        check(cublasLtMatrixLayoutCreate(&lb0, CUDA_R_8I, s.k, s.n, s.k), "layout B");
        std::vector<cublasLtMatmulHeuristicResult_t> more(algos);
        int extra = 0;
        check(cublasLtMatmulAlgoGetHeuristic(lt, desc, la0, lb0, lc, lc, pref, algos, more.data(),
                                             &extra),
              "AlgoGetHeuristic");
        found.insert(found.end(), more.begin(), more.begin() + extra);
        returned += extra;
        cublasLtMatrixLayoutDestroy(la0);
        cublasLtMatrixLayoutDestroy(lb0);
      }

      const std::int32_t one = 1, zero = 0;
      int product = 0;
      // candidate -1: cublasGemmEx's default; candidate i >= 0: found[i].
      auto run = [&](int candidate) {
        const int set = product++ % sets;
        if (candidate < 0)
          return cublasGemmEx_64(blas, CUBLAS_OP_T, CUBLAS_OP_N, s.m, s.n, s.k, &one, a[set],
                                 CUDA_R_8I, ld, b[set], CUDA_R_8I, ld, &zero, c, CUDA_R_32I, s.m,
                                 CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
        return cublasLtMatmul(lt, desc, &one, a[set], la, b[set], lb, &zero, c, lc, c, lc,
                              &found[candidate].algo, workspace, workspace_bytes, stream);
      };
      // Seconds per product of one burst; +infinity where the kernel refused the layout.
      auto time_burst = [&](int candidate) {
        check(cudaEventRecord(begin, stream), "cudaEventRecord");
        for (int p = 0; p < burst; ++p)
          if (run(candidate) != CUBLAS_STATUS_SUCCESS) {
            check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
            return 1.0 / 0.0;
          }
        check(cudaEventRecord(end, stream), "cudaEventRecord");
        check(cudaEventSynchronize(end), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime");
        return double(ms) / burst;
      };
      // Heat: the default kernel for heat_ms, so that the rounds start at the power cap.
      for (double spent = 0; spent < heat_ms;) spent += time_burst(-1) * burst;

      const int candidates = returned + 1;
      std::vector<std::vector<double>> times(candidates);
      for (int r = 0; r < rounds; ++r)
        for (int i = 0; i < candidates; ++i) {
          const double t = time_burst(i - 1);
          if (r > 0) times[i].push_back(t);
        }
      const double ops = 2.0 * s.m * s.n * s.k;
      std::printf("== %lldx%lldx%lld: %d heuristic results, %d rounds of %d products, %d sets\n",
                  (long long)s.m, (long long)s.n, (long long)s.k, returned, rounds, burst, sets);
      std::printf("%4s %5s %5s %6s %6s %6s %8s %8s %7s %7s %10s %8s %8s\n", "cand", "algo", "tile",
                  "stages", "splitk", "swizz", "cluster", "custom", "waves", "wsMB", "ms/prod",
                  "TOP/s", "min");
      for (int i = 0; i < candidates; ++i) {
        const double t = median(times[i]);
        const double best = *std::min_element(times[i].begin(), times[i].end());
        if (i == 0) {
          std::printf("%4s %5s %5s %6s %6s %6s %8s %8s %7s %7s %10.4f %8.1f %8.1f\n", "gemmEx", "-",
                      "-", "-", "-", "-", "-", "-", "-", "-", t, ops / t / 1e9, ops / best / 1e9);
          continue;
        }
        const cublasLtMatmulAlgo_t& algo = found[i - 1].algo;
        std::printf("%3d%c %5d %5d %6d %6d %6d %8d %8d %7.2f %7.1f %10.4f %8.1f %8.1f\n", i - 1,
                    i - 1 >= own ? 'c' : ' ', config<int>(algo, CUBLASLT_ALGO_CONFIG_ID),
                    int(config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID)),
                    int(config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID)),
                    int(config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)),
                    int(config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)),
                    int(config<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)),
                    int(config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION)),
                    double(found[i - 1].wavesCount), found[i - 1].workspaceSize / 1048576.0, t,
                    ops / t / 1e9, ops / best / 1e9);
      }
      std::fflush(stdout);
      cublasLtMatmulPreferenceDestroy(pref);
      cublasLtMatrixLayoutDestroy(la);
      cublasLtMatrixLayoutDestroy(lb);
      cublasLtMatrixLayoutDestroy(lc);
      cublasLtMatmulDescDestroy(desc);
      for (int i = 0; i < (interleave > 0 ? 1 : sets); ++i) {
        cudaFree(a[i]);
        cudaFree(b[i]);
      }
      cudaFree(c);
    }
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
