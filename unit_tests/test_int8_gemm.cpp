// The INT8 GEMM backend of the test space against the serial oracle: bit for bit.
#include "common.hpp"

#include <ozaki/impl/backends.hpp>

namespace {

using namespace ozaki_test;
using Backend = ozaki::Impl::Int8Gemm<TestSpace>;

struct Int8Case {
  std::int64_t rows_a, rows_b, length, pad, offset;
};

/// Runs one product on the test space and on the oracle; operands K-contiguous with leading
/// dimension length + pad, starting `offset` bytes into each row.
void expect_product_matches_oracle(const Int8Case& c, const std::vector<std::int8_t>& a,
                                   const std::vector<std::int8_t>& b) {
  const std::int64_t ld = c.offset + c.length + c.pad;
  Kokkos::View<std::int8_t*, MemSpace> da("a", a.size()), db("b", b.size());
  Kokkos::View<std::int32_t*, MemSpace> dc("c", c.rows_a * c.rows_b);
  Kokkos::deep_copy(da, Kokkos::View<const std::int8_t*, Kokkos::HostSpace>(a.data(), a.size()));
  Kokkos::deep_copy(db, Kokkos::View<const std::int8_t*, Kokkos::HostSpace>(b.data(), b.size()));
  Kokkos::deep_copy(dc, -7);  // poison: every element must be written
  ozaki::Impl::Int8GemmProblem p;
  p.rows_a = c.rows_a;
  p.rows_b = c.rows_b;
  p.length = c.length;
  p.a = da.data() + c.offset;
  p.lda = ld;
  p.b = db.data() + c.offset;
  p.ldb = ld;
  p.c = dc.data();
  p.ldc = c.rows_a;
  Backend::run(TestSpace(), p);
  auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dc);
  std::vector<std::int32_t> want(c.rows_a * c.rows_b);
  ozaki::serial::int8_gemm(c.rows_a, c.rows_b, c.length, a.data() + c.offset, ld,
                           b.data() + c.offset, ld, want.data(), c.rows_a);
  for (std::int64_t i = 0; i < c.rows_a * c.rows_b; ++i) {
    ASSERT_EQ(got(i), want[i]) << "element (" << i % c.rows_a << ", " << i / c.rows_a
                               << ") of " << c.rows_a << " x " << c.rows_b << " x " << c.length;
  }
}

class Int8GemmBitwise : public ::testing::TestWithParam<Int8Case> {};

TEST_P(Int8GemmBitwise, RandomMatchesOracle) {
  const Int8Case c = GetParam();
  const std::int64_t ld = c.offset + c.length + c.pad;
  Random rng(c.rows_a * 131 + c.rows_b * 7 + c.length);
  std::vector<std::int8_t> a(c.rows_a * ld), b(c.rows_b * ld);
  for (auto& x : a) x = rng.int8();
  for (auto& x : b) x = rng.int8();
  expect_product_matches_oracle(c, a, b);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Int8GemmBitwise,
                         ::testing::Values(Int8Case{1, 1, 1, 0, 0}, Int8Case{3, 17, 15, 1, 0},
                                           Int8Case{17, 3, 16, 0, 5}, Int8Case{65, 66, 257, 16, 3},
                                           Int8Case{129, 33, 1000, 7, 16},
                                           Int8Case{2, 130, 4099, 0, 1}));

TEST(Int8Gemm, LongestSafeSumIsExact) {
  // 131071 products of (-128)(-128) = 2^14 sum to 2147467264, just below 2^31; and
  // (-128)(127) products to the most negative sum.  The backend must not overflow or saturate.
  const Int8Case c{2, 2, ozaki::max_k_block, 0, 0};
  std::vector<std::int8_t> a(2 * c.length, -128), b(2 * c.length, -128);
  for (std::int64_t l = 0; l < c.length; ++l) b[c.length + l] = 127;  // row 1 of B
  expect_product_matches_oracle(c, a, b);
  std::vector<std::int32_t> want(4);
  ozaki::serial::int8_gemm(2, 2, c.length, a.data(), c.length, b.data(), c.length, want.data(), 2);
  EXPECT_EQ(want[0], 2147467264);
  EXPECT_EQ(want[2], -128 * 127 * 131071);
}

TEST(Int8Gemm, OracleRejectsOverflow) {
  std::vector<std::int8_t> a(ozaki::max_k_block + 1, -128);
  std::int32_t c = 0;
  EXPECT_THROW(ozaki::serial::int8_gemm(1, 1, a.size(), a.data(), 0, a.data(), 0, &c, 1),
               std::overflow_error);
}

}  // namespace
