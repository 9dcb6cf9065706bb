// batched_bench: ozaki's batched and grouped calls against cuBLAS's in the same run
// (docs/design.md §13): the plain call (default Options) and cuBLAS's alternate, each timed
// with a fence, and every timed run gets fresh inputs (refilled, untimed), so that no run
// finds its operands in the L2 cache the previous one left them in.  Sampled entries of the
// first and last product give each one's error against a long double reference.
//
//   batched_bench [--cases strided:64x2048,strided:16x4096,grouped:8,masked:8x4096]
//                 [--reps 5] [--phi 0.5] [--csv FILE]
//
// strided:BxN    B products N x N x N: gemm_batched against cublasDgemmStridedBatched;
// grouped:G      G products M x 4096 x 4096, M = 1024, 2048, ..., G 1024: gemm_grouped
//                against cublasDgemmGroupedBatched (one group per shape);
// masked:GxM     G groups of M x M x M with the first M/2 rows valid: gemm_grouped_masked
//                against gemm_batched on all rows (its time as the native column: the issue's
//                "costs <= 55 % of the full batch"), and cuBLAS's full strided batch beside.
// Errors are |C - AB| / (|A||B|) at 128 sampled entries of the first and last product.
// Output: one line per case, and CSV rows case,native_ms,ozaki_ms,speedup,native_error,
// ozaki_error,algorithm,moduli,bound.
#include "paired_runs.hpp"
#include "tool_args.hpp"

#include <ozaki/batched.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Space = Kokkos::Cuda;
using Memory = Space::memory_space;
/// A batch of column-major matrices, one after another (cuBLAS's strided layout), as a rank-3
/// View whose extent 0 is the batch.
using Batch = Kokkos::View<double***, Kokkos::LayoutStride, Memory>;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, Memory>;

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cuBLAS status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

/// Storage for `items` column-major rows x cols matrices and the rank-3 View onto it.
struct Stack {
  Kokkos::View<double*, Memory> storage;
  Batch view;
  std::int64_t items = 0, rows = 0, cols = 0;
  Stack(std::int64_t b, std::int64_t r, std::int64_t c)
      : storage(Kokkos::view_alloc(Kokkos::WithoutInitializing, "batch"), b * r * c),
        view(storage.data(), Kokkos::LayoutStride(b, r * c, r, 1, c, r)),
        items(b),
        rows(r),
        cols(c) {}
  double* item(std::int64_t i) const { return storage.data() + i * rows * cols; }
};

/// Entries (U - 1/2) exp(phi N), a new draw for every seed.
void fill(const Kokkos::View<double*, Memory>& x, double phi, std::uint64_t seed) {
  Kokkos::Random_XorShift64_Pool<Space> pool(seed);
  const std::int64_t n = x.extent(0), chunk = 4096;
  Kokkos::parallel_for(
      "batched_bench::fill", Kokkos::RangePolicy<Space>(0, (n + chunk - 1) / chunk),
      KOKKOS_LAMBDA(const std::int64_t c) {
        auto g = pool.get_state();
        for (std::int64_t i = c * chunk; i < n && i < (c + 1) * chunk; ++i)
          x(i) = (g.drand() - 0.5) * ::exp(phi * g.normal());
        pool.free_state(g);
      });
}

std::vector<double> to_host(const double* data, std::int64_t rows, std::int64_t cols) {
  std::vector<double> h(rows * cols);
  Kokkos::deep_copy(
      Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>(h.data(), rows, cols),
      Kokkos::View<const double**, Kokkos::LayoutLeft, Memory>(data, rows, cols));
  return h;
}

/// max |C - A B| / (|A||B|) over 128 sampled entries of one product (column-major, no
/// transposes; `rows` of C of which the first `valid` were computed).
double sampled_error(const double* A, const double* B, const double* C, std::int64_t rows,
                     std::int64_t n, std::int64_t k, std::int64_t valid) {
  const std::vector<double> a = to_host(A, rows, k), b = to_host(B, k, n), c = to_host(C, rows, n);
  std::mt19937_64 rng(5);
  double worst = 0;
  for (int s = 0; s < 128; ++s) {
    const std::int64_t i = rng() % valid, j = rng() % n;
    long double exact = 0, scale = 0;
    for (std::int64_t l = 0; l < k; ++l) {
      exact += static_cast<long double>(a[i + l * rows]) * b[l + j * k];
      scale += std::fabs(static_cast<long double>(a[i + l * rows]) * b[l + j * k]);
    }
    worst = std::max(worst, static_cast<double>(std::fabs(c[i + j * rows] - exact) / scale));
  }
  return worst;
}

using Result = perf_tool::PairedResult;
using perf_tool::time_pair;

/// The errors of the first and last product after one more run of each.
template <class Native, class Ozaki>
void errors(Result& r, const Native& native, const Ozaki& ozaki, const Stack& A, const Stack& B,
            const Stack& C, std::int64_t valid) {
  const auto worst = [&] {
    double e = 0;
    for (std::int64_t i : {std::int64_t(0), C.items - 1})
      e = std::max(e,
                   sampled_error(A.item(i), B.item(i), C.item(i), C.rows, C.cols, A.cols, valid));
    return e;
  };
  native();
  Kokkos::fence();
  r.native_error = worst();
  ozaki();
  Kokkos::fence();
  r.ozaki_error = worst();
}

Result strided(cublasHandle_t handle, std::int64_t items, std::int64_t n, double phi, int reps) {
  Stack A(items, n, n), B(items, n, n), C(items, n, n);
  std::uint64_t seed = 1;
  const auto refill = [&] {
    fill(A.storage, phi, ++seed);
    fill(B.storage, phi, ++seed);
  };
  const int ni = static_cast<int>(n);
  const auto native = [&] {
    const double one = 1, zero = 0;
    check(cublasDgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, A.item(0),
                                    ni, n * n, B.item(0), ni, n * n, &zero, C.item(0), ni, n * n,
                                    static_cast<int>(items)),
          "cublasDgemmStridedBatched");
  };
  const auto ozaki_call = [&] {
    return ozaki::gemm_batched(Space(), "N", "N", 1.0, A.view, B.view, 0.0, C.view);
  };
  Result r;
  time_pair(reps, r, native, ozaki_call, refill);
  errors(r, native, ozaki_call, A, B, C, n);
  return r;
}

Result grouped(cublasHandle_t handle, std::int64_t groups, double phi, int reps) {
  const std::int64_t n = 4096, k = 4096;
  std::vector<Matrix> A, B, C;
  std::vector<int> m(groups), ns(groups, n), ks(groups, k), sizes(groups, 1);
  std::vector<double> ones(groups, 1.0), zeros(groups, 0.0);
  std::vector<cublasOperation_t> ops(groups, CUBLAS_OP_N);
  std::vector<const double*> pa, pb;
  std::vector<double*> pc;
  for (std::int64_t g = 0; g < groups; ++g) {
    m[g] = static_cast<int>(1024 * (g + 1));
    A.emplace_back("A", m[g], k);
    B.emplace_back("B", k, n);
    C.emplace_back("C", m[g], n);
    pa.push_back(A.back().data());
    pb.push_back(B.back().data());
    pc.push_back(C.back().data());
  }
  // cuBLAS's grouped call takes its matrices as device arrays of device pointers.
  const auto on_device = [&](const void* host, std::size_t bytes) {
    void* p = Kokkos::kokkos_malloc<Memory>("batched_bench::pointers", bytes);
    if (cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
      throw std::runtime_error("cudaMemcpy of the pointer arrays failed");
    }
    return p;
  };
  const std::size_t bytes = groups * sizeof(void*);
  const auto device_a = static_cast<const double* const*>(on_device(pa.data(), bytes));
  const auto device_b = static_cast<const double* const*>(on_device(pb.data(), bytes));
  const auto device_c = static_cast<double* const*>(on_device(pc.data(), bytes));
  std::uint64_t seed = 100;
  const auto refill = [&] {
    for (std::int64_t g = 0; g < groups; ++g) {
      fill(Kokkos::View<double*, Memory>(A[g].data(), A[g].size()), phi, ++seed);
      fill(Kokkos::View<double*, Memory>(B[g].data(), B[g].size()), phi, ++seed);
    }
  };
  const auto native = [&] {
    check(cublasDgemmGroupedBatched(handle, ops.data(), ops.data(), m.data(), ns.data(), ks.data(),
                                    ones.data(), device_a, m.data(), device_b, ks.data(),
                                    zeros.data(), device_c, m.data(), static_cast<int>(groups),
                                    sizes.data()),
          "cublasDgemmGroupedBatched");
  };
  using Problem = ozaki::GemmProblem<Matrix, Matrix, Matrix>;
  std::vector<Problem> problems;
  for (std::int64_t g = 0; g < groups; ++g)
    problems.push_back({"N", "N", 1.0, A[g], B[g], 0.0, C[g]});
  const auto ozaki_call = [&] { return ozaki::gemm_grouped(Space(), problems); };
  Result r;
  time_pair(reps, r, native, ozaki_call, refill);
  const auto worst = [&] {
    double e = 0;
    for (std::int64_t g : {std::int64_t(0), groups - 1})
      e = std::max(e, sampled_error(A[g].data(), B[g].data(), C[g].data(), m[g], n, k, m[g]));
    return e;
  };
  native();
  Kokkos::fence();
  r.native_error = worst();
  ozaki_call();
  Kokkos::fence();
  r.ozaki_error = worst();
  Kokkos::kokkos_free<Memory>(const_cast<double**>(device_a));
  Kokkos::kokkos_free<Memory>(const_cast<double**>(device_b));
  Kokkos::kokkos_free<Memory>(const_cast<double**>(device_c));
  return r;
}

/// Masked groups with half their rows valid against the full batch through ozaki (the
/// "native" columns hold the full batch's time and error).
Result masked(std::int64_t groups, std::int64_t n, double phi, int reps) {
  Stack A(groups, n, n), B(groups, n, n), C(groups, n, n);
  Kokkos::View<int*, Kokkos::HostSpace> masked_m("masked_m", groups);
  Kokkos::deep_copy(masked_m, static_cast<int>(n / 2));
  std::uint64_t seed = 1000;
  const auto refill = [&] {
    fill(A.storage, phi, ++seed);
    fill(B.storage, phi, ++seed);
  };
  const auto full = [&] {
    return ozaki::gemm_batched(Space(), "N", "N", 1.0, A.view, B.view, 0.0, C.view);
  };
  const auto half = [&] {
    return ozaki::gemm_grouped_masked(Space(), "N", "N", 1.0, A.view, B.view, masked_m, 0.0,
                                      C.view);
  };
  Result r;
  time_pair(reps, r, full, half, refill);
  errors(r, full, half, A, B, C, n / 2);
  return r;
}

int run(int argc, char** argv) {
  std::string cases = "strided:64x2048,strided:16x4096,grouped:8,masked:8x4096", csv;
  int reps = 5;
  double phi = 0.5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--cases")
      cases = value;
    else if (key == "--reps")
      reps = static_cast<int>(perf_tool::positive(value, "--reps"));
    else if (key == "--phi")
      phi = std::stod(value);
    else if (key == "--csv")
      csv = value;
    else
      throw std::invalid_argument("unknown argument " + key);
  }
  cublasHandle_t handle;
  check(cublasCreate(&handle), "cublasCreate");
  check(cublasSetStream(handle, Space().cuda_stream()), "cublasSetStream");
  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    out << "case," << perf_tool::paired_columns << '\n';
  }
  for (const std::string& name : perf_tool::split(cases, ',')) {
    const auto kind = perf_tool::split(name, ':');
    if (kind.size() != 2) throw std::invalid_argument("case '" + name + "' (expected kind:size)");
    const auto dims = perf_tool::split(kind[1], 'x');
    Result r;
    if (kind[0] == "strided" && dims.size() == 2) {
      r = strided(handle, perf_tool::positive(dims[0], "batch"), perf_tool::positive(dims[1], "N"),
                  phi, reps);
    } else if (kind[0] == "grouped" && dims.size() == 1) {
      r = grouped(handle, perf_tool::positive(dims[0], "groups"), phi, reps);
    } else if (kind[0] == "masked" && dims.size() == 2) {
      r = masked(perf_tool::positive(dims[0], "groups"), perf_tool::positive(dims[1], "M"), phi,
                 reps);
    } else {
      throw std::invalid_argument("case '" + name +
                                  "' (expected strided:BxN, grouped:G or masked:GxM)");
    }
    std::printf(
        "%-18s native %9.2f ms  ozaki %9.2f ms  %5.2fx  errors %.2e / %.2e  %s L=%d "
        "bound %.2e%s%s\n",
        name.c_str(), r.native_ms, r.ozaki_ms, r.native_ms / r.ozaki_ms, r.native_error,
        r.ozaki_error, ozaki::to_string(r.report.algorithm), r.report.moduli, r.report.error_bound,
        r.report.fallback ? " fallback: " : "", r.report.reason.c_str());
    if (out) {
      out << name;
      perf_tool::write_paired_columns(out, r);
    }
  }
  cublasDestroy(handle);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "batched_bench: %s\n", e.what());
    return 2;
  }
}
