// ozaki::gemm_batched, gemm_grouped, gemm_grouped_masked and gemm_grouped_contiguous on the
// test space (batched.hpp, docs/design.md §13): every product bitwise the ozaki::gemm of that
// product with the same options (so the serial oracle's and every backend's bits, as the gemm
// tests show), within the Report's componentwise bound of a long double reference, on data
// whose exponent spread differs from product to product; operands shared across the batch;
// rows that masks and indices leave out untouched to the bit; empty batches, groups and K;
// bad shapes, indices, options and overlaps throw before any C is written.

#include "captured_common.hpp"
#include "common.hpp"

#include <ozaki/batched.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace ozaki_test;

using ozaki::Algorithm;
using ozaki::Options;
using KC = Kokkos::complex<double>;
using KF = Kokkos::complex<float>;

/// A rank-3 View on the test space with random values: item i with exponent spread
/// phi (1 + i / 2), so that every product of a batch needs its own count.
template <class T, class Layout>
Kokkos::View<T***, Layout, MemSpace> random_batch(std::int64_t items, std::int64_t rows,
                                                  std::int64_t cols, double phi, Random& rng) {
  Kokkos::View<T***, Layout, MemSpace> x("batch", items, rows, cols);
  auto h = Kokkos::create_mirror_view(x);
  for (std::int64_t i = 0; i < items; ++i)
    for (std::int64_t c = 0; c < cols; ++c)
      for (std::int64_t r = 0; r < rows; ++r)
        h(i, r, c) = spread_value<T>(rng, phi * (1 + 0.5 * i));
  Kokkos::deep_copy(x, h);
  return x;
}

template <class T, class Layout>
Kokkos::View<T**, Layout, MemSpace> random_matrix(std::int64_t rows, std::int64_t cols, double phi,
                                                  Random& rng) {
  Kokkos::View<T**, Layout, MemSpace> x("matrix", rows, cols);
  auto h = Kokkos::create_mirror_view(x);
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t r = 0; r < rows; ++r) h(r, c) = spread_value<T>(rng, phi);
  Kokkos::deep_copy(x, h);
  return x;
}

/// A batch of uniform entries in [-1/2, 1/2) times 2^e, e = 0, 1, 2 by item.
Kokkos::View<double***, Kokkos::LayoutLeft, MemSpace> mild_batch(std::int64_t items,
                                                                 std::int64_t rows,
                                                                 std::int64_t cols, Random& rng) {
  Kokkos::View<double***, Kokkos::LayoutLeft, MemSpace> x("mild", items, rows, cols);
  auto h = Kokkos::create_mirror_view(x);
  for (std::int64_t i = 0; i < items; ++i)
    for (std::int64_t c = 0; c < cols; ++c)
      for (std::int64_t r = 0; r < rows; ++r) h(i, r, c) = std::ldexp(rng.uniform() - 0.5, i % 3);
  Kokkos::deep_copy(x, h);
  return x;
}

/// A copy of a View (same layout and extents) on the test space.
template <class View>
View copy_of(const View& x) {
  View y(Kokkos::view_alloc(std::string(x.label()) + "_copy"), x.layout());
  Kokkos::deep_copy(y, x);
  return y;
}

/// Whether two Views hold the same bits.
template <class V1, class V2>
bool same_bits(const V1& x, const V2& y) {
  const auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  return hx.span() == hy.span() &&
         std::memcmp(hx.data(), hy.data(), hx.span() * sizeof(typename V1::value_type)) == 0;
}

template <class View>
auto item(const View& x, std::int64_t i) {
  return Kokkos::subview(x, i, Kokkos::ALL(), Kokkos::ALL());
}

Options crt_auto() {
  Options o;
  o.algorithm = Algorithm::Int8Crt;
  return o;
}
/// Scheme I with a given slice count (an automatic one hands data with this spread to native
/// GEMM, where the componentwise promise needs more slices than it allows).
Options slices_fixed() {
  Options o;
  o.algorithm = Algorithm::Int8Slices;
  o.slices = 8;
  return o;
}
/// Int8Crt with a given count and the fast rule: what a batch planned as one gives each of its
/// products (impl/batched/crt_batch.hpp).
Options counted_fast(int moduli) {
  Options o = crt_auto();
  o.moduli = moduli;
  o.crt_scaling = ozaki::CrtScaling::Fast;
  return o;
}
Options crt_rule(ozaki::CrtScaling scaling) {
  Options o = crt_auto();
  o.crt_scaling = scaling;
  return o;
}

/// The largest |C_i - A_i B_i|_mn / (|A_i||B_i|)_mn of a batch (no transposes, beta = 0)
/// against long double, over the first valid(i) rows of each item (A of batch extent 1: one A
/// for all), and whether every other row of C is still zero (untouched).
struct BatchErrors {
  double worst = 0;
  bool others_untouched = true;
};
template <class AView, class BView, class CView, class Valid>
BatchErrors batch_errors(const AView& A, const BView& B, const CView& C, const Valid& valid) {
  const auto hA = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  const auto hB = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
  const auto hC = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
  BatchErrors e;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(C.extent(0)); ++i) {
    const std::int64_t a = A.extent(0) == 1 ? 0 : i;
    for (std::int64_t n = 0; n < static_cast<std::int64_t>(C.extent(2)); ++n) {
      for (std::int64_t m = 0; m < static_cast<std::int64_t>(C.extent(1)); ++m) {
        if (m >= valid(i)) {
          e.others_untouched = e.others_untouched && hC(i, m, n) == 0.0;
          continue;
        }
        long double exact = 0, scale = 0;
        for (std::int64_t k = 0; k < static_cast<std::int64_t>(A.extent(2)); ++k) {
          exact += static_cast<long double>(hA(a, m, k)) * hB(i, k, n);
          scale += std::fabs(static_cast<long double>(hA(a, m, k)) * hB(i, k, n));
        }
        e.worst = std::max(e.worst, static_cast<double>(std::fabs(hC(i, m, n) - exact) / scale));
      }
    }
  }
  return e;
}

/// Every row of every item.
constexpr auto all_rows = [](std::int64_t) { return std::numeric_limits<std::int64_t>::max(); };

/// gemm_batched against one ozaki::gemm per item, with the same options: the same bits.
template <class T, class CT, class Layout>
void batched_matches_one_gemm_per_item(const char* ta, const char* tb, const Options& options,
                                       double phi = 0.5) {
  Random rng(41);
  const std::int64_t items = 4, M = 37, N = 29, K = 70;
  const bool at = ta[0] != 'N', bt = tb[0] != 'N';
  const auto A = random_batch<T, Layout>(items, at ? K : M, at ? M : K, phi, rng);
  const auto B = random_batch<T, Layout>(items, bt ? N : K, bt ? K : N, phi, rng);
  const auto C = random_batch<CT, Layout>(items, M, N, phi, rng);
  const auto expected = copy_of(C);
  const CT alpha = static_cast<CT>(0.75), beta = static_cast<CT>(-0.5);
  const ozaki::Report r = ozaki::gemm_batched(TestSpace(), ta, tb, alpha, A, B, beta, C, options);
  // Real products under an automatic moduli count are planned as one batch (every item's data
  // here is within the fast rule's reach): each item is then the Int8Crt call with the
  // batch's count and the fast rule.
  const bool one_plan = std::is_same<T, double>::value && options.algorithm == Algorithm::Int8Crt;
  ASSERT_EQ(r.batched_products, one_plan ? items : 0) << r.reason;
  const Options each = one_plan ? counted_fast(r.moduli) : options;
  ozaki::Report largest;
  for (std::int64_t i = 0; i < items; ++i) {
    largest = ozaki::gemm(TestSpace(), ta, tb, alpha, item(A, i), item(B, i), beta,
                          item(expected, i), each);
  }
  EXPECT_TRUE(same_bits(C, expected)) << ta << tb;
  EXPECT_EQ(r.algorithm, largest.algorithm);
  EXPECT_FALSE(r.fallback) << r.reason;
  EXPECT_GT(r.int8_gemms, largest.int8_gemms);  // summed over the items
}

TEST(GemmBatched, EveryItemBitwiseItsOwnGemmDouble) {
  for (const char* ta : {"N", "T"})
    for (const char* tb : {"N", "T"}) {
      // Spreads the fast rule certifies at this K (wider ones run as their own calls: below).
      batched_matches_one_gemm_per_item<double, double, Kokkos::LayoutLeft>(ta, tb, crt_auto(),
                                                                            0.1);
      batched_matches_one_gemm_per_item<double, double, Kokkos::LayoutRight>(ta, tb,
                                                                             slices_fixed());
    }
}

TEST(GemmBatched, EveryItemBitwiseItsOwnGemmComplexAndFloat) {
  batched_matches_one_gemm_per_item<KC, KC, Kokkos::LayoutLeft>("C", "N", crt_auto());
  batched_matches_one_gemm_per_item<KC, KC, Kokkos::LayoutRight>("N", "T", crt_auto());
  batched_matches_one_gemm_per_item<float, float, Kokkos::LayoutLeft>("N", "N", crt_auto());
  batched_matches_one_gemm_per_item<KF, KF, Kokkos::LayoutRight>("T", "C", crt_auto());
}

/// |C - A B| <= error_bound (|A||B|) entry by entry, against a long double reference, for
/// items whose exponent spreads differ (the Report's bound is the largest of the items').
TEST(GemmBatched, WithinTheReportsComponentwiseBound) {
  Random rng(7);
  const std::int64_t items = 3, M = 24, N = 33, K = 300;
  const auto A = random_batch<double, Kokkos::LayoutLeft>(items, M, K, 1.0, rng);
  const auto B = random_batch<double, Kokkos::LayoutLeft>(items, K, N, 1.0, rng);
  Kokkos::View<double***, Kokkos::LayoutLeft, MemSpace> C("C", items, M, N);
  for (const Options& options :
       {crt_auto(), crt_rule(ozaki::CrtScaling::Fast), crt_rule(ozaki::CrtScaling::Accurate)}) {
    const ozaki::Report r = ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, A, B, 0.0, C, options);
    ASSERT_EQ(r.algorithm, Algorithm::Int8Crt) << r.reason;
    ASSERT_GT(r.error_bound, 0.0);
    EXPECT_LE(r.error_bound, ozaki::Impl::gamma_bound(K + 2, ozaki::Impl::fp64_unit_roundoff));
    const double worst = batch_errors(A, B, C, all_rows).worst;
    EXPECT_LE(worst, r.error_bound);
    EXPECT_GT(worst, 0.0);  // the check saw rounding, not integers
  }
}

/// One A for every item, and B and C of items side by side (each row of the K x (items N) and
/// M x (items N) row-major storage holds every item's row): the batch is one GEMM of all
/// columns, bit for bit.
TEST(GemmBatched, OneAForEveryItemIsOneGemmOfAllColumns) {
  Random rng(33);
  const std::int64_t items = 4, M = 24, N = 16, K = 48;
  const auto A = random_batch<double, Kokkos::LayoutRight>(1, M, K, 0.5, rng);
  const auto Bwide = random_matrix<double, Kokkos::LayoutRight>(K, items * N, 0.5, rng);
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> Cwide("C", M, items * N);
  const auto expected = copy_of(Cwide);
  using Batch = Kokkos::View<double***, Kokkos::LayoutStride, MemSpace>;
  const Batch B(Bwide.data(), Kokkos::LayoutStride(items, N, K, items * N, N, 1));
  const Batch C(Cwide.data(), Kokkos::LayoutStride(items, N, M, items * N, N, 1));
  const ozaki::Report r = ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, A, B, 0.0, C, crt_auto());
  const ozaki::Report one =
      ozaki::gemm(TestSpace(), "N", "N", 1.0, item(A, 0), Bwide, 0.0, expected, crt_auto());
  EXPECT_TRUE(same_bits(Cwide, expected));
  EXPECT_EQ(r.int8_gemms, one.int8_gemms);
}

/// A batch that runs native GEMM (asked for, or Auto's choice from a small shape; on CUDA one
/// strided-batched cuBLAS call): every entry within native GEMM's componentwise bound, for a
/// column-major and a row-major batch, with an A shared by every item.
TEST(GemmBatched, NativeBatchesWithinNativesBound) {
  Random rng(29);
  const std::int64_t items = 5, M = 24, N = 20, K = 44;
  for (const Algorithm algorithm : {Algorithm::Native, Algorithm::Auto}) {
    Options options;
    options.algorithm = algorithm;
    const auto A = random_batch<double, Kokkos::LayoutRight>(1, M, K, 1.0, rng);
    const auto B = random_batch<double, Kokkos::LayoutRight>(items, K, N, 1.0, rng);
    Kokkos::View<double***, Kokkos::LayoutRight, MemSpace> C("C", items, M, N);
    const ozaki::Report r = ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, A, B, 0.0, C, options);
    if (algorithm == Algorithm::Native) EXPECT_EQ(r.algorithm, Algorithm::Native);
    ASSERT_GT(r.error_bound, 0.0);
    EXPECT_LE(batch_errors(A, B, C, all_rows).worst, r.error_bound);
  }
}

/// One B for every item, A and C of one layout: the batch is one GEMM of all items' rows (for
/// LayoutRight item-major, for LayoutLeft item-minor: the same memory as a rank-2 View of that
/// layout), bit for bit.
template <class Layout>
void one_b_is_one_gemm_of_all_rows(Random& rng) {
  const std::int64_t items = 3, M = 20, N = 18, K = 40;
  const auto A = random_batch<double, Layout>(items, M, K, 0.5, rng);
  const auto B = random_batch<double, Layout>(1, K, N, 0.5, rng);
  Kokkos::View<double***, Layout, MemSpace> C("C", items, M, N);
  const auto expected = copy_of(C);
  const ozaki::Report r = ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, A, B, 0.0, C, crt_auto());
  using Rows = Kokkos::View<double**, Layout, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const ozaki::Report one =
      ozaki::gemm(TestSpace(), "N", "N", 1.0, Rows(A.data(), items * M, K), item(B, 0), 0.0,
                  Rows(expected.data(), items * M, N), crt_auto());
  EXPECT_TRUE(same_bits(C, expected));
  EXPECT_EQ(r.int8_gemms, one.int8_gemms);
}

TEST(GemmBatched, OneBForEveryItemAndEmptyBatches) {
  Random rng(3);
  one_b_is_one_gemm_of_all_rows<Kokkos::LayoutRight>(rng);
  one_b_is_one_gemm_of_all_rows<Kokkos::LayoutLeft>(rng);
  const std::int64_t items = 3, M = 20, N = 18, K = 40;
  // A and C in layouts whose rows merge in different orders: one product per item.
  const auto A = random_batch<double, Kokkos::LayoutLeft>(items, M, K, 0.5, rng);
  const auto B = random_batch<double, Kokkos::LayoutRight>(1, K, N, 0.5, rng);
  Kokkos::View<double***, Kokkos::LayoutRight, MemSpace> C("C", items, M, N);
  const auto expected = copy_of(C);
  ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, A, B, 0.0, C, crt_auto());
  for (std::int64_t i = 0; i < items; ++i)
    ozaki::gemm(TestSpace(), "N", "N", 1.0, item(A, i), item(B, 0), 0.0, item(expected, i),
                crt_auto());
  EXPECT_TRUE(same_bits(C, expected));

  // No items: nothing computed.
  Kokkos::View<double***, Kokkos::LayoutRight, MemSpace> none_a("A", 0, M, K), none_b("B", 0, K, N),
      none_c("C", 0, M, N);
  const ozaki::Report r =
      ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, none_a, none_b, 0.0, none_c);
  EXPECT_EQ(r.algorithm, Algorithm::None);
  EXPECT_FALSE(r.reason.empty());

  // K = 0: C = beta C, as gemm.
  Kokkos::View<double***, Kokkos::LayoutRight, MemSpace> flat_a("A", items, M, 0),
      flat_b("B", items, 0, N);
  const auto scaled = copy_of(C);
  ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, flat_a, flat_b, 0.5, C);
  for (std::int64_t i = 0; i < items; ++i)
    ozaki::gemm(TestSpace(), "N", "N", 1.0, item(flat_a, i), item(flat_b, i), 0.5, item(scaled, i));
  EXPECT_TRUE(same_bits(C, scaled));
}

/// reserve_batched makes a Workspace serve a batched call without growing, for every scalar
/// (the complex and FP32 calls use more than one buffer); the default-space overload gives the
/// same bits.
template <class T>
void reserved_batch_allocates_nothing(const char* ta) {
  Random rng(5);
  const std::int64_t items = 3, M = 40, N = 36, K = 50;
  const bool at = ta[0] != 'N';
  const auto A = random_batch<T, Kokkos::LayoutLeft>(items, at ? K : M, at ? M : K, 0.5, rng);
  const auto B = random_batch<T, Kokkos::LayoutLeft>(items, K, N, 0.5, rng);
  Kokkos::View<T***, Kokkos::LayoutLeft, MemSpace> C("C", items, M, N);
  const auto expected = copy_of(C);
  ozaki::Workspace<TestSpace> ws(TestSpace{});
  ozaki::reserve_batched(ws, ta, A, B, C, crt_auto());
  const std::int64_t before = ws.allocations();
  const ozaki::Report r =
      ozaki::gemm_batched(TestSpace(), ta, "N", T(1), A, B, T(0), C, crt_auto(), ws);
  EXPECT_EQ(ws.allocations(), before) << ta;
  EXPECT_FALSE(r.scratch_allocated);
  ozaki::gemm_batched(ta, "N", T(1), A, B, T(0), expected, crt_auto());
  EXPECT_TRUE(same_bits(C, expected));
}

TEST(GemmBatched, AReservedWorkspaceServesTheBatch) {
  reserved_batch_allocates_nothing<double>("N");
  reserved_batch_allocates_nothing<double>("T");
  reserved_batch_allocates_nothing<KC>("C");
  reserved_batch_allocates_nothing<float>("N");
  reserved_batch_allocates_nothing<KF>("T");
}

/// reserve_grouped: problems of different shapes, the largest not first.
TEST(GemmGrouped, AReservedWorkspaceServesTheCall) {
  Random rng(9);
  using Out = Kokkos::View<double**, Kokkos::LayoutLeft, MemSpace>;
  std::vector<ozaki::GemmProblem<Out, Out, Out>> problems;
  for (const std::int64_t m : {16, 80, 40}) {
    problems.push_back({"T", "N", 1.0,
                        random_matrix<double, Kokkos::LayoutLeft>(2 * m, m, 0.5, rng),
                        random_matrix<double, Kokkos::LayoutLeft>(2 * m, m + 3, 0.5, rng), 0.0,
                        Out("C", m, m + 3)});
  }
  ozaki::Workspace<TestSpace> ws(TestSpace{});
  ozaki::reserve_grouped(ws, problems, crt_auto());
  const std::int64_t before = ws.allocations();
  const ozaki::Report r = ozaki::gemm_grouped(TestSpace(), problems, crt_auto(), ws);
  EXPECT_EQ(ws.allocations(), before);
  EXPECT_FALSE(r.scratch_allocated);
}

TEST(GemmGrouped, EveryProblemBitwiseItsOwnGemm) {
  Random rng(11);
  using Const = Kokkos::View<const double**, Kokkos::LayoutLeft, MemSpace>;
  using Out = Kokkos::View<double**, Kokkos::LayoutLeft, MemSpace>;
  struct Shape {
    const char *ta, *tb;
    std::int64_t m, n, k;
  };
  const std::vector<Shape> shapes = {{"N", "N", 50, 20, 33}, {"T", "N", 7, 64, 120},
                                     {"N", "T", 1, 1, 500},  {"T", "T", 64, 3, 16},
                                     {"N", "N", 0, 5, 5},    {"N", "N", 9, 9, 0}};
  std::vector<ozaki::GemmProblem<Const, Const, Out>> problems;
  std::vector<Out> expected;
  for (std::size_t g = 0; g < shapes.size(); ++g) {
    const Shape& s = shapes[g];
    const bool at = s.ta[0] != 'N', bt = s.tb[0] != 'N';
    const Out A =
        random_matrix<double, Kokkos::LayoutLeft>(at ? s.k : s.m, at ? s.m : s.k, 0.5 + g, rng);
    const Out B =
        random_matrix<double, Kokkos::LayoutLeft>(bt ? s.n : s.k, bt ? s.k : s.n, 0.5, rng);
    const Out C = random_matrix<double, Kokkos::LayoutLeft>(s.m, s.n, 0.5, rng);
    const double alpha = 1.0 + static_cast<double>(g), beta = g % 2 ? 0.0 : -1.0;
    problems.push_back({s.ta, s.tb, alpha, A, B, beta, C});
    expected.push_back(copy_of(C));
    ozaki::gemm(TestSpace(), s.ta, s.tb, alpha, Const(A), Const(B), beta, expected.back(),
                crt_auto());
  }
  const ozaki::Report r = ozaki::gemm_grouped(TestSpace(), problems, crt_auto());
  for (std::size_t g = 0; g < shapes.size(); ++g)
    EXPECT_TRUE(same_bits(problems[g].C, expected[g])) << "problem " << g;
  EXPECT_EQ(r.algorithm, Algorithm::Int8Crt);
  EXPECT_GT(r.error_bound, 0.0);
}

/// Masked groups: the first masked_m(g) rows of C(g,:,:) bitwise the gemm of those rows; the
/// others untouched to the bit (NaN sentinels stay).
template <class IndexMemory>
void masked_rows(const char* ta) {
  Random rng(13);
  const std::int64_t groups = 4, max_m = 24, N = 20, K = 48;
  const bool at = ta[0] != 'N';
  const auto A =
      random_batch<double, Kokkos::LayoutRight>(groups, at ? K : max_m, at ? max_m : K, 0.5, rng);
  const auto B = random_batch<double, Kokkos::LayoutRight>(groups, N, K, 0.5, rng);
  Kokkos::View<double***, Kokkos::LayoutRight, MemSpace> C("C", groups, max_m, N);
  Kokkos::deep_copy(C, std::numeric_limits<double>::quiet_NaN());
  const auto expected = copy_of(C);
  const std::vector<int> counts = {0, 5, max_m, 17};
  Kokkos::View<int*, IndexMemory> masked_m("masked_m", groups);
  auto h = Kokkos::create_mirror_view(masked_m);
  for (std::int64_t g = 0; g < groups; ++g) h(g) = counts[g];
  Kokkos::deep_copy(masked_m, h);
  ozaki::gemm_grouped_masked(TestSpace(), ta, "T", 1.0, A, B, masked_m, 0.0, C, crt_auto());
  for (std::int64_t g = 0; g < groups; ++g) {
    const auto rows = std::make_pair<std::int64_t, std::int64_t>(0, counts[g]);
    const auto a = at ? Kokkos::subview(A, g, Kokkos::ALL(), rows)
                      : Kokkos::subview(A, g, rows, Kokkos::ALL());
    ozaki::gemm(TestSpace(), ta, "T", 1.0, a, item(B, g), 0.0,
                Kokkos::subview(expected, g, rows, Kokkos::ALL()), crt_auto());
  }
  EXPECT_TRUE(same_bits(C, expected)) << ta;
}

TEST(GemmGroupedMasked, ValidRowsBitwiseTheirGemmOthersUntouched) {
  masked_rows<Kokkos::HostSpace>("N");
  masked_rows<MemSpace>("T");
}

/// Contiguous groups: runs of rows with one index multiply that group's B; rows with -1 are
/// untouched; a group may come back in a later run.
TEST(GemmGroupedContiguous, RunsBitwiseTheirGemmUnassignedRowsUntouched) {
  Random rng(17);
  const std::int64_t groups = 3, N = 24, K = 40;
  const std::vector<int> index = {0, 0, 0, 0, 0, -1, -1, 2, 2, 2, 2, 2, 2, 2, 1, 0, 0, 0, -1, 1};
  const std::int64_t rows = index.size();
  for (const char* tb : {"N", "T"}) {
    const bool bt = tb[0] != 'N';
    const auto A = random_matrix<double, Kokkos::LayoutLeft>(rows, K, 1.0, rng);
    const auto B =
        random_batch<double, Kokkos::LayoutLeft>(groups, bt ? N : K, bt ? K : N, 0.5, rng);
    Kokkos::View<double**, Kokkos::LayoutLeft, MemSpace> C("C", rows, N);
    Kokkos::deep_copy(C, std::numeric_limits<double>::quiet_NaN());
    const auto expected = copy_of(C);
    Kokkos::View<int*, MemSpace> m_indices("m_indices", rows);
    auto h = Kokkos::create_mirror_view(m_indices);
    for (std::int64_t r = 0; r < rows; ++r) h(r) = index[r];
    Kokkos::deep_copy(m_indices, h);
    const ozaki::Report report = ozaki::gemm_grouped_contiguous(TestSpace(), "N", tb, 1.0, A, B,
                                                                m_indices, 0.0, C, crt_auto());
    for (std::int64_t r0 = 0; r0 < rows;) {
      std::int64_t r1 = r0 + 1;
      while (r1 < rows && index[r1] == index[r0]) ++r1;
      if (index[r0] >= 0) {
        const auto run = std::make_pair(r0, r1);
        ozaki::gemm(TestSpace(), "N", tb, 1.0, Kokkos::subview(A, run, Kokkos::ALL()),
                    item(B, index[r0]), 0.0, Kokkos::subview(expected, run, Kokkos::ALL()),
                    crt_auto());
      }
      r0 = r1;
    }
    EXPECT_TRUE(same_bits(C, expected)) << tb;
    EXPECT_EQ(report.algorithm, Algorithm::Int8Crt);
  }
}

/// Every bad call throws InvalidArgument and leaves every C as it was.
TEST(GemmBatched, BadCallsThrowAndLeaveEveryCUntouched) {
  Random rng(19);
  const std::int64_t items = 3, M = 16, N = 16, K = 16;
  const auto A = random_batch<double, Kokkos::LayoutLeft>(items, M, K, 0.5, rng);
  const auto B = random_batch<double, Kokkos::LayoutLeft>(items, K, N, 0.5, rng);
  const auto C = random_batch<double, Kokkos::LayoutLeft>(items, M, N, 0.5, rng);
  const auto before = copy_of(C);
  const auto throws = [&](const auto& call, const char* what) {
    EXPECT_THROW(call(), ozaki::InvalidArgument) << what;
    EXPECT_TRUE(same_bits(C, before)) << what;
  };
  const auto two_a = random_batch<double, Kokkos::LayoutLeft>(2, M, K, 0.5, rng);
  throws([&] { ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, two_a, B, 0.0, C); },
         "batch extents differ");
  const auto wide_b = random_batch<double, Kokkos::LayoutLeft>(items, K + 1, N, 0.5, rng);
  throws([&] { ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, A, wide_b, 0.0, C); },
         "shapes of an item");
  throws([&] { ozaki::gemm_batched(TestSpace(), "X", "N", 1.0, A, B, 0.0, C); }, "transA");
  Options pairs;
  pairs.algorithm = Algorithm::Int8Slices;
  pairs.pairs = ozaki::PairPolicy::Count;
  pairs.pair_count = 3;
  throws([&] { ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, A, B, 0.0, C, pairs); },
         "a pair count with an automatic slice count");
  Options callback;
  callback.experimental.native_gemm = [] {};
  throws([&] { ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, A, B, 0.0, C, callback); },
         "one call's native GEMM for a batch");
  // C's items on one matrix (batch stride 0): every product would write the same C.
  const Kokkos::View<double***, Kokkos::LayoutStride, MemSpace> same_c(
      C.data(), Kokkos::LayoutStride(items, 0, M, C.stride(1), N, C.stride(2)));
  throws([&] { ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, A, B, 0.0, same_c); },
         "C items overlap");
  // Item 1's C is item 0's A.
  using Const = Kokkos::View<const double**, Kokkos::LayoutStride, MemSpace>;
  using Out = Kokkos::View<double**, Kokkos::LayoutStride, MemSpace>;
  std::vector<ozaki::GemmProblem<Const, Const, Out>> problems = {
      {"N", "N", 1.0, item(C, 2), item(B, 0), 0.0, item(C, 0)},
      {"N", "N", 1.0, item(A, 1), item(B, 1), 0.0, item(C, 2)}};
  throws([&] { ozaki::gemm_grouped(TestSpace(), problems); }, "C of one problem is another's A");

  // Masked and contiguous: counts and indices out of range, wrong lengths.
  Kokkos::View<int*, Kokkos::HostSpace> masked_m("masked_m", items);
  masked_m(0) = 1;
  masked_m(1) = M + 1;
  masked_m(2) = 0;
  throws([&] { ozaki::gemm_grouped_masked(TestSpace(), "N", "N", 1.0, A, B, masked_m, 0.0, C); },
         "masked_m above the rows");
  masked_m(1) = -1;
  throws([&] { ozaki::gemm_grouped_masked(TestSpace(), "N", "N", 1.0, A, B, masked_m, 0.0, C); },
         "negative masked_m");
  Kokkos::View<int*, Kokkos::HostSpace> short_m("short_m", items - 1);
  throws([&] { ozaki::gemm_grouped_masked(TestSpace(), "N", "N", 1.0, A, B, short_m, 0.0, C); },
         "masked_m of the wrong length");

  const auto stacked_a = random_matrix<double, Kokkos::LayoutLeft>(M, K, 0.5, rng);
  const auto stacked_c = random_matrix<double, Kokkos::LayoutLeft>(M, N, 0.5, rng);
  const auto stacked_before = copy_of(stacked_c);
  Kokkos::View<int*, Kokkos::HostSpace> m_indices("m_indices", M);
  for (std::int64_t r = 0; r < M; ++r) m_indices(r) = static_cast<int>(r % items);
  m_indices(M - 1) = static_cast<int>(items);  // one past the last group
  EXPECT_THROW(ozaki::gemm_grouped_contiguous(TestSpace(), "N", "N", 1.0, stacked_a, B, m_indices,
                                              0.0, stacked_c),
               ozaki::InvalidArgument);
  m_indices(M - 1) = -2;
  EXPECT_THROW(ozaki::gemm_grouped_contiguous(TestSpace(), "N", "N", 1.0, stacked_a, B, m_indices,
                                              0.0, stacked_c),
               ozaki::InvalidArgument);
  Kokkos::View<int*, Kokkos::HostSpace> short_indices("short", M - 1);
  EXPECT_THROW(ozaki::gemm_grouped_contiguous(TestSpace(), "N", "N", 1.0, stacked_a, B,
                                              short_indices, 0.0, stacked_c),
               ozaki::InvalidArgument);
  EXPECT_TRUE(same_bits(stacked_c, stacked_before));
}

/// A masked call made while its stream is captured into a graph (on host spaces the
/// library's emulation): masked_m in host memory is read at capture and the products run
/// inside the graph, each within its Report's bound of long double; masked_m in device memory
/// cannot be read then, and the call refuses it before anything is enqueued.
TEST(GemmGroupedMasked, InsideAGraphCountsComeFromHostMemory) {
  Random rng(31);
  const std::int64_t groups = 3, max_m = 32, N = 24, K = 40;
  const auto A = random_batch<double, Kokkos::LayoutLeft>(groups, max_m, K, 0.5, rng);
  const auto B = random_batch<double, Kokkos::LayoutLeft>(groups, K, N, 0.5, rng);
  Kokkos::View<double***, Kokkos::LayoutLeft, MemSpace> C("C", groups, max_m, N);
  Kokkos::View<int*, Kokkos::HostSpace> masked_m("masked_m", groups);
  const int counts[] = {32, 7, 0};
  for (std::int64_t g = 0; g < groups; ++g) masked_m(g) = counts[g];
  const ozaki::Report r = captured_call([&](const TestSpace& space) {
    return ozaki::gemm_grouped_masked(space, "N", "N", 1.0, A, B, masked_m, 0.0, C);
  });
  ASSERT_GT(r.error_bound, 0.0);
  const BatchErrors e = batch_errors(A, B, C, [&](std::int64_t g) { return counts[g]; });
  EXPECT_LE(e.worst, r.error_bound);
  EXPECT_TRUE(e.others_untouched);
  if constexpr (!std::is_same<MemSpace, Kokkos::HostSpace>::value) {
    Kokkos::View<int*, MemSpace> device_m("device masked_m", groups);
    EXPECT_THROW(captured_call([&](const TestSpace& space) {
                   return ozaki::gemm_grouped_masked(space, "N", "N", 1.0, A, B, device_m, 0.0, C);
                 }),
                 ozaki::InvalidArgument);
  }
}

/// NaN in one item: that item's C is FP64 GEMM's (NaN where it propagates), the others keep
/// their own algorithm, and the Report says a product fell back.
TEST(GemmBatched, NanInOneItemFallsBackForThatItemOnly) {
  Random rng(23);
  const std::int64_t items = 3, M = 16, N = 16, K = 32;
  const auto A = mild_batch(items, M, K, rng), B = mild_batch(items, K, N, rng);
  Kokkos::View<double***, Kokkos::LayoutLeft, MemSpace> C("C", items, M, N);
  Kokkos::deep_copy(Kokkos::subview(A, 1, 2, 3), std::numeric_limits<double>::quiet_NaN());
  const auto expected = copy_of(C);
  const ozaki::Report r = ozaki::gemm_batched(TestSpace(), "N", "N", 1.0, A, B, 0.0, C, crt_auto());
  EXPECT_EQ(r.batched_products, 2);  // the other two, planned as one batch
  for (std::int64_t i = 0; i < items; ++i)
    ozaki::gemm(TestSpace(), "N", "N", 1.0, item(A, i), item(B, i), 0.0, item(expected, i),
                i == 1 ? crt_auto() : counted_fast(r.moduli));
  EXPECT_TRUE(same_bits(C, expected));
  EXPECT_TRUE(r.fallback);
  EXPECT_FALSE(r.reason.empty());
  const auto hC = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
  EXPECT_TRUE(std::isnan(hC(1, 2, 0)));
  EXPECT_FALSE(std::isnan(hC(0, 2, 0)));
}

/// Real products of one shape under an automatic count are planned as one batch: one wait for
/// all their scaling, and the largest of the counts their own calls would take under the fast
/// rule, which every product certified by that rule gets (the Int8Crt call with that count
/// and the fast rule, bit for bit, within its componentwise bound).  A product holding NaN and
/// one whose operands are scaled against each other along k (the counted rule's case) run as
/// their own calls, bit for bit.
TEST(GemmBatched, OnePlanForTheBatchGivesEveryProductTheLargestCount) {
  Random rng(61);
  const std::int64_t items = 5, M = 33, N = 40, K = 96;
  // Spreads the fast rule certifies at this K, one product with a row ten times its others.
  const auto A = mild_batch(items, M, K, rng), B = mild_batch(items, K, N, rng);
  Kokkos::deep_copy(Kokkos::subview(A, 1, 6, 3), 40.0);
  Kokkos::deep_copy(Kokkos::subview(A, 3, 4, 7), std::numeric_limits<double>::quiet_NaN());
  {
    // Item 4: A = X D, B = D^-1 Y with D's exponents in [-24, 24] along k.
    auto hA = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
    auto hB = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
    for (std::int64_t k = 0; k < K; ++k) {
      const int e = static_cast<int>(rng.uniform() * 49) - 24;
      for (std::int64_t m = 0; m < M; ++m) hA(4, m, k) = std::ldexp(hA(4, m, k), e);
      for (std::int64_t n = 0; n < N; ++n) hB(4, k, n) = std::ldexp(hB(4, k, n), -e);
    }
    Kokkos::deep_copy(A, hA);
    Kokkos::deep_copy(B, hB);
  }
  for (const Options& options : {crt_auto(), crt_rule(ozaki::CrtScaling::Fast)}) {
    const auto C = random_batch<double, Kokkos::LayoutLeft>(items, M, N, 0.5, rng);
    const auto expected = copy_of(C), own = copy_of(C);
    const ozaki::Report r =
        ozaki::gemm_batched(TestSpace(), "N", "N", 1.5, A, B, -0.25, C, options);
    ASSERT_EQ(r.batched_products, 3) << r.reason;
    int largest = 0;
    for (std::int64_t i = 0; i < items; ++i) {
      const bool batched = i < 3;
      const ozaki::Report mine = ozaki::gemm(TestSpace(), "N", "N", 1.5, item(A, i), item(B, i),
                                             -0.25, item(own, i), options);
      if (batched) {
        EXPECT_EQ(mine.crt_scaling, ozaki::CrtScaling::Fast) << i << ": " << mine.reason;
        largest = std::max(largest, mine.moduli);
      }
      const ozaki::Report as_batched =
          ozaki::gemm(TestSpace(), "N", "N", 1.5, item(A, i), item(B, i), -0.25, item(expected, i),
                      batched ? counted_fast(r.moduli) : options);
      if (batched) EXPECT_LE(as_batched.error_bound, r.error_bound);
    }
    EXPECT_TRUE(same_bits(C, expected));
    EXPECT_EQ(r.moduli, largest);
    EXPECT_TRUE(r.fallback);  // the NaN product's native GEMM
    const auto hC = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), C);
    EXPECT_TRUE(std::isnan(hC(3, 4, 0)));
    EXPECT_FALSE(std::isnan(hC(4, 4, 0)));
  }
}

/// Auto weighs a batch with the call's fixed cost (the wait after pass 1) paid once: on the
/// H200's rates (docs/benchmarks.md) one 4096^3 product with 14 moduli is modelled slower than
/// FP64 GEMM and a batch of 16 faster; 2048^3 stays slower even in a batch of 64, its
/// memory-bound work alone near one FP64 GEMM.
TEST(GemmBatched, AutoCountsTheFixedCostOncePerBatch) {
  const ozaki::Impl::DeviceRates h200{26.5, 14.15, 0.9};
  const auto plan = [](std::int64_t n) {
    return ozaki::Impl::make_plan(ozaki::Impl::Shape{n, n, n}, crt_auto());
  };
  using ozaki::Impl::crt_batch_cost;
  EXPECT_EQ(crt_batch_cost(h200, plan(4096), 14, 1),
            ozaki::Impl::crt_relative_cost(h200, 14, 14, plan(4096).shape));
  EXPECT_GE(crt_batch_cost(h200, plan(4096), 14, 1), 1.0);
  EXPECT_LT(crt_batch_cost(h200, plan(4096), 14, 16), 0.95);
  EXPECT_LT(crt_batch_cost(h200, plan(4096), 14, 64), crt_batch_cost(h200, plan(4096), 14, 16));
  EXPECT_GE(crt_batch_cost(h200, plan(2048), 14, 64), 1.0);
}

}  // namespace
