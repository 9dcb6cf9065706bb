#pragma once
/// \file gemm_driver.hpp
/// ozaki::gemm after the public entry has turned the caller's Views into strided ones:
/// checks, early returns, algorithm choice, then Ozaki scheme I:
///
///   split op(A) by rows and op(B) by columns (split.hpp)
///   -> one INT8 GEMM per diagonal i+j (and K chunk) of the selected slice pairs (schedule.hpp)
///   -> FP64 recombination into C, a batch of INT32 products per pass (recombine.hpp).

#include <ozaki/impl/arguments.hpp>
#include <ozaki/impl/backends.hpp>
#include <ozaki/impl/native.hpp>
#include <ozaki/impl/recombine.hpp>
#include <ozaki/impl/schedule.hpp>
#include <ozaki/impl/slice_count.hpp>
#include <ozaki/impl/split.hpp>
#include <ozaki/options.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ozaki {
namespace Impl {

/// Most bytes of INT32 products held at once; more products are recombined in several passes.
constexpr std::int64_t default_product_bytes = std::int64_t(1) << 30;

/// RAII profiling region named after the path taken, e.g. "ozaki::gemm[Int8Slices,cuBLAS]".
class ProfilingRegion {
 public:
  explicit ProfilingRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(const ProfilingRegion&) = delete;
  ProfilingRegion& operator=(const ProfilingRegion&) = delete;
};

template <class ExecSpace>
struct Int8SlicesGemm {
  using V = Views<ExecSpace>;
  using Backend = Int8Gemm<ExecSpace>;

  /// Runs the INT8 products of `schedule` and recombines them into C, P.extent(0) products
  /// per pass.
  static void multiply_and_recombine(const ExecSpace& space, const SliceStorage<ExecSpace>& sa,
                                     const SliceStorage<ExecSpace>& sb,
                                     const ProductSchedule& schedule, double alpha, double beta,
                                     const typename V::Matrix& C,
                                     const typename V::Products& P) {
    const std::int64_t M = C.extent(0);
    const std::int64_t N = C.extent(1);
    const std::int64_t G = static_cast<std::int64_t>(schedule.products.size());
    const std::int64_t batch = P.extent(0);

    typename V::Weights weights(Kokkos::view_alloc("ozaki::weights", Kokkos::WithoutInitializing), G);
    {
      auto host = Kokkos::create_mirror_view(weights);
      for (std::int64_t g = 0; g < G; ++g) {
        host(g) = compat::ldexp(1.0, -bits_per_slice * schedule.products[g].diagonal);
      }
      Kokkos::deep_copy(weights, host);
    }
    for (std::int64_t first = 0; first < G; first += batch) {
      const std::int64_t count = std::min(batch, G - first);
      for (std::int64_t g = 0; g < count; ++g) {
        const Int8Product& prod = schedule.products[first + g];
        Int8GemmProblem problem;
        problem.rows_a = M;
        problem.rows_b = N;
        problem.length = prod.length;
        problem.a = sa.digits.data() + prod.a_column;
        problem.lda = static_cast<std::int64_t>(sa.digits.stride(0));
        problem.b = sb.digits.data() + prod.b_column;
        problem.ldb = static_cast<std::int64_t>(sb.digits.stride(0));
        problem.c = P.data() + g * N * M;
        problem.ldc = M;
        Backend::run(space, problem);
      }
      const auto batch_weights = Kokkos::subview(weights, Kokkos::make_pair(first, first + count));
      typename V::Weights w(batch_weights.data(), count);  // unmanaged alias of the batch
      const CUpdate update = first > 0 ? CUpdate::Accumulate
                             : beta == 0 ? CUpdate::Overwrite
                                         : CUpdate::Scale;
      recombine(space, P, count, w, sa.exponents, sb.exponents, alpha, beta, update, C);
    }
  }
};

/// The body of ozaki::gemm for strided views.  A and B are as stored; transA/transB as given.
template <class ExecSpace>
Report gemm_strided(const ExecSpace& space, const char transA[], const char transB[],
                    double alpha, const typename Views<ExecSpace>::ConstMatrix& A,
                    const typename Views<ExecSpace>::ConstMatrix& B, double beta,
                    const typename Views<ExecSpace>::Matrix& C, const Options& options) {
  using V = Views<ExecSpace>;
  const bool trans_a = parse_trans(transA, "transA");
  const bool trans_b = parse_trans(transB, "transB");
  check_options(options);
  const typename V::ConstMatrix opA = transposed_if(A, trans_a);
  const typename V::ConstMatrix opB = transposed_if(B, trans_b);
  const Shape shape = check_operands(opA, opB, C);

  Report report;
  if (shape.m == 0 || shape.n == 0) {
    report.reason = "empty C: nothing to do";
    return report;
  }
  if (shape.k == 0 || alpha == 0) {
    // BLAS semantics: C = beta C, and A and B are not read.
    ProfilingRegion region("ozaki::gemm[scale]");
    scale_c(space, beta, C);
    report.reason = shape.k == 0 ? "K == 0: C = beta*C" : "alpha == 0: C = beta*C, A and B not read";
    return report;
  }
  if (options.algorithm == Algorithm::Native) {
    ProfilingRegion region("ozaki::gemm[Native]");
    NativeGemm<ExecSpace>::run(space, trans_a, trans_b, alpha, A, B, beta, C);
    report.algorithm = Algorithm::Native;
    report.backend = "KokkosBlas";
    return report;
  }

  using Backend = Int8Gemm<ExecSpace>;
  ProfilingRegion region(std::string("ozaki::gemm[Int8Slices,") + Backend::name() + "]");
  // op(B)^T: both operands become rows along K, split by the same kernels.
  const typename V::ConstMatrix opBt = transposed_if(opB, true);
  typename V::Exponents exponents_a(Kokkos::view_alloc("ozaki::A.exponents", Kokkos::WithoutInitializing), shape.m);
  typename V::Exponents exponents_b(Kokkos::view_alloc("ozaki::B.exponents", Kokkos::WithoutInitializing), shape.n);
  const bool a_nonfinite = row_scale_exponents(space, opA, exponents_a);
  const bool b_nonfinite = row_scale_exponents(space, opBt, exponents_b);
  if (a_nonfinite || b_nonfinite) {
    // Slices cannot carry NaN or Inf; FP64 GEMM gives the IEEE result.
    NativeGemm<ExecSpace>::run(space, trans_a, trans_b, alpha, A, B, beta, C);
    report.algorithm = Algorithm::Native;
    report.backend = "KokkosBlas";
    report.fallback = true;
    report.reason = std::string(a_nonfinite ? "A" : "B") +
                    " contains NaN or Inf: native FP64 GEMM gives the IEEE result";
    return report;
  }
  // INT32 products held at once: all of them if they fit the budget, else several passes.
  typename V::Products P;
  auto ensure_products = [&](std::int64_t count) {
    if (P.extent(0) >= static_cast<std::size_t>(count)) return;
    P = typename V::Products(Kokkos::view_alloc("ozaki::products", Kokkos::WithoutInitializing),
                             count, shape.n, shape.m);
  };
  int S = options.slices;
  if (S == auto_slices) {
    ensure_products(magnitude_chunks(shape.k, options.k_block));
    const SliceCountChoice choice = choose_slice_count(space, opA, opBt, exponents_a, exponents_b,
                                                       options.k_block, P);
    S = fp64_equivalent_slices(choice.ratios, shape.k, options.pairs, options.pair_count);
    report.estimate_int8_gemms = choice.int8_gemms;
    report.modeled_error =
        modeled_error(choice.ratios, shape.k, S, options.pairs, options.pair_count);
    if (!(choice.ratios.inverse < HUGE_VAL)) {
      report.reason = "auto slices: some (|A||B|)_mn lies below the resolution of the int8 "
                      "estimate, so S = " + std::to_string(S) + " was taken to be safe";
    }
  }
  check_resolved_options(options, S);

  const SliceStorage<ExecSpace> sa =
      make_slice_storage<ExecSpace>(exponents_a, shape.k, S, false, "ozaki::A");
  const SliceStorage<ExecSpace> sb =
      make_slice_storage<ExecSpace>(exponents_b, shape.k, S, true, "ozaki::B");
  split_rows(space, opA, sa);
  split_rows(space, opBt, sb);

  const ProductSchedule schedule =
      make_schedule(S, options.pairs, options.pair_count, shape.k, options.k_block);
  const std::int64_t G = static_cast<std::int64_t>(schedule.products.size());
  const std::int64_t per_product = std::max<std::int64_t>(4 * shape.m * shape.n, 1);
  ensure_products(std::max<std::int64_t>(1, std::min(G, default_product_bytes / per_product)));
  Int8SlicesGemm<ExecSpace>::multiply_and_recombine(space, sa, sb, schedule, alpha, beta, C, P);

  report.algorithm = Algorithm::Int8Slices;
  report.backend = Backend::name();
  report.slices = S;
  report.slice_pairs = schedule.slice_pairs;
  report.int8_gemms = static_cast<int>(schedule.products.size());
  report.k_chunk = schedule.longest;
  return report;
}

}  // namespace Impl
}  // namespace ozaki
