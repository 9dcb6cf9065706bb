// The INT8 GEMM backend of the test space against the serial oracle: bit for bit.
#include "common.hpp"

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/slices/schedule.hpp>

namespace {

using namespace ozaki_test;
/// What the library runs on this space (a backend where one is available), and the portable
/// kernels every space falls back to (the oneDNN backend takes them on CPUs without VNNI).
using Backend = ozaki::Impl::Int8Gemm<TestSpace>;
using Portable = ozaki::Impl::Int8Gemm<TestSpace, false>;

struct Int8Case {
  std::int64_t rows_a, rows_b, length, pad, offset;
};

/// Runs one product on the test space (through Impl) and on the oracle; operands K-contiguous
/// with leading dimension length + pad, starting `offset` bytes into each row.
template <class Impl = Backend>
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
  Impl::run(TestSpace(), p);
  auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dc);
  std::vector<std::int32_t> want(c.rows_a * c.rows_b);
  ozaki::serial::int8_gemm(c.rows_a, c.rows_b, c.length, a.data() + c.offset, ld,
                           b.data() + c.offset, ld, want.data(), c.rows_a);
  for (std::int64_t i = 0; i < c.rows_a * c.rows_b; ++i) {
    ASSERT_EQ(got(i), want[i]) << "element (" << i % c.rows_a << ", " << i / c.rows_a << ") of "
                               << c.rows_a << " x " << c.rows_b << " x " << c.length;
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
  expect_product_matches_oracle<Portable>(c, a, b);
}

// Shapes, pads and offsets are multiples of 16: the form every backend is given (int8_gemm.hpp).
INSTANTIATE_TEST_SUITE_P(
    Shapes, Int8GemmBitwise,
    ::testing::Values(Int8Case{16, 16, 16, 0, 0}, Int8Case{48, 16, 32, 16, 0},
                      Int8Case{16, 64, 256, 0, 16}, Int8Case{80, 96, 1008, 16, 32},
                      Int8Case{32, 144, 4096, 0, 48},
                      Int8Case{208, 8208, 64, 0, 0}));  // > 8192 columns: blocked

TEST(Int8Gemm, LongestSafeSumIsExact) {
  // 131056 (the K block in force) products of (-128)(-128) = 2^14 sum to 2147221504, just
  // below 2^31; (-128)(127) products give the most negative sum.  No overflow, no saturation.
  // A row of 127 against -128: a backend that shifts A to unsigned (oneDNN: a + 128 = 255)
  // accumulates 255 (-128) 131056 < -2^31 before its correction; only wrapping INT32 sums
  // (VNNI) give the exact result, saturating 16-bit pairs (vpmaddubsw) do not.
  const Int8Case c{16, 16, ozaki::Impl::resolved_k_block(std::nullopt), 0, 0};
  std::vector<std::int8_t> a(16 * c.length, -128), b(16 * c.length, -128);
  for (std::int64_t l = 0; l < c.length; ++l) b[c.length + l] = 127;      // row 1 of B
  for (std::int64_t l = 0; l < c.length; ++l) a[2 * c.length + l] = 127;  // row 2 of A
  expect_product_matches_oracle(c, a, b);
  expect_product_matches_oracle<Portable>(c, a, b);
  std::vector<std::int32_t> want(16 * 16);
  ozaki::serial::int8_gemm(16, 16, c.length, a.data(), c.length, b.data(), c.length, want.data(),
                           16);
  EXPECT_EQ(want[0], 16384 * 131056);
  EXPECT_EQ(want[16], -128 * 127 * 131056);
}

TEST(Int8Gemm, MixedExtremesMatchOracle) {
  // Every operand at -128, -127, 127 or 0 in random patterns, at the longest safe chunk and
  // odd multiples of 16: where saturating or float intermediates would show.
  const std::int64_t K = ozaki::Impl::resolved_k_block(std::nullopt);
  for (const Int8Case c : {Int8Case{48, 32, K, 0, 0}, Int8Case{16, 80, 4096, 16, 16}}) {
    const std::int64_t ld = c.offset + c.length + c.pad;
    Random rng(c.rows_a + c.rows_b);
    const std::int8_t extremes[4] = {-128, -127, 127, 0};
    std::vector<std::int8_t> a(c.rows_a * ld), b(c.rows_b * ld);
    for (auto& x : a) x = extremes[rng.int8() & 3];
    for (auto& x : b) x = extremes[rng.int8() & 3];
    expect_product_matches_oracle(c, a, b);
    expect_product_matches_oracle<Portable>(c, a, b);
  }
}

TEST(Int8Gemm, BackendNamesWhatRuns) {
  // The Report's backend name (Int8Gemm::name) says which path multiplies: on host spaces
  // "oneDNN" exactly where oneDNN is exact on this CPU, the portable kernels otherwise.
  const std::string name = Backend::name();
  if constexpr (!ozaki::Impl::is_host_space<TestSpace>()) {
    EXPECT_EQ(name, "cuBLAS");  // the one device backend
    return;
  }
#if defined(OZAKI_ENABLE_ONEDNN_BACKEND)
  EXPECT_EQ(name, ozaki::Impl::onednn::exact_int8_here() ? "oneDNN" : "portable")
      << "oneDNN dispatches to " << ozaki::Impl::onednn::instruction_set();
  std::printf("[ host INT8 products: %s (oneDNN instruction set %s) ]\n", name.c_str(),
              ozaki::Impl::onednn::instruction_set().c_str());
#else
  EXPECT_EQ(name, "portable");
#endif
}

TEST(Int8Gemm, OracleRejectsOverflow) {
  // One product more than max_k_block = floor((2^31 - 1) / 2^14) overflows INT32.
  std::vector<std::int8_t> a(ozaki::max_k_block + 1, -128);
  std::int32_t c = 0;
  EXPECT_THROW(ozaki::serial::int8_gemm(1, 1, a.size(), a.data(), 0, a.data(), 0, &c, 1),
               std::overflow_error);
}

/// Scheme II's products of one pass: `batch` operands interleaved in each row (block l of row r
/// at r ld + l length), products stride_c apart, in K chunks through int8_gemm_in_k_chunks: the
/// one entry the pipeline uses, batched where the backend batches (CUDA), item by item
/// elsewhere.  Every product must be the oracle's, and nothing outside them written.
TEST(Int8Gemm, BatchedChunkedProductsMatchOracle) {
  const std::int64_t rows_a = 48, rows_b = 32, length = 96, batch = 3, block = 64;
  const std::int64_t chunks = (length + block - 1) / block;
  const std::int64_t ld = batch * length, stride_c = chunks * rows_a * rows_b + 64;
  Random rng(2026);
  std::vector<std::int8_t> a(rows_a * ld), b(rows_b * ld);
  for (auto& x : a) x = rng.int8();
  for (auto& x : b) x = rng.int8();
  Kokkos::View<std::int8_t*, MemSpace> da("a", a.size()), db("b", b.size());
  Kokkos::View<std::int32_t*, MemSpace> dc("c", batch * stride_c);
  Kokkos::deep_copy(da, Kokkos::View<const std::int8_t*, Kokkos::HostSpace>(a.data(), a.size()));
  Kokkos::deep_copy(db, Kokkos::View<const std::int8_t*, Kokkos::HostSpace>(b.data(), b.size()));
  Kokkos::deep_copy(dc, -7);
  ozaki::Impl::Int8GemmProblem p;
  p.rows_a = rows_a;
  p.rows_b = rows_b;
  p.length = length;
  p.a = da.data();
  p.lda = ld;
  p.b = db.data();
  p.ldb = ld;
  p.c = dc.data();
  p.ldc = rows_a;
  p.batch = batch;
  p.stride_a = p.stride_b = length;
  p.stride_c = stride_c;
  const int products = ozaki::Impl::int8_gemm_in_k_chunks(TestSpace(), p, block, rows_a * rows_b);
  EXPECT_EQ(products, batch * chunks);
  auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dc);
  std::vector<std::int32_t> want(rows_a * rows_b);
  for (std::int64_t i = 0; i < batch; ++i) {
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t k0 = c * block, kc = std::min(block, length - k0);
      ozaki::serial::int8_gemm(rows_a, rows_b, kc, a.data() + i * length + k0, ld,
                               b.data() + i * length + k0, ld, want.data(), rows_a);
      for (std::int64_t e = 0; e < rows_a * rows_b; ++e) {
        ASSERT_EQ(got(i * stride_c + c * rows_a * rows_b + e), want[e])
            << "product " << i << ", chunk " << c << ", element " << e;
      }
    }
    for (std::int64_t e = chunks * rows_a * rows_b; e < stride_c; ++e) {
      ASSERT_EQ(got(i * stride_c + e), -7) << "written beyond product " << i;
    }
  }
}

}  // namespace
