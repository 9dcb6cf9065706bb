// quantized_bench: W8A8 (ozaki::quantized_gemm, int8 operands quantized beforehand, bfloat16
// output) and FP8 with DeepGEMM's block scales (ozaki::fp8_gemm: 1 x 128 activation and
// 128 x 128 weight scales, bfloat16 output) against cuBLAS's BF16 GEMM (cublasGemmEx: BF16
// operands and output, FP32 compute) on the same data in the same run (docs/design.md §14).
// The three alternate, and W8A8 a second time with its fused kernel turned off (the INT8 GEMM's
// INT32 products and the separate epilogue: TestHooks::fused_quantized_off), where the fused
// kernel runs.  DeepGEMM's normal-GEMM shapes by
// default: C = X W^T with X m x k (tokens) and W n x k (weights).  Before every timed run the L2
// cache is flushed (a write of 512 MiB), so that no run finds its operands where the previous one
// left them, as fresh tensors would; each run is timed by CUDA events on the stream.  Each result's
// calc_diff (DeepGEMM's 1 - 2 sum(x y) / sum(x^2 + y^2)) is taken against an FP32 GEMM of the
// unquantized operands.
//
//   quantized_bench [--m 64,128,4096] [--nk 2112x7168,24576x1536,32768x512,7168x16384,
//                    4096x7168,7168x2048] [--reps 5] [--csv FILE]
//                   [--groups 4x8192,8x4096] [--grouped-nk 4096x7168,7168x2048]
//                   [--grouped-csv FILE]
//
// Grouped (DeepGEMM's MoE layouts): G groups of m rows each, every group its own weights (n x
// k), W8A8 and FP8 in the contiguous layout (rows stacked, m_indices) and the masked one (G x m x
// k, every row valid), each against the equivalent batch of G normal calls on the same data,
// alternated; CSV rows groups,m,n,k,kind,grouped_ms,masked_ms,batch_ms,grouped_over_batch,
// masked_over_batch,tflops (kind w8a8 or fp8).
//
// Output: one line per shape, and CSV rows m,n,k,bf16_ms,w8a8_ms,speedup,bf16_tflops,
// w8a8_tflops,w8a8_gbps,bf16_diff,w8a8_diff,quantize_ms,fp8_ms,fp8_speedup,fp8_tflops,fp8_gbps,
// fp8_diff,fp8_quantize_ms,w8a8_fused,w8a8_unfused_ms (quantize_ms: quantize_rows of X,
// fp8_quantize_ms: quantize_per_token of X, the activations' share of a real call, timed apart; fp8
// columns NaN where fp8_gemm threw, its error printed; w8a8_fused 1 where the fused kernel ran, and
// w8a8_unfused_ms then the same call without it, NaN otherwise).
#include "../unit_tests/hooks_from_environment.hpp"
#include "tool_args.hpp"

#include <ozaki/fp8.hpp>
#include <ozaki/quantized.hpp>
#include <ozaki/test_hooks.hpp>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::Cuda;
using Memory = Space::memory_space;
template <class T>
using Rows = Kokkos::View<T**, Kokkos::LayoutRight, Memory>;

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cuBLAS status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

/// Normal entries times `scale`.
void fill(const Rows<float>& x, float scale, std::uint64_t seed) {
  Kokkos::Random_XorShift64_Pool<Space> pool(seed);
  const std::int64_t cols = x.extent(1);
  Kokkos::parallel_for(
      "quantized_bench::fill", Kokkos::RangePolicy<Space>(0, x.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t r) {
        auto g = pool.get_state();
        for (std::int64_t c = 0; c < cols; ++c) x(r, c) = scale * static_cast<float>(g.normal());
        pool.free_state(g);
      });
}

Rows<ozaki::bfloat16> to_bf16(const Rows<float>& x) {
  Rows<ozaki::bfloat16> y(Kokkos::view_alloc(Kokkos::WithoutInitializing, "bf16"), x.extent(0),
                          x.extent(1));
  Kokkos::parallel_for(
      "quantized_bench::to_bf16",
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>({0, 0}, {x.extent(0), x.extent(1)}),
      KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t c) {
        y(r, c) = ozaki::bfloat16::from_float(x(r, c));
      });
  return y;
}

/// calc_diff of a bfloat16 result against the FP32 reference.
double calc_diff(const Rows<ozaki::bfloat16>& c, const Rows<float>& reference) {
  double xy = 0, xx_yy = 0;
  const std::int64_t cols = c.extent(1);
  Kokkos::parallel_reduce(
      "quantized_bench::calc_diff", Kokkos::RangePolicy<Space>(0, c.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t r, double& s_xy, double& s_xx_yy) {
        for (std::int64_t j = 0; j < cols; ++j) {
          const double x = c(r, j).to_float(), y = reference(r, j);
          s_xy += x * y;
          s_xx_yy += x * x + y * y;
        }
      },
      xy, xx_yy);
  return 1 - 2 * xy / xx_yy;
}

/// One shape's run (the file comment).
struct ShapeRun {
  std::int64_t m, n, k;
  double bf16_ms = 0, w8a8_ms = 0, quantize_ms = 0, bf16_diff = 0, w8a8_diff = 0;
  double fp8_ms = NAN, fp8_quantize_ms = NAN, fp8_diff = NAN;
  bool w8a8_fused = false;
  double w8a8_unfused_ms = NAN;
};

struct GroupedRun {
  std::int64_t groups, m, n, k;
  const char* kind;
  double grouped_ms = NAN, masked_ms = NAN, batch_ms = NAN;
};

/// Turns W8A8's fused kernel off (true) or back on.
void fused_kernel_off(bool off) {
  ozaki::Experimental::TestHooks h = ozaki::Experimental::test_hooks();
  h.fused_quantized_off = off;
  ozaki::Experimental::set_test_hooks(h);
}

class Bench {
 public:
  Bench() : flush_("flush", std::size_t(512) << 20) {
    check(cublasCreate(&handle_), "cublasCreate");
    check(cublasSetStream(handle_, Space().cuda_stream()), "cublasSetStream");
    cudaEventCreate(&start_);
    cudaEventCreate(&stop_);
  }
  ~Bench() {
    cublasDestroy(handle_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  ShapeRun run(std::int64_t m, std::int64_t n, std::int64_t k, int reps) {
    ShapeRun s{m, n, k};
    Rows<float> X("X", m, k), W("W", n, k), reference("reference", m, n);
    fill(X, 1.0f, 1000 + m + n + k);
    fill(W, 0.05f, 2000 + m + n + k);
    const Rows<ozaki::bfloat16> Xb = to_bf16(X), Wb = to_bf16(W);
    Rows<std::int8_t> Xq("Xq", m, k), Wq("Wq", n, k);
    Kokkos::View<float*, Memory> sx("sx", m), sw("sw", n);
    ozaki::quantize_rows(Space(), W, Wq, sw);
    Rows<ozaki::float8_e4m3> X8("X8", m, k), W8("W8", n, k);
    Rows<float> sx8("sx8", m, (k + 127) / 128), sw8("sw8", (n + 127) / 128, (k + 127) / 128);
    ozaki::quantize_per_block(Space(), W, W8, sw8);
    Rows<ozaki::bfloat16> c_bf16("c_bf16", m, n), c_w8a8("c_w8a8", m, n), c_fp8("c_fp8", m, n);
    gemm_f32(X, W, reference);
    bool fp8 = true;
    std::vector<double> tb, tq, tz, t8, tz8, tu;
    for (int rep = -1; rep < reps; ++rep) {  // rep -1: the warm-up
      const double b = timed([&] { gemm_bf16(Xb, Wb, c_bf16); });
      const double z = timed([&] { ozaki::quantize_rows(Space(), X, Xq, sx); });
      const double q = timed(
          [&] { s.w8a8_fused = ozaki::quantized_gemm(Space(), Xq, sx, Wq, sw, c_w8a8).fused; });
      if (rep >= 0) tb.push_back(b), tq.push_back(q), tz.push_back(z);
      if (s.w8a8_fused) {
        fused_kernel_off(true);
        const double u = timed([&] { ozaki::quantized_gemm(Space(), Xq, sx, Wq, sw, c_w8a8); });
        fused_kernel_off(false);
        if (rep >= 0) tu.push_back(u);
      }
      if (!fp8) continue;
      try {
        const double z8 = timed([&] { ozaki::quantize_per_token(Space(), X, X8, sx8); });
        const double f = timed([&] { ozaki::fp8_gemm(Space(), X8, sx8, W8, sw8, c_fp8); });
        if (rep >= 0) t8.push_back(f), tz8.push_back(z8);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "fp8_gemm %lld x %lld x %lld: %s\n", (long long)m, (long long)n,
                     (long long)k, e.what());
        fp8 = false;
      }
    }
    s.bf16_ms = median(tb);
    s.w8a8_ms = median(tq);
    s.quantize_ms = median(tz);
    s.bf16_diff = calc_diff(c_bf16, reference);
    s.w8a8_diff = calc_diff(c_w8a8, reference);
    if (!tu.empty()) s.w8a8_unfused_ms = median(tu);
    if (fp8) {
      s.fp8_ms = median(t8);
      s.fp8_quantize_ms = median(tz8);
      s.fp8_diff = calc_diff(c_fp8, reference);
    }
    return s;
  }

  /// G groups of m rows against their own n x k weights: the grouped calls (contiguous and
  /// masked) and the batch of G normal calls, W8A8 then FP8.
  std::vector<GroupedRun> run_grouped(std::int64_t G, std::int64_t m, std::int64_t n,
                                      std::int64_t k, int reps) {
    const std::int64_t rows = G * m;
    Rows<float> X("X", rows, k), W("W", G * n, k);
    fill(X, 1.0f, 3000 + G + m + n + k);
    fill(W, 0.05f, 4000 + G + m + n + k);
    Kokkos::View<int*, Kokkos::HostSpace> m_indices("m_indices", rows), masked_m("masked_m", G);
    for (std::int64_t r = 0; r < rows; ++r) m_indices(r) = static_cast<int>(r / m);
    for (std::int64_t g = 0; g < G; ++g) masked_m(g) = static_cast<int>(m);
    Rows<ozaki::bfloat16> C("C", rows, n);
    const Cube<ozaki::bfloat16> C3(C.data(), G, m, n);
    std::vector<GroupedRun> out;
    {  // W8A8
      Rows<std::int8_t> Xq("Xq", rows, k), Wq("Wq", G * n, k);
      Kokkos::View<float*, Memory> sx("sx", rows), sw("sw", G * n);
      ozaki::quantize_rows(Space(), X, Xq, sx);
      ozaki::quantize_rows(Space(), W, Wq, sw);
      const Cube<std::int8_t> X3(Xq.data(), G, m, k), W3(Wq.data(), G, n, k);
      const Rows<float> sx2(sx.data(), G, m), sw2(sw.data(), G, n);
      out.push_back(time_grouped(
          {G, m, n, k, "w8a8"}, reps,
          [&] { ozaki::quantized_gemm_contiguous(Space(), Xq, sx, W3, sw2, m_indices, C); },
          [&] { ozaki::quantized_gemm_masked(Space(), X3, sx2, W3, sw2, masked_m, C3); },
          [&](std::int64_t g) {
            const auto r = Kokkos::make_pair(g * m, (g + 1) * m);
            ozaki::quantized_gemm(
                Space(), Kokkos::subview(Xq, r, Kokkos::ALL()), Kokkos::subview(sx, r),
                Kokkos::subview(W3, g, Kokkos::ALL(), Kokkos::ALL()),
                Kokkos::subview(sw2, g, Kokkos::ALL()), Kokkos::subview(C, r, Kokkos::ALL()));
          }));
    }
    try {  // FP8: 1 x 128 activation scales, 128 x 128 weight scales (n a multiple of 128)
      const std::int64_t kb = (k + 127) / 128, nb = (n + 127) / 128;
      Rows<ozaki::float8_e4m3> X8("X8", rows, k), W8("W8", G * n, k);
      Rows<float> sx8("sx8", rows, kb), sw8("sw8", G * nb, kb);
      ozaki::quantize_per_token(Space(), X, X8, sx8);
      ozaki::quantize_per_block(Space(), W, W8, sw8);
      const Cube<ozaki::float8_e4m3> X83(X8.data(), G, m, k), W83(W8.data(), G, n, k);
      const Cube<float> sx83(sx8.data(), G, m, kb), sw83(sw8.data(), G, nb, kb);
      out.push_back(time_grouped(
          {G, m, n, k, "fp8"}, reps,
          [&] { ozaki::fp8_gemm_contiguous(Space(), X8, sx8, W83, sw83, m_indices, C); },
          [&] { ozaki::fp8_gemm_masked(Space(), X83, sx83, W83, sw83, masked_m, C3); },
          [&](std::int64_t g) {
            const auto r = Kokkos::make_pair(g * m, (g + 1) * m);
            ozaki::fp8_gemm(Space(), Kokkos::subview(X8, r, Kokkos::ALL()),
                            Kokkos::subview(sx8, r, Kokkos::ALL()),
                            Kokkos::subview(W83, g, Kokkos::ALL(), Kokkos::ALL()),
                            Kokkos::subview(sw83, g, Kokkos::ALL(), Kokkos::ALL()),
                            Kokkos::subview(C, r, Kokkos::ALL()));
          }));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "grouped fp8 %lld x %lld: %s\n", (long long)G, (long long)m, e.what());
    }
    return out;
  }

 private:
  template <class T>
  using Cube = Kokkos::View<T***, Kokkos::LayoutRight, Memory, Kokkos::MemoryUnmanaged>;

  /// The contiguous call, the masked call and the batch of normal calls alternated, each
  /// after an L2 flush; medians.
  template <class Contiguous, class Masked, class One>
  GroupedRun time_grouped(GroupedRun g, int reps, const Contiguous& contiguous,
                          const Masked& masked, const One& one) {
    std::vector<double> tc, tm, tb;
    for (int rep = -1; rep < reps; ++rep) {  // rep -1: the warm-up
      const double c = timed(contiguous), m = timed(masked);
      const double b = timed([&] {
        for (std::int64_t i = 0; i < g.groups; ++i) one(i);
      });
      if (rep >= 0) tc.push_back(c), tm.push_back(m), tb.push_back(b);
    }
    g.grouped_ms = median(tc);
    g.masked_ms = median(tm);
    g.batch_ms = median(tb);
    return g;
  }

  /// C (row-major m x n) = X W^T: column-major C^T = W X^T.
  void gemm_bf16(const Rows<ozaki::bfloat16>& X, const Rows<ozaki::bfloat16>& W,
                 const Rows<ozaki::bfloat16>& C) {
    const float one = 1, zero = 0;
    const int m = X.extent(0), n = W.extent(0), k = X.extent(1);
    check(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, W.data(), CUDA_R_16BF, k,
                       X.data(), CUDA_R_16BF, k, &zero, C.data(), CUDA_R_16BF, n,
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx (BF16)");
  }
  void gemm_f32(const Rows<float>& X, const Rows<float>& W, const Rows<float>& C) {
    const float one = 1, zero = 0;
    const int m = X.extent(0), n = W.extent(0), k = X.extent(1);
    check(cublasSgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, W.data(), k, X.data(), k,
                      &zero, C.data(), n),
          "cublasSgemm");
  }
  template <class F>
  double timed(const F& f) {
    Kokkos::deep_copy(Space(), flush_, static_cast<unsigned char>(1));
    cudaStream_t stream = Space().cuda_stream();
    cudaEventRecord(start_, stream);
    f();
    cudaEventRecord(stop_, stream);
    cudaEventSynchronize(stop_);
    float ms = 0;
    cudaEventElapsedTime(&ms, start_, stop_);
    return ms;
  }
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }

  Kokkos::View<unsigned char*, Memory> flush_;
  cublasHandle_t handle_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

void report(const ShapeRun& s, std::ofstream* csv) {
  const double flops = 2.0 * s.m * s.n * s.k;
  const double bytes = double(s.m) * s.k + double(s.n) * s.k + 2.0 * s.m * s.n + 4.0 * (s.m + s.n);
  std::printf(
      "%5lld x %5lld x %5lld  bf16 %8.3f ms %6.1f TFLOP/s  w8a8 %8.3f ms %6.1f TFLOP/s %7.1f GB/s"
      "  %5.2fx  calc_diff %.1e / %.1e  quantize X %.3f ms\n"
      "                       fp8  %8.3f ms %6.1f TFLOP/s %7.1f GB/s  %5.2fx  calc_diff %.1e"
      "  quantize X %.3f ms\n"
      "                       w8a8 %s (without the fused kernel %.3f ms)\n",
      (long long)s.m, (long long)s.n, (long long)s.k, s.bf16_ms, flops / s.bf16_ms * 1e-9,
      s.w8a8_ms, flops / s.w8a8_ms * 1e-9, bytes / s.w8a8_ms * 1e-6, s.bf16_ms / s.w8a8_ms,
      s.bf16_diff, s.w8a8_diff, s.quantize_ms, s.fp8_ms, flops / s.fp8_ms * 1e-9,
      bytes / s.fp8_ms * 1e-6, s.bf16_ms / s.fp8_ms, s.fp8_diff, s.fp8_quantize_ms,
      s.w8a8_fused ? "fused" : "passes", s.w8a8_unfused_ms);
  if (csv != nullptr) {
    *csv << s.m << ',' << s.n << ',' << s.k << ',' << s.bf16_ms << ',' << s.w8a8_ms << ','
         << s.bf16_ms / s.w8a8_ms << ',' << flops / s.bf16_ms * 1e-9 << ','
         << flops / s.w8a8_ms * 1e-9 << ',' << bytes / s.w8a8_ms * 1e-6 << ',' << s.bf16_diff << ','
         << s.w8a8_diff << ',' << s.quantize_ms << ',' << s.fp8_ms << ',' << s.bf16_ms / s.fp8_ms
         << ',' << flops / s.fp8_ms * 1e-9 << ',' << bytes / s.fp8_ms * 1e-6 << ',' << s.fp8_diff
         << ',' << s.fp8_quantize_ms << ',' << (s.w8a8_fused ? 1 : 0) << ',' << s.w8a8_unfused_ms
         << '\n';
  }
}

void report_grouped(const GroupedRun& g, std::ofstream* csv) {
  const double tflops = 2.0 * g.groups * g.m * g.n * g.k / g.grouped_ms * 1e-9;
  std::printf(
      "grouped %s %lld x %lld rows, n %lld, k %lld: contiguous %8.3f ms (%6.1f TFLOP/s), masked "
      "%8.3f ms, batch of normal calls %8.3f ms: contiguous %.3fx, masked %.3fx of the batch\n",
      g.kind, (long long)g.groups, (long long)g.m, (long long)g.n, (long long)g.k, g.grouped_ms,
      tflops, g.masked_ms, g.batch_ms, g.grouped_ms / g.batch_ms, g.masked_ms / g.batch_ms);
  if (csv != nullptr) {
    *csv << g.groups << ',' << g.m << ',' << g.n << ',' << g.k << ',' << g.kind << ','
         << g.grouped_ms << ',' << g.masked_ms << ',' << g.batch_ms << ','
         << g.grouped_ms / g.batch_ms << ',' << g.masked_ms / g.batch_ms << ',' << tflops << '\n';
  }
}

/// "AxB,CxD" as pairs.
std::vector<std::pair<std::int64_t, std::int64_t>> pairs(const std::string& value,
                                                         const char* option) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const std::string& pair : perf_tool::split(value, ',')) {
    const auto parts = perf_tool::split(pair, 'x');
    if (parts.size() != 2) throw std::invalid_argument(std::string(option) + " takes AxB,AxB,...");
    out.emplace_back(perf_tool::positive(parts[0], option), perf_tool::positive(parts[1], option));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  ozaki_test::set_test_hooks_from_environment();
  Kokkos::initialize(argc, argv);
  int status = 0;
  try {
    std::vector<std::int64_t> ms = {64, 128, 4096};
    std::vector<std::pair<std::int64_t, std::int64_t>> nks = {
        {2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}};
    std::vector<std::pair<std::int64_t, std::int64_t>> groups = {{4, 8192}, {8, 4096}};
    std::vector<std::pair<std::int64_t, std::int64_t>> grouped_nks = {{4096, 7168}, {7168, 2048}};
    int reps = 5;
    std::string csv_path, grouped_csv_path;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string key = argv[i], value = argv[i + 1];
      if (key == "--m") {
        ms.clear();
        for (const std::string& m : perf_tool::split(value, ','))
          ms.push_back(perf_tool::positive(m, "--m"));
      } else if (key == "--nk") {
        nks = pairs(value, "--nk");
      } else if (key == "--groups") {
        groups = value == "none" ? decltype(groups)() : pairs(value, "--groups");
      } else if (key == "--grouped-nk") {
        grouped_nks = pairs(value, "--grouped-nk");
      } else if (key == "--grouped-csv") {
        grouped_csv_path = value;
      } else if (key == "--reps") {
        reps = static_cast<int>(perf_tool::positive(value, "--reps"));
      } else if (key == "--csv") {
        csv_path = value;
      } else {
        throw std::invalid_argument("unknown option " + key);
      }
    }
    std::ofstream csv;
    if (!csv_path.empty()) {
      csv.open(csv_path);
      csv << "m,n,k,bf16_ms,w8a8_ms,speedup,bf16_tflops,w8a8_tflops,w8a8_gbps,bf16_diff,"
             "w8a8_diff,quantize_ms,fp8_ms,fp8_speedup,fp8_tflops,fp8_gbps,fp8_diff,"
             "fp8_quantize_ms,w8a8_fused,w8a8_unfused_ms\n";
    }
    Bench bench;
    for (const auto& nk : nks)
      for (const std::int64_t m : ms)
        report(bench.run(m, nk.first, nk.second, reps), csv_path.empty() ? nullptr : &csv);
    std::ofstream grouped_csv;
    if (!grouped_csv_path.empty()) {
      grouped_csv.open(grouped_csv_path);
      grouped_csv << "groups,m,n,k,kind,grouped_ms,masked_ms,batch_ms,grouped_over_batch,"
                     "masked_over_batch,tflops\n";
    }
    for (const auto& nk : grouped_nks)
      for (const auto& gm : groups)
        for (const GroupedRun& g :
             bench.run_grouped(gm.first, gm.second, nk.first, nk.second, reps))
          report_grouped(g, grouped_csv_path.empty() ? nullptr : &grouped_csv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quantized_bench: %s\n", e.what());
    status = 1;
  }
  Kokkos::finalize();
  return status;
}
