// Ozaki scheme II (Algorithm::Int8Crt) on the test space against the serial oracle: the
// residues and the accurate rule's bits bit for bit, the fast rule's bits to within one, and
// end-to-end results within the documented bound of a double-double reference.
#include "common.hpp"

#include <ozaki/impl/common/bounds.hpp>

#include <ozaki/impl/backend.hpp>
#include <ozaki/impl/crt/layout.hpp>
#include <ozaki/impl/crt/residues.hpp>
#include <ozaki/impl/crt/rules.hpp>
#include <ozaki/impl/crt/scaling.hpp>
#include <ozaki/serial/crt.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

namespace {

using namespace ozaki_test;
using ozaki::CrtScaling;
using ozaki::Options;
using V = ozaki::Impl::Views<TestSpace>;

constexpr double u = 0x1p-53;

Options crt(std::optional<int> L, CrtScaling scaling = CrtScaling::Auto) {
  Options o;
  o.algorithm = ozaki::Algorithm::Int8Crt;
  o.moduli = L;
  o.crt_scaling = scaling;
  return o;
}

V::ConstMatrix as_const(const DeviceMatrix& X) {
  return V::ConstMatrix(X.view.data(), X.view.layout());
}

template <class T>
std::vector<T> host_vector(const Kokkos::View<T*, typename V::device_type>& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<T>(h.data(), h.data() + h.extent(0));
}

V::Exponents device_ints(const std::vector<int>& values) {
  V::Exponents d("ints", values.size());
  Kokkos::deep_copy(d, Kokkos::View<const int*, Kokkos::HostSpace>(values.data(), values.size()));
  return d;
}

// ---- residues: bit for bit ------------------------------------------------------------------

struct ResidueCase {
  std::int64_t rows, cols;
  double phi;
  int moduli;
};

class CrtResidues : public ::testing::TestWithParam<std::tuple<ResidueCase, Layout>> {};

TEST_P(CrtResidues, MatchOracleBitForBit) {
  const auto [c, layout] = GetParam();
  Random rng(500 + c.rows + c.moduli);
  // Rows of very different magnitude, subnormal ones included.
  HostMatrix host = random_host(c.rows, c.cols, c.phi, rng, [](std::int64_t i) {
    return i % 5 == 4 ? -1070 : int((37 * i) % 201) - 100;
  });
  if (c.rows > 2) {
    for (std::int64_t k = 0; k < c.cols; ++k) host.values[1 + c.rows * k] = 0;  // a zero row
  }
  // Bits over the whole allowed range, above and below 53.
  std::vector<int> bits(c.rows);
  for (std::int64_t r = 0; r < c.rows; ++r) {
    bits[r] = ozaki::Impl::crt_min_bits +
              int((r * 29) % (ozaki::Impl::crt_max_bits - ozaki::Impl::crt_min_bits + 1));
  }
  const ozaki::serial::CrtResidues want = ozaki::serial::crt_residues(host.cref(), c.moduli, bits);

  DeviceMatrix X = device_copy(host, layout);
  TestSpace space;
  const V::ConstMatrix x = as_const(X);
  V::Exponents exponents("exponents", c.rows);
  ASSERT_FALSE(ozaki::Impl::row_scale_exponents(space, x, exponents));
  const std::int64_t kpad = ozaki::Impl::padded_k(c.cols);
  V::Digits residues("residues", (c.rows + 15) / 16 * 16, c.moduli * kpad);
  Kokkos::deep_copy(residues, std::int8_t(99));  // poison: every byte must be written
  ozaki::Impl::crt_residues(space, x, {exponents, device_ints(bits)},
                            ozaki::Impl::make_crt_constants(c.moduli), residues);
  auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), residues);
  ASSERT_EQ(host_vector(exponents), want.exponents);
  for (std::int64_t r = 0; r < std::int64_t(got.extent(0)); ++r) {
    for (int l = 0; l < c.moduli; ++l) {
      for (std::int64_t k = 0; k < kpad; ++k) {
        const int expected = r < c.rows ? want.residue(r, l, k) : 0;
        ASSERT_EQ(int(got(r, l * kpad + k)), expected)
            << "row " << r << ", modulus " << ozaki::crt_moduli[l] << ", column " << k << ", bits "
            << (r < c.rows ? bits[r] : 0);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CrtResidues,
    ::testing::Combine(::testing::Values(ResidueCase{1, 1, 0.5, 2}, ResidueCase{7, 33, 0.5, 8},
                                         ResidueCase{20, 64, 4.0, 15},
                                         ResidueCase{33, 130, 2.0, 20},
                                         ResidueCase{40, 96, 1.0, 24}),
                       ::testing::Values(Layout::Left, Layout::Right, Layout::Stride)));

/// The symmetric residue of y modulo m, by integer arithmetic: in [crt_low(m), crt_high(m)].
std::int64_t integer_symmetric_residue(std::int64_t y, int m) {
  std::int64_t r = ((y % m) + m) % m;
  if (r > ozaki::Impl::crt_high(m)) r -= m;
  return r;
}

/// The residue kernels' last step for every odd modulus and every integer |y| < 2^22 (more
/// than the sums reach: below 2^19 for one part, 2^20 for a complex part's sum, residues.hpp):
/// residue_word's low byte is the symmetric residue's two's complement byte (the bit-pattern
/// argument of residue_word).  This is the host's unfused arithmetic; the fused one of CUDA
/// devices is checked by the residue tests against the oracle on the device.  And the bound
/// itself: 16 bytes of 255 at the byte weights plus the bias' residue stay below 2^19.
TEST(Crt, ResidueWordsAreTheSymmetricResiduesOfEveryCongruentSum) {
  const ozaki::Impl::CrtConstants c = ozaki::Impl::make_crt_constants(ozaki::max_moduli);
  const std::int64_t bound = std::int64_t(1) << 22;
  for (int l = 1; l < ozaki::max_moduli; ++l) {
    const int m = ozaki::crt_moduli[l];
    ASSERT_EQ(m % 2, 1) << "modulus " << l;
    std::int64_t wrong_words = 0;
    for (std::int64_t y = -bound + 1; y < bound; ++y) {
      const std::int64_t r = integer_symmetric_residue(y, m);
      const std::uint32_t s = ozaki::Impl::crt_float_shift_bits + static_cast<std::uint32_t>(y);
      const std::uint32_t word = ozaki::Impl::detail::residue_word(s, c, l);
      wrong_words += static_cast<std::int8_t>(word & 0xffu) != r;
    }
    EXPECT_EQ(wrong_words, 0) << "modulus " << m;
    std::int64_t largest = 0;
    for (int w = 0; w < 4; ++w) {
      for (int i = 0; i < 4; ++i) {
        const auto weight = static_cast<std::int8_t>((c.byte_weight[l][w] >> (8 * i)) & 0xffu);
        largest += 255 * std::abs(int(weight));
      }
    }
    const auto start =
        static_cast<std::int32_t>(c.word_start[l][1] - ozaki::Impl::crt_float_shift_bits);
    EXPECT_LT(largest + std::abs(start), std::int64_t(1) << 19) << "modulus " << m;
  }
}

/// x' as the residue kernels take it (residues.hpp, "Residues from bytes": one 64-bit pattern
/// from a fused multiply-add or from two halves, or two patterns) is the oracle's integer, and
/// its bytes give the oracle's residues, for rows of every form: at ties of both parities and
/// signs (to nearest even), at the largest elements a row has (127/128 2^e), at the edges of
/// the forms' bit counts and scales (2^shift not a double), and on random elements down to
/// subnormal ones and zeros.  The residue tests reach the forms through random data only.
TEST(Crt, ScaledPatternsAreTheOraclesIntegersAtTiesAndEdges) {
  namespace I = ozaki::Impl;
  const I::CrtConstants c = I::make_crt_constants(ozaki::max_moduli);
  std::mt19937_64 engine(77);
  struct Row {
    int bits, e;
    I::detail::CrtRowForm form;
  };
  const Row rows[] = {
      {1, 0, I::detail::CrtRowForm::Fused},        {20, 3, I::detail::CrtRowForm::Fused},
      {51, -7, I::detail::CrtRowForm::Fused},      {51, -1000, I::detail::CrtRowForm::OneWord},
      {40, 1024, I::detail::CrtRowForm::Fused},    {52, 10, I::detail::CrtRowForm::OneWord},
      {62, 0, I::detail::CrtRowForm::OneWord},     {63, -5, I::detail::CrtRowForm::TwoWords},
      {94, 100, I::detail::CrtRowForm::TwoWords},  {94, -1021, I::detail::CrtRowForm::TwoWords},
      {94, 1024, I::detail::CrtRowForm::TwoWords}, {62, -1022, I::detail::CrtRowForm::OneWord}};
  int checked = 0;
  for (const Row& row : rows) {
    const int shift = row.bits - row.e;
    ASSERT_EQ(int(I::detail::crt_row_form(row.bits, shift)), int(row.form))
        << row.bits << ", " << row.e;
    std::vector<double> xs;
    const double top = std::ldexp(127.0 / 128.0, row.e);
    xs.push_back(top);
    xs.push_back(-top);
    xs.push_back(std::nextafter(top, 0.0));
    xs.push_back(0.0);
    xs.push_back(-0.0);
    // Ties n + 1/2 (at 2^-shift each) for even and odd n, both signs, where representable.
    for (const std::int64_t n :
         {std::int64_t(0), std::int64_t(1), std::int64_t(2), std::int64_t(3), std::int64_t(12345),
          std::int64_t(12346), (std::int64_t(1) << 50) - 1, (std::int64_t(1) << 50) - 2}) {
      const double tie = std::ldexp(static_cast<double>(n) + 0.5, -shift);
      if (!(std::fabs(tie) <= top) || tie == 0) continue;
      xs.push_back(tie);
      xs.push_back(-tie);
    }
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (int i = 0; i < 400; ++i) {
      const int down = static_cast<int>(engine() % (row.bits + 8));
      xs.push_back(std::ldexp(unit(engine) * (127.0 / 128.0), row.e - down));
    }
    for (const double x : xs) {
      const __int128 want = ozaki::serial::crt_scaled_integer(x, row.e, row.bits);
      I::detail::with_row_form(
          I::detail::crt_row_scale(row.bits, shift), [&](auto two_words, const auto& patterns) {
            constexpr bool two = decltype(two_words)::value;
            const I::detail::ScaledPatterns p = patterns(x);
            const auto value = [](const I::detail::PatternWords& w) {
              const std::uint64_t v = (std::uint64_t(w.high) << 32) | w.low;
              return static_cast<__int128>(static_cast<std::int64_t>(v - I::crt_word_bias));
            };
            const __int128 got =
                two ? value(p.top) * (__int128(1) << I::crt_top_position) + value(p.bottom)
                    : value(p.bottom);
            ASSERT_TRUE(got == want) << "x " << x << ", bits " << row.bits << ", e " << row.e;
            ASSERT_EQ(p.bottom.low & 0xffu,
                      static_cast<std::uint32_t>(want) & 0xffu);  // modulus 256
            for (int l = 1; l < ozaki::max_moduli; ++l) {
              const int m = ozaki::crt_moduli[l];
              const std::uint32_t s = I::detail::shifted_congruent<two>(p, c, l);
              const auto y = static_cast<std::int32_t>(s - I::crt_float_shift_bits);
              ASSERT_LT(std::abs(y), 1 << 19);
              const std::int64_t expected =
                  integer_symmetric_residue(static_cast<std::int64_t>(want % m), m);
              ASSERT_EQ(static_cast<std::int8_t>(I::detail::residue_word(s, c, l) & 0xffu),
                        expected)
                  << "x " << x << ", modulus " << m;
            }
          });
      ++checked;
    }
  }
  EXPECT_GT(checked, 12 * 400);
}

/// The residue kernels' powers of two (built from their bit pattern where they are normal) are
/// ldexp's, for every exponent a double has, and for the out-of-range ones the kernels never ask
/// for.
TEST(Crt, PowersOfTwoAreLdexpsForEveryExponent) {
  for (int h = -1100; h <= 1100; ++h) {
    const double expected = std::ldexp(1.0, h), got = ozaki::Impl::power_of_two(h);
    ASSERT_EQ(std::memcmp(&expected, &got, sizeof got), 0) << "h = " << h;
  }
}

/// The reconstruction's scaling (scale_by_power_of_two: one multiplication by a normal power of
/// two, ldexp outside their range) is ldexp bit for bit: for every exponent the scaling can take
/// and values whose results are normal, subnormal, zero after rounding, or overflow.
TEST(Crt, ScalingByPowersOfTwoIsLdexp) {
  std::mt19937_64 gen(2026);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  const double edges[] = {1.0, -1.0, 0x1.fffffffffffffp0, 0x1.0000000000001p0, 0x1.8p0, 0.0, -0.0};
  for (int e = -2200; e <= 2200; ++e) {
    for (int t = 0; t < 12; ++t) {
      double x = t < 7 ? edges[t] : std::ldexp(mantissa(gen), static_cast<int>(gen() % 200) - 100);
      const double want = std::ldexp(x, e), got = ozaki::Impl::detail::scale_by_power_of_two(x, e);
      ASSERT_EQ(std::memcmp(&want, &got, sizeof got), 0) << "x = " << x << ", e = " << e;
    }
  }
}

/// The residue-tile layout (residue_tiles.hpp) the GPU kernel writes and the reconstruction
/// reads: the 256 slots x 128 entries of a tile are its 128 x 256 entries, each once; a
/// vector's 16 bytes are 4 accumulator columns' pairs of rows r, r + 8 (wgmma's fragment); and
/// for a fixed byte a warp's 32 slots cover 8 consecutive rows of 4 columns (whole sectors of
/// C's column-major stores).
TEST(Crt, ResidueTilesCoverEachEntryOfATileOnce) {
  using ozaki::Impl::ResidueTiles;
  std::vector<int> seen(ResidueTiles::rows * ResidueTiles::columns, 0);
  for (int s = 0; s < ResidueTiles::slots; ++s) {
    for (int i = 0; i < ResidueTiles::vectors * ResidueTiles::vector_bytes; ++i) {
      const int r = ResidueTiles::row_in_tile(s, i), c = ResidueTiles::column_in_tile(s, i);
      ASSERT_GE(r, 0);
      ASSERT_LT(r, ResidueTiles::rows);
      ASSERT_GE(c, 0);
      ASSERT_LT(c, ResidueTiles::columns);
      ++seen[r + c * ResidueTiles::rows];
    }
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(seen.size()));
  for (int warp = 0; warp < ResidueTiles::slots / 32; ++warp) {
    for (int i = 0; i < 128; ++i) {
      int rows_min = ResidueTiles::rows, rows_max = -1;
      std::vector<int> columns;
      for (int lane = 0; lane < 32; ++lane) {
        const int s = 32 * warp + lane;
        rows_min = std::min(rows_min, ResidueTiles::row_in_tile(s, i));
        rows_max = std::max(rows_max, ResidueTiles::row_in_tile(s, i));
        columns.push_back(ResidueTiles::column_in_tile(s, i));
      }
      std::sort(columns.begin(), columns.end());
      columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
      EXPECT_EQ(rows_max - rows_min, 7) << "warp " << warp << ", entry " << i;
      EXPECT_EQ(columns.size(), 4u) << "warp " << warp << ", entry " << i;
    }
  }
  const ResidueTiles t = ResidueTiles::of(300, 513);  // 3 x 3 tiles, partial ones included
  EXPECT_EQ(t.tiles_r, 3);
  EXPECT_EQ(t.tiles_c, 3);
  EXPECT_EQ(t.plane_bytes(), 9 * ResidueTiles::tile_bytes);
  EXPECT_EQ(t.vector_count() * ResidueTiles::vector_bytes, t.plane_bytes());
}

/// The reconstruction from residue tiles (what a backend that reduces its products hands over,
/// CUDA on compute capability 9.0) gives the bits of the reconstruction from the INT32
/// products, on every space: the tiles are made here from random products through the layout's
/// own mapping, with the padding rows and columns of a pass, exponents and bits per row, alpha
/// and beta.
TEST(Crt, ReconstructionFromResidueTilesIsTheProductsBits) {
  namespace I = ozaki::Impl;
  const TestSpace space;
  const std::int64_t M = 300, mpad = 304, width = 530, columns = 544, n0 = 0;
  for (const int L : {3, 14, 24}) {
    SCOPED_TRACE("L = " + std::to_string(L));
    std::mt19937_64 engine(900 + L);
    V::Products P("products", L, columns, mpad);
    auto hp = Kokkos::create_mirror_view(P);
    for (std::int64_t i = 0; i < std::int64_t(hp.span()); ++i) {
      hp.data()[i] = static_cast<std::int32_t>(engine() % (std::uint64_t(1) << 29)) - (1 << 28);
    }
    Kokkos::deep_copy(P, hp);
    const I::ResidueTiles t = I::ResidueTiles::of(mpad, columns);
    std::vector<std::int8_t> bytes(static_cast<std::size_t>(L * t.plane_bytes()));
    for (int l = 0; l < L; ++l) {
      for (std::int64_t x = 0; x < t.vector_count(); ++x) {
        const int s = static_cast<int>(x % I::ResidueTiles::slots);
        const int v = static_cast<int>(x / I::ResidueTiles::slots % I::ResidueTiles::vectors);
        const std::int64_t tile = x / (I::ResidueTiles::slots * I::ResidueTiles::vectors);
        for (int b = 0; b < I::ResidueTiles::vector_bytes; ++b) {
          const int i = I::ResidueTiles::vector_bytes * v + b;
          const std::int64_t m =
              tile / t.tiles_c * I::ResidueTiles::rows + I::ResidueTiles::row_in_tile(s, i);
          const std::int64_t j =
              tile % t.tiles_c * I::ResidueTiles::columns + I::ResidueTiles::column_in_tile(s, i);
          const std::int64_t y = m < mpad && j < columns ? hp(l, j, m) : 0;
          bytes[l * t.plane_bytes() + x * I::ResidueTiles::vector_bytes + b] =
              static_cast<std::int8_t>(integer_symmetric_residue(y, ozaki::crt_moduli[l]));
        }
      }
    }
    Kokkos::View<std::int8_t*, V::device_type> tiles("tiles", bytes.size());
    Kokkos::deep_copy(
        tiles, Kokkos::View<const std::int8_t*, Kokkos::HostSpace>(bytes.data(), bytes.size()));
    std::vector<int> ea(M), ba(M), eb(width), bb(width);
    for (auto* e : {&ea, &eb}) {
      for (int& x : *e) x = static_cast<int>(engine() % 41) - 20;
    }
    for (auto* b : {&ba, &bb}) {
      for (int& x : *b) x = 30 + static_cast<int>(engine() % 31);
    }
    const I::CrtRowScaling<TestSpace> rows_a{device_ints(ea), device_ints(ba)};
    const I::CrtRowScaling<TestSpace> rows_b{device_ints(eb), device_ints(bb)};
    Random rng(77 + L);
    const HostMatrix C0 = random_host(M, width, 0.5, rng);
    DeviceMatrix from_products = make_matrix(M, width, Layout::Left);
    DeviceMatrix from_tiles = make_matrix(M, width, Layout::Right);
    from_host(C0, from_products.view);
    from_host(C0, from_tiles.view);
    const I::CrtConstants c = I::make_crt_constants(L);
    I::crt_reconstruct(space, I::CrtPassProducts<TestSpace>{P, 1, n0, width}, c, rows_a, rows_b,
                       -0.75, 1.25,
                       V::Matrix(from_products.view.data(), from_products.view.layout()));
    I::crt_reconstruct_tiles(space, I::CrtPassTiles{tiles.data(), t, n0, width}, c, rows_a, rows_b,
                             -0.75, 1.25,
                             V::Matrix(from_tiles.view.data(), from_tiles.view.layout()));
    space.fence();
    const HostMatrix want = to_host(from_products.view), got = to_host(from_tiles.view);
    EXPECT_EQ(got.values, want.values);
    EXPECT_NE(want.values, C0.values);
  }
}

/// The reconstruction's symmetric residue of the INT32 products' sums (|y| < 2^40, residues.hpp)
/// against integer arithmetic, for every modulus including 256 (whose ties may come out as +128
/// or -128: one class), at the edges of the range and on random sums.
TEST(Crt, SymmetricResiduesOfProductSumsAreExact) {
  const ozaki::Impl::CrtConstants c = ozaki::Impl::make_crt_constants(ozaki::max_moduli);
  std::mt19937_64 engine(2026);
  std::vector<std::int64_t> sums;
  const std::int64_t top = std::int64_t(1) << 40;
  for (std::int64_t e :
       {top - 1, top - 2, (top >> 1) + 127, std::int64_t(1) << 31, (std::int64_t(1) << 31) - 1,
        std::int64_t(128), std::int64_t(127), std::int64_t(1), std::int64_t(0)}) {
    sums.push_back(e);
    sums.push_back(-e);
  }
  for (int i = 0; i < 200000; ++i) {
    sums.push_back(static_cast<std::int64_t>(engine() % (2 * top - 1)) - (top - 1));
  }
  for (int l = 0; l < ozaki::max_moduli; ++l) {
    const int m = ozaki::crt_moduli[l];
    for (const std::int64_t y : sums) {
      const double r = ozaki::Impl::detail::symmetric_residue(static_cast<double>(y), c, l);
      const std::int64_t expected = integer_symmetric_residue(y, m);
      if (m == 256 && r == 128) {
        ASSERT_EQ(expected, -128) << "y " << y;  // the tie's other representative
      } else {
        ASSERT_EQ(r, static_cast<double>(expected)) << "modulus " << m << ", y " << y;
      }
    }
  }
}

// ---- scaling rules ---------------------------------------------------------------------------

struct SpaceScale {
  std::vector<int> a, b;
};

/// Pass 1 and the exact row norms as scheme II's pipeline computes them
/// (launch_exponents_and_norms): per norm tile, one thread per tile on consecutive rows
/// (strided rows) or on consecutive tiles of a row (K-contiguous rows).  True on NaN/Inf (a
/// row's exponent is then nonfinite_row).
bool scales_and_norms(const V::ConstMatrix& X, const V::Exponents& e, const V::Norms& l2,
                      const V::Norms& l1) {
  const TestSpace space;
  const std::int64_t R = X.extent(0), K = X.extent(1);
  const bool strided = K > 1 && X.stride(1) != 1;
  const std::int64_t tiles = ozaki::Impl::norm_tiles(K);
  V::Rows tile_max("tile_max", tiles, R), squares("squares", tiles, R), sums("sums", tiles, R);
  V::TileCounts layers("layers", tiles, R);
  ozaki::Impl::launch_exponents_and_norms(space, strided, X, tile_max, squares, sums, layers, e, l2,
                                          l1);
  for (const int exponent : host_vector(e)) {
    if (exponent == ozaki::Impl::nonfinite_row) return true;
  }
  return false;
}

/// op(B)^T of B (K x N) as an N x K host matrix.
HostMatrix transposed(const HostMatrix& B) {
  HostMatrix Bt;
  Bt.rows = B.cols;
  Bt.cols = B.rows;
  for (std::int64_t k = 0; k < B.rows; ++k)
    for (std::int64_t n = 0; n < B.cols; ++n) Bt.values.push_back(B(k, n));
  return Bt;
}

/// op(A) = A (M x K) and op(B)^T = B^T (N x K) on the test space, stored with `layout`
/// (Left: rows read in place as strided rows), with pass 1 and the exact row norms.
struct RowsOnSpace {
  DeviceMatrix dA, dBt;
  V::Exponents ea, eb;
  V::Norms l2a, l1a, l2b, l1b;
};
RowsOnSpace rows_on_space(const HostMatrix& A, const HostMatrix& B, Layout layout) {
  const std::int64_t M = A.rows, N = B.cols;
  RowsOnSpace r{device_copy(A, layout), device_copy(transposed(B), layout),
                V::Exponents("ea", M),  V::Exponents("eb", N),
                V::Norms("l2a", M),     V::Norms("l1a", M),
                V::Norms("l2b", N),     V::Norms("l1b", N)};
  EXPECT_FALSE(scales_and_norms(as_const(r.dA), r.ea, r.l2a, r.l1a));
  EXPECT_FALSE(scales_and_norms(as_const(r.dBt), r.eb, r.l2b, r.l1b));
  return r;
}

/// The INT8 product of both operands' 7-bit magnitudes, as the driver's magnitude_product
/// makes it: the accurate rule's (magnitudes7), or the counted rule's (`window`).
V::Products magnitude_product_on_space(const RowsOnSpace& r, bool window) {
  const TestSpace space;
  const std::int64_t M = r.ea.extent(0), N = r.eb.extent(0), K = r.dA.view.extent(1);
  const std::int64_t kpad = ozaki::Impl::padded_k(K);
  const std::int64_t mpad = (M + 15) / 16 * 16, npad = (N + 15) / 16 * 16;
  V::Digits qa("qa", mpad, kpad), qb("qb", npad, kpad);
  V::Products P("P", 1, npad, mpad);
  if (window) {
    ozaki::Impl::window_magnitudes7(space, as_const(r.dA), r.ea, r.l1a, qa);
    ozaki::Impl::window_magnitudes7(space, as_const(r.dBt), r.eb, r.l1b, qb);
  } else {
    ozaki::Impl::magnitudes7(space, as_const(r.dA), r.ea, qa);
    ozaki::Impl::magnitudes7(space, as_const(r.dBt), r.eb, qb);
  }
  ozaki::Impl::Int8Gemm<TestSpace>::run(
      space, ozaki::Impl::packed_int8_problem(mpad, npad, kpad, qa.data(), qb.data(), P.data()));
  return P;
}

/// The scaling rule on the test space for op(A) = A (M x K) and op(B) = B (K x N), both
/// stored with `layout` (Left: rows read in place as strided rows, one thread per chunk).
SpaceScale scale_on_space(const HostMatrix& A, const HostMatrix& B, int L, CrtScaling scaling,
                          Layout layout = Layout::Right) {
  TestSpace space;
  const std::int64_t M = A.rows, K = A.cols, N = B.cols;
  const RowsOnSpace r = rows_on_space(A, B, layout);
  V::Exponents bits_a("bits_a", M), bits_b("bits_b", N), rho("rho", M);
  if (scaling == CrtScaling::Fast) {
    const double T = ozaki::Impl::crt_fast_target(L, K);
    ozaki::Impl::fast_bits(space, r.l2a, T, bits_a);
    ozaki::Impl::fast_bits(space, r.l2b, T, bits_b);
  } else {
    const V::Products P = magnitude_product_on_space(r, false);
    Kokkos::View<int**, Kokkos::LayoutRight, typename V::device_type> partial("partial",
                                                                              (N + 255) / 256, M);
    ozaki::Impl::accurate_bits(space, P, 1, ozaki::Impl::crt_accurate_range(L), rho, partial,
                               bits_a, bits_b);
  }
  return SpaceScale{host_vector(bits_a), host_vector(bits_b)};
}

/// A (M x K) and B (K x N) whose rows are anti-aligned: one exponent z_k per k, A_mk =
/// (U - 1/2) exp(phi z_k) and B_kn = (U - 1/2) exp(-phi z_k), so that each operand's rows
/// spread over many binades but the products a_mk b_kn do not: (|A||B|)_mn is small beside
/// ||a_m|| ||b_n||, the case that per-operand statistics cannot see.
std::pair<HostMatrix, HostMatrix> anti_aligned(std::int64_t M, std::int64_t N, std::int64_t K,
                                               double phi, Random& rng) {
  std::vector<double> z(static_cast<std::size_t>(K));
  for (double& v : z) v = rng.normal();
  HostMatrix A = random_host(M, K, 0.0, rng), B = random_host(K, N, 0.0, rng);
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t m = 0; m < M; ++m) A.values[m + k * M] *= std::exp(phi * z[k]);
    for (std::int64_t n = 0; n < N; ++n) B.values[k + n * K] *= std::exp(-phi * z[k]);
  }
  return {A, B};
}

/// The counted fast rule's G (rules.hpp, crt_counted_model) on the test space: pass 1 and the
/// norms, the window magnitudes, their INT8 product and counted_ratio, as the driver runs them.
double counted_on_space(const HostMatrix& A, const HostMatrix& B, Layout layout) {
  const RowsOnSpace r = rows_on_space(A, B, layout);
  return ozaki::Impl::counted_ratio(TestSpace(), magnitude_product_on_space(r, true), 1, A.cols,
                                    r.l2a, r.l1a, r.l2b, r.l1b);
}

TEST(Crt, CountedRatioMatchesTheOracleBitForBit) {
  // The counted fast rule's G on both layouts against the oracle's exact integer sums
  // (serial::crt_counted_ratio): iid and anti-aligned rows at phi = 1 to 3, a zero row, and at
  // phi = 3 a column of op(B) of one element.  The cases must include finite and infinite G (an
  // entry with no pair of elements in the windows), or the comparison would be vacuous.
  int finite = 0, infinite = 0;
  for (const bool anti : {false, true}) {
    for (const double phi : {1.0, 2.0, 3.0}) {
      Random rng(3100 + static_cast<int>(10 * phi) + (anti ? 1 : 0));
      const std::int64_t M = 37, N = 29, K = anti ? 2000 : 700;
      auto [A, B] = anti ? anti_aligned(M, N, K, phi, rng)
                         : std::make_pair(random_host(M, K, phi, rng), random_host(K, N, phi, rng));
      for (std::int64_t k = 0; k < K; ++k) A.values[5 + k * M] = 0;  // a zero row
      if (phi == 3.0) {
        for (std::int64_t k = 1; k < K; ++k) B.values[k + 7 * K] = 0;  // one element left
      }
      const double want = ozaki::serial::crt_counted_ratio(A.cref(), B.cref());
      (want < HUGE_VAL ? finite : infinite) += 1;
      for (const Layout layout : {Layout::Right, Layout::Left}) {
        EXPECT_EQ(counted_on_space(A, B, layout), want)
            << (anti ? "anti-aligned" : "iid") << ", phi = " << phi << ", " << name(layout);
      }
    }
  }
  EXPECT_GT(finite, 0);
  EXPECT_GT(infinite, 0);
}

/// The sampled G's definition (scaling.hpp, sampled_counted_ratio), written out on the host:
/// up to 64 rows of each operand (sampled_row: evenly spread groups of adjacent rows), norms in
/// quanta of the row's scale exponent.
double sampled_counted_oracle(const HostMatrix& X, const HostMatrix& Y) {
  struct Row {
    double n = 0;
    int shift = 0;
    std::vector<int> codes;
  };
  const std::int64_t K = X.cols;
  const auto rows_of = [&](const HostMatrix& H) {
    std::vector<Row> out;
    const std::int64_t count = std::min<std::int64_t>(H.rows, 64);
    for (std::int64_t i = 0; i < count; ++i) {
      const std::int64_t r = ozaki::Impl::sampled_row(i, H.rows, count);
      Row row;
      const int e = ozaki::serial::row_scale_exponent(H.cref(), r);
      long double squares = 0, sum = 0;
      for (std::int64_t k = 0; k < K; ++k) {
        const long double a = std::fabs(static_cast<long double>(H(r, k)));
        if (a > 0) {
          const long double s2 = std::max(1.0L, std::ceil(std::ldexp(a, 16 - e)));
          squares += s2 * s2;
        }
        sum += std::floor(std::ldexp(a, 31 - e));
      }
      if (squares > 0) {
        row.n = std::ldexp(std::sqrt(static_cast<double>(squares)), -16);
        int ex = 0;
        std::frexp(std::ldexp(static_cast<double>(sum), -31) * 8 / static_cast<double>(K), &ex);
        row.shift = sum > 0 ? std::min(60, std::max(0, -ex)) : 0;
      }
      for (std::int64_t k = 0; k < K; ++k) {
        const long double v =
            std::floor(std::ldexp(std::fabs(static_cast<long double>(H(r, k))), 7 + row.shift - e));
        row.codes.push_back(v > 127 ? 127 : static_cast<int>(v));
      }
      out.push_back(row);
    }
    return out;
  };
  const std::vector<Row> x = rows_of(X), y = rows_of(Y);
  double G = 0;
  for (const Row& a : x) {
    for (const Row& b : y) {
      if (!(a.n * b.n > 0)) continue;
      std::int64_t p = 0;
      for (std::int64_t k = 0; k < K; ++k) p += std::int64_t(a.codes[k]) * b.codes[k];
      G = std::max(
          G, p > 0 ? std::ldexp(a.n * b.n / static_cast<double>(p), a.shift + b.shift) : HUGE_VAL);
    }
  }
  return G;
}

TEST(Crt, SampledRowsAreDistinctGroupsOfAdjacentRows) {
  // Auto's samples (sampled_row): strictly increasing rows inside the operand, all rows where
  // the sample takes them all, groups of sample_group adjacent rows where the count is a
  // multiple of it, and the first and a late row always among them.
  for (const std::int64_t rows : {1, 3, 4, 5, 63, 64, 65, 67, 100, 129, 300, 8192, 10000}) {
    for (const std::int64_t wanted : {1, 5, 16, 64}) {
      const std::int64_t count = std::min(rows, wanted);
      const bool grouped = count < rows && count % ozaki::Impl::sample_group == 0;
      std::int64_t previous = -1;
      for (std::int64_t i = 0; i < count; ++i) {
        const std::int64_t r = ozaki::Impl::sampled_row(i, rows, count);
        ASSERT_GT(r, previous) << rows << " rows, " << count << " sampled, i = " << i;
        ASSERT_LT(r, rows) << rows << " rows, " << count << " sampled, i = " << i;
        if (count == rows) EXPECT_EQ(r, i);
        if (grouped && i % ozaki::Impl::sample_group != 0) EXPECT_EQ(r, previous + 1);
        previous = r;
      }
      EXPECT_EQ(ozaki::Impl::sampled_row(0, rows, count), 0);
      // The last group starts past the middle of the operand (evenly spread).
      if (count >= 2 * ozaki::Impl::sample_group) EXPECT_GE(2 * previous, rows) << rows;
    }
  }
}

TEST(Crt, SampledCountedRatioMatchesItsDefinition) {
  // Auto's early test on wide exponent ranges: the sampled G on both layouts against the
  // definition on the host, bit for bit, with more rows than the sample takes (every 64th-ish
  // row) and fewer, a zero row among the sampled ones, iid and anti-aligned data.
  for (const bool anti : {false, true}) {
    Random rng(3200 + (anti ? 1 : 0));
    const std::int64_t M = 300, N = 50, K = 901;
    auto [A, B] = anti ? anti_aligned(M, N, K, 1.5, rng)
                       : std::make_pair(random_host(M, K, 2.0, rng), random_host(K, N, 2.0, rng));
    for (std::int64_t k = 0; k < K; ++k) A.values[0 + k * M] = 0;  // sampled row 0 is zero
    const HostMatrix Bt = transposed(B);
    const double want = sampled_counted_oracle(A, Bt);
    EXPECT_GT(want, 0.0);
    for (const Layout layout : {Layout::Right, Layout::Left}) {
      const TestSpace space;
      const DeviceMatrix dA = device_copy(A, layout), dBt = device_copy(Bt, layout);
      V::Digits codes("codes", 2 * ozaki::Impl::counted_sample_rows, (K + 3) / 4 * 4);
      V::Rows stats("stats", 2 * ozaki::Impl::counted_sample_rows, 2);
      EXPECT_EQ(
          ozaki::Impl::sampled_counted_ratio(space, as_const(dA), as_const(dBt), codes, stats),
          want)
          << (anti ? "anti-aligned, " : "iid, ") << name(layout);
    }
  }
}

TEST(Crt, RowNormsMatchTheOracleBitForBit) {
  // Rows whose elements span the whole exponent range (1e300 beside 1e-300), all-zero
  // stretches, subnormals, a zero row; rows shorter than a block of norm tiles, whole blocks,
  // and last blocks of fewer and of more than 32 columns (tile strides 1 to 32); both layouts
  // (one thread per tile on consecutive rows or on consecutive tiles of a row).
  for (const std::int64_t K :
       {std::int64_t(1), std::int64_t(31), std::int64_t(97), std::int64_t(1000), std::int64_t(1030),
        std::int64_t(2048), std::int64_t(9000)}) {
    Random rng(900 + K);
    const std::int64_t R = 37;
    HostMatrix X = random_host(R, K, 2.0, rng, [](std::int64_t r) {
      return r % 6 == 5 ? -1060 : int((53 * r) % 301) - 150;
    });
    for (std::int64_t k = 0; k < K; ++k) {
      X.values[3 + R * k] = 0;                                             // a zero row
      if (k % 64 < 32) X.values[4 + R * k] = 0;                            // zero chunks
      if (k % 3 == 0) X.values[6 + R * k] *= 1e-300;                       // tiny beside large
      if (k == K / 2) X.values[8 + R * k] = 1e300;                         // one huge element
      if (k % 5 == 1) X.values[9 + R * k] = 4.9e-324 * double(1 + k % 7);  // subnormals
    }
    const ozaki::serial::CrtRowNorms want = ozaki::serial::crt_row_norms(X.cref());
    for (const Layout layout : {Layout::Right, Layout::Left}) {
      const DeviceMatrix d = device_copy(X, layout);
      V::Exponents e("e", R);
      V::Norms l2("l2", R), l1("l1", R);
      ASSERT_FALSE(scales_and_norms(as_const(d), e, l2, l1));
      EXPECT_EQ(host_vector(e), want.exponent) << "K = " << K << ", " << name(layout);
      EXPECT_EQ(host_vector(l2), want.l2) << "K = " << K << ", " << name(layout);
      EXPECT_EQ(host_vector(l1), want.l1) << "K = " << K << ", " << name(layout);
      // Each n_r bounds the scaled 2-norm from above, each l1_r the 1-norm from below.
      const std::vector<double> l2v = host_vector(l2), l1v = host_vector(l1);
      for (std::int64_t r = 0; r < R; ++r) {
        long double sq = 0, sum = 0;
        for (std::int64_t k = 0; k < K; ++k) {
          const long double x = std::ldexp(std::fabs((long double)X(r, k)), -want.exponent[r]);
          sq += x * x;
          sum += x;
        }
        EXPECT_GE((long double)l2v[r], std::sqrt(sq) * (1 - 1e-15L)) << "row " << r;
        EXPECT_LE((long double)l1v[r], sum * (1 + 1e-15L)) << "row " << r;
        // ... and tightly (rules.hpp): each quantum of squares overshoots by at most
        // 2^-15 + 2^-32 of the row's scale per element, each tile's shift by 2^-32; each
        // magnitude undershoots by at most 2^-31 per element and tile.
        const long double tiles = ozaki::Impl::norm_tiles(K);
        EXPECT_LE((long double)l2v[r] * l2v[r],
                  sq * (1 + 1e-15L) + K * (0x1p-15L + 0x1p-32L) + tiles * 0x1p-32L)
            << "row " << r;
        EXPECT_GE((long double)l1v[r], sum * (1 - 1e-15L) - (K + tiles) * 0x1p-31L) << "row " << r;
      }
    }
  }
  // NaN or Inf anywhere: reported, whatever the layout.
  Random nan_rng(7);
  HostMatrix X = random_host(5, 40, 0.5, nan_rng);
  X.values[2 + 5 * 33] = std::numeric_limits<double>::infinity();
  for (const Layout layout : {Layout::Right, Layout::Left}) {
    const DeviceMatrix d = device_copy(X, layout);
    V::Exponents e("e", 5);
    V::Norms l2("l2", 5), l1("l1", 5);
    EXPECT_TRUE(scales_and_norms(as_const(d), e, l2, l1)) << name(layout);
  }
}

/// One operand's norm tiles, exponents and norms on the test space, kept for the certificate.
struct TilesOnSpace {
  V::Rows tile_max, squares, sums;
  V::TileCounts layers;
  V::Exponents e;
  V::Norms l2, l1;
};
TilesOnSpace tiles_on_space(const V::ConstMatrix& X) {
  const std::int64_t R = X.extent(0), K = X.extent(1), tiles = ozaki::Impl::norm_tiles(K);
  TilesOnSpace t{V::Rows("tile_max", tiles, R),
                 V::Rows("squares", tiles, R),
                 V::Rows("sums", tiles, R),
                 V::TileCounts("layers", tiles, R),
                 V::Exponents("e", R),
                 V::Norms("l2", R),
                 V::Norms("l1", R)};
  ozaki::Impl::launch_exponents_and_norms(TestSpace(), K > 1 && X.stride(1) != 1, X, t.tile_max,
                                          t.squares, t.sums, t.layers, t.e, t.l2, t.l1);
  return t;
}

ozaki::Impl::CoverageViews<TestSpace> coverage_views(std::int64_t rows) {
  ozaki::Impl::CoverageViews<TestSpace> v;
  v.counts = V::RowCounts("counts", ozaki::Impl::coverage_row_counts, rows);
  v.partials =
      V::Rows("partials", ozaki::Impl::coverage_grid_teams(rows), ozaki::Impl::coverage_grid);
  v.grid = V::Norms("grid", ozaki::Impl::coverage_grid);
  v.lambda = V::Norms("lambda", rows);
  return v;
}

/// counts(i, r) of a device RowCounts as the oracle stores them (row-major).
std::vector<std::uint32_t> row_major_counts(const V::RowCounts& counts) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
  std::vector<std::uint32_t> out;
  for (std::size_t r = 0; r < h.extent(1); ++r)
    for (std::size_t i = 0; i < h.extent(0); ++i) out.push_back(h(i, r));
  return out;
}

TEST(Crt, CoverageMatchesTheOracleBitForBit) {
  // The coverage certificate (crt/coverage.hpp) of rows spanning the exponent range, with zero
  // stretches, subnormals, a zero row and one huge element, against rows scaled against them
  // along k; rows shorter than a block of norm tiles, whole blocks and partial last blocks;
  // both layouts.  Counts, grids, lambdas and the summary's values are the oracle's bits, and
  // every lambda is a true lower bound: (|A||B|)_mn 2^-(e_m+f_n) >= l1b_n lambda_m.
  for (const std::int64_t K : {std::int64_t(1), std::int64_t(31), std::int64_t(97),
                               std::int64_t(1030), std::int64_t(2100)}) {
    Random rng(950 + K);
    const std::int64_t M = 29, N = 23;
    HostMatrix A = random_host(M, K, 1.5, rng, [](std::int64_t r) {
      return r % 6 == 5 ? -1060 : int((53 * r) % 301) - 150;
    });
    HostMatrix B = random_host(K, N, 1.0, rng);
    for (std::int64_t k = 0; k < K; ++k) {
      A.values[3 + M * k] = 0;                                             // a zero row
      if (k % 64 < 32) A.values[4 + M * k] = 0;                            // zero chunks
      if (k % 3 == 0) A.values[6 + M * k] *= 1e-300;                       // tiny beside large
      if (k == K / 2) A.values[8 + M * k] = 1e300;                         // one huge element
      if (k % 5 == 1) A.values[9 + M * k] = 4.9e-324 * double(1 + k % 7);  // subnormals
      const int d = static_cast<int>(k % 13) - 6;                          // against A along k
      for (std::int64_t m = 10; m < M; ++m)
        A.values[m + M * k] = std::ldexp(A.values[m + M * k], d);
      for (std::int64_t n = 0; n < N; ++n)
        B.values[k + K * n] = std::ldexp(B.values[k + K * n], -d);
    }
    const ozaki::serial::CrtCoverage want = ozaki::serial::crt_coverage(A.cref(), B.cref());
    for (const Layout layout : {Layout::Right, Layout::Left}) {
      const std::string what = "K = " + std::to_string(K) + ", " + name(layout);
      const DeviceMatrix dA = device_copy(A, layout), dBt = device_copy(transposed(B), layout);
      const TilesOnSpace ta = tiles_on_space(as_const(dA)), tb = tiles_on_space(as_const(dBt));
      const auto ca = coverage_views(M), cb = coverage_views(N);
      ozaki::Impl::launch_coverage(TestSpace(), K, ta.tile_max, ta.layers, ta.e, ta.l1, ta.l2, ca,
                                   tb.tile_max, tb.layers, tb.e, tb.l1, tb.l2, cb);
      EXPECT_EQ(row_major_counts(ca.counts), want.counts_a) << what;
      EXPECT_EQ(row_major_counts(cb.counts), want.counts_b) << what;
      EXPECT_EQ(host_vector(ca.grid), want.grid_a) << what;
      EXPECT_EQ(host_vector(cb.grid), want.grid_b) << what;
      EXPECT_EQ(host_vector(ca.lambda), want.lambda_a) << what;
      EXPECT_EQ(host_vector(cb.lambda), want.lambda_b) << what;
      V::Rows partials("partials", ozaki::Impl::summary_teams(M + N), ozaki::Impl::summary_values);
      const ozaki::Impl::RowSummary s = ozaki::Impl::row_summary(
          TestSpace(), K, ozaki::Impl::SummaryRows<TestSpace>{ta.e, ta.l2, ta.l1, ca.lambda},
          ozaki::Impl::SummaryRows<TestSpace>{tb.e, tb.l2, tb.l1, cb.lambda}, partials);
      EXPECT_EQ(s.a.coverage_factor, want.factor_a) << what;
      EXPECT_EQ(s.b.coverage_factor, want.factor_b) << what;
      EXPECT_EQ(s.a.split_ratio, want.split_a) << what;
      EXPECT_EQ(s.b.split_ratio, want.split_b) << what;
      EXPECT_EQ(s.a.inverse_lambda, want.inverse_a) << what;
      EXPECT_EQ(s.b.inverse_lambda, want.inverse_b) << what;
    }
    // The lower bound itself, in long double from the oracle's exponents and norms.
    const auto na = ozaki::serial::crt_row_norms(A.cref());
    const auto nb = ozaki::serial::crt_row_norms(B.cref().transposed());
    int positive = 0;
    for (std::int64_t m = 0; m < M; ++m) {
      for (std::int64_t n = 0; n < N; ++n) {
        long double p = 0;
        for (std::int64_t k = 0; k < K; ++k) {
          p += std::ldexp(std::fabs((long double)A(m, k)), -na.exponent[m]) *
               std::ldexp(std::fabs((long double)B(k, n)), -nb.exponent[n]);
        }
        const long double lower_a = (long double)nb.l1[n] * want.lambda_a[m];
        const long double lower_b = (long double)na.l1[m] * want.lambda_b[n];
        EXPECT_GE(p * (1 + 1e-12L), lower_a) << "K = " << K << ", entry " << m << "," << n;
        EXPECT_GE(p * (1 + 1e-12L), lower_b) << "K = " << K << ", entry " << m << "," << n;
        positive += lower_a > 0;
      }
    }
    RecordProperty("positive_lower_bounds_K" + std::to_string(K), positive);
  }
}

TEST(Crt, CoverageCertifiesTheMeanFieldCountOnIidData) {
  // The gate's calibration (coverage.hpp, crt_coverage_gate): on iid data at phi = 0.5 every
  // row's lambda is positive and the certificate's factor stays inside the gate with room,
  // while rows spread against each other along k by 2^10 on half of k fall outside it.
  for (const std::int64_t K : {std::int64_t(300), std::int64_t(4096)}) {
    Random rng(960 + K);
    const std::int64_t M = 96, N = 80;
    const HostMatrix A = random_host(M, K, 0.5, rng), B = random_host(K, N, 0.5, rng);
    const ozaki::serial::CrtCoverage c = ozaki::serial::crt_coverage(A.cref(), B.cref());
    for (const double l : c.lambda_a) EXPECT_GT(l, 0.0) << "K = " << K;
    for (const double l : c.lambda_b) EXPECT_GT(l, 0.0) << "K = " << K;
    EXPECT_LT(std::min(c.factor_a, c.factor_b), ozaki::Impl::crt_coverage_gate / 1.5)
        << "K = " << K;
    HostMatrix A2 = A, B2 = B;
    for (std::int64_t k = 0; k < K / 2; ++k) {
      for (std::int64_t m = 0; m < M; ++m)
        A2.values[m + M * k] = std::ldexp(A.values[m + M * k], 10);
      for (std::int64_t n = 0; n < N; ++n)
        B2.values[k + K * n] = std::ldexp(B.values[k + K * n], -10);
    }
    const ozaki::serial::CrtCoverage d = ozaki::serial::crt_coverage(A2.cref(), B2.cref());
    EXPECT_GT(std::min(d.factor_a, d.factor_b), ozaki::Impl::crt_coverage_gate) << "K = " << K;
  }
}

class CrtScalingRules : public ::testing::TestWithParam<std::tuple<double, int>> {};

TEST_P(CrtScalingRules, BitsOfBothRulesMatchTheOracleExactly) {
  const auto [phi, L] = GetParam();
  Random rng(700 + L);
  const std::int64_t M = 19, N = 23, K = 150;
  const HostMatrix A =
      random_host(M, K, phi, rng, [](std::int64_t i) { return int(i % 7) * 9 - 30; });
  const HostMatrix B = random_host(K, N, phi, rng);
  const auto want_acc = ozaki::serial::crt_scale(A.cref(), B.cref(), L, CrtScaling::Accurate);
  const SpaceScale got_acc = scale_on_space(A, B, L, CrtScaling::Accurate);
  EXPECT_EQ(got_acc.a, want_acc.a);
  EXPECT_EQ(got_acc.b, want_acc.b);
  const auto want_fast = ozaki::serial::crt_scale(A.cref(), B.cref(), L, CrtScaling::Fast);
  for (const Layout layout : {Layout::Right, Layout::Left}) {
    const SpaceScale got_fast = scale_on_space(A, B, L, CrtScaling::Fast, layout);
    EXPECT_EQ(got_fast.a, want_fast.a) << name(layout);
    EXPECT_EQ(got_fast.b, want_fast.b) << name(layout);
  }
  // The accurate rule keeps at least as many bits in total where the fast one is loose.
  if (phi >= 2) {
    long sum_acc = 0, sum_fast = 0;
    for (std::int64_t m = 0; m < M; ++m) sum_acc += want_acc.a[m], sum_fast += want_fast.a[m];
    for (std::int64_t n = 0; n < N; ++n) sum_acc += want_acc.b[n], sum_fast += want_fast.b[n];
    EXPECT_GT(sum_acc, sum_fast) << "phi = " << phi;
  }
}

INSTANTIATE_TEST_SUITE_P(PhiAndModuli, CrtScalingRules,
                         ::testing::Combine(::testing::Values(0.5, 2.0, 4.0),
                                            ::testing::Values(8, 14, 20)));

// ---- end to end ------------------------------------------------------------------------------

/// Asserts for every element |C - ref| <= bound (ref in double-double), and that C agrees with
/// the oracle's scheme II (both within the bound of the exact result).
void expect_crt_accuracy(char ta, char tb, double alpha, const HostMatrix& A, const HostMatrix& B,
                         double beta, const HostMatrix& C0, const GemmRun& run) {
  ASSERT_EQ(run.report.algorithm, ozaki::Algorithm::Int8Crt) << run.report.reason;
  const int L = run.report.moduli;
  ASSERT_GE(L, ozaki::min_moduli);
  ASSERT_LE(L, ozaki::max_moduli);
  const CrtScaling scaling = run.report.crt_scaling;
  ASSERT_TRUE(scaling == CrtScaling::Fast || scaling == CrtScaling::Accurate);
  HostMatrix ref = C0, oracle = C0;
  ozaki::serial::dd_gemm(ta, tb, alpha, A.cref(), B.cref(), beta, ref.ref());
  const ozaki::serial::CrtScale scale =
      ozaki::serial::crt_gemm(ta, tb, alpha, A.cref(), B.cref(), beta, oracle.ref(), L, scaling);
  // Both rules' bits are the oracle's exactly (exact row norms): no slack.
  const std::vector<double> bound =
      ozaki::serial::crt_error_bound(ta, tb, alpha, A.cref(), B.cref(), beta, C0.cref(), scale, 0);
  int fewest = ozaki::Impl::crt_max_bits;
  for (int b : scale.a) fewest = std::min(fewest, b);
  for (int b : scale.b) fewest = std::min(fewest, b);
  EXPECT_EQ(run.report.crt_bits, fewest);
  for (std::int64_t j = 0; j < run.C.cols; ++j) {
    for (std::int64_t i = 0; i < run.C.rows; ++i) {
      const std::size_t idx = i + j * run.C.rows;
      const double got = run.C.values[idx];
      ASSERT_TRUE(std::isfinite(got)) << "C(" << i << "," << j << ") = " << got;
      ASSERT_LE(std::fabs(got - ref.values[idx]), bound[idx] + u * std::fabs(ref.values[idx]))
          << "C(" << i << "," << j << "): got " << got << ", reference " << ref.values[idx] << ", "
          << L << " moduli, " << ozaki::to_string(scaling) << " scaling";
      ASSERT_LE(std::fabs(got - oracle.values[idx]),
                2 * bound[idx] + 2 * u * std::fabs(ref.values[idx]))
          << "C(" << i << "," << j << ") differs from the serial oracle: " << got << " vs "
          << oracle.values[idx];
    }
  }
}

class CrtModuliAndSpread : public ::testing::TestWithParam<std::tuple<int, double, CrtScaling>> {};

TEST_P(CrtModuliAndSpread, WithinBoundOfReference) {
  const auto [L, phi, scaling] = GetParam();
  Random rng(900 + 3 * L + int(phi));
  const std::int64_t M = 17, N = 13, K = 61;
  const HostMatrix A = random_host(M, K, phi, rng), B = random_host(K, N, phi, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  const GemmRun run = run_gemm('N', 'N', 1.5, A, B, -0.5, C0, crt(L, scaling));
  EXPECT_EQ(run.report.moduli, L);
  EXPECT_EQ(run.report.crt_scaling, scaling);
  EXPECT_EQ(run.report.int8_gemms, L);  // one product per modulus (K far below 2^17)
  EXPECT_EQ(run.report.estimate_int8_gemms, scaling == CrtScaling::Accurate ? 1 : 0);
  expect_crt_accuracy('N', 'N', 1.5, A, B, -0.5, C0, run);
}

INSTANTIATE_TEST_SUITE_P(
    AllModuli, CrtModuliAndSpread,
    ::testing::Combine(::testing::Range(8, 21), ::testing::Values(0.5, 2.0, 4.0),
                       ::testing::Values(CrtScaling::Fast, CrtScaling::Accurate)));

TEST(Crt, MoreModuliMeanSmallerError) {
  Random rng(41);
  const std::int64_t M = 24, N = 20, K = 300;
  const HostMatrix A = random_host(M, K, 1.0, rng), B = random_host(K, N, 1.0, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  HostMatrix ref = C0;
  ozaki::serial::dd_gemm('N', 'N', 1.0, A.cref(), B.cref(), 0.0, ref.ref());
  const auto abs_ab = abs_product('N', 'N', A, B);
  double previous = HUGE_VAL;
  for (int L = 6; L <= 12; L += 2) {
    const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, crt(L, CrtScaling::Fast));
    const double err = normwise_error(run.C, ref, abs_ab);
    // Two moduli add about 16 bits, split between the operands: the error falls by about 2^8.
    EXPECT_LT(err, previous / 16) << L << " moduli";
    previous = err;
  }
}

/// The peak ratios q = max_r l2_r / l1_r of op(A) = A and op(B)^T = B^T from the oracle's exact
/// row norms (the same bits as every space's), and the rule an automatic count takes there.
struct OraclePeaks {
  double q_a = 0, q_b = 0;
  ozaki::Impl::CrtPeakClass rule = ozaki::Impl::CrtPeakClass::Fast;
};
OraclePeaks oracle_peaks(const HostMatrix& A, const HostMatrix& B) {
  OraclePeaks p;
  p.q_a = ozaki::serial::crt_peak_ratio(ozaki::serial::crt_row_norms(A.cref()));
  p.q_b = ozaki::serial::crt_peak_ratio(ozaki::serial::crt_row_norms(B.cref().transposed()));
  p.rule = ozaki::Impl::crt_peak_class(A.cols, p.q_a, p.q_b);
  return p;
}

class CrtAuto : public ::testing::TestWithParam<std::tuple<double, int>> {};

TEST_P(CrtAuto, NoWorseThanNativeFp64) {
  const auto [phi, K] = GetParam();
  Random rng(4321 + K);
  const std::int64_t M = 48, N = 40;
  const HostMatrix A = random_host(M, K, phi, rng), B = random_host(K, N, phi, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, crt(ozaki::auto_moduli));
  const auto [err, err_native] = errors_against_reference(A, B, run.C);
  RecordProperty("moduli", run.report.moduli);
  EXPECT_LE(err, err_native) << "phi = " << phi << ", K = " << K << ", " << run.report.moduli
                             << " moduli (" << ozaki::to_string(run.report.crt_scaling)
                             << "): ozaki " << err << " vs native " << err_native;
  EXPECT_GT(err_native, 0.0);
  EXPECT_GT(run.report.modeled_error, 0.0);
  EXPECT_LE(run.report.modeled_error, u);
  // Wide exponent ranges take the counted fast rule (the accurate rule where its lower bound
  // cannot see some entry), narrow and moderately peaked ones the fast rule, the latter with
  // one modulus more than its model (rules.hpp, crt_peak_class).
  const OraclePeaks peaks = oracle_peaks(A, B);
  if (phi >= 4) EXPECT_EQ(peaks.rule, ozaki::Impl::CrtPeakClass::Accurate);
  if (phi <= 0.5) EXPECT_EQ(peaks.rule, ozaki::Impl::CrtPeakClass::Fast);
  if (peaks.rule != ozaki::Impl::CrtPeakClass::Accurate) {
    EXPECT_EQ(run.report.crt_scaling, CrtScaling::Fast);
    EXPECT_EQ(run.report.moduli, ozaki::Impl::crt_fast_auto_moduli(
                                     K, peaks.q_a, peaks.q_b, ozaki::Impl::fp64_unit_roundoff));
  } else {
    const double G = ozaki::serial::crt_counted_ratio(A.cref(), B.cref());
    const bool counted = G < HUGE_VAL;
    RecordProperty("counted", counted ? 1 : 0);
    EXPECT_EQ(run.report.crt_scaling, counted ? CrtScaling::Fast : CrtScaling::Accurate);
    if (counted)
      EXPECT_EQ(run.report.moduli,
                ozaki::Impl::crt_counted_moduli(K, G, ozaki::Impl::fp64_unit_roundoff));
  }
  expect_crt_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run);
}

INSTANTIATE_TEST_SUITE_P(PhiAndK, CrtAuto,
                         ::testing::Combine(::testing::Values(0.5, 1.0, 1.5, 2.0, 4.0),
                                            ::testing::Values(64, 1024, 4096)));

TEST(Crt, CountedRuleKeepsNativeErrorWhereTheFastModelFails) {
  // Wide exponent ranges (peak products beyond 32) under an automatic count: the counted fast
  // rule (fast bits, the count from the window product's lower bound of |A||B|).  On
  // anti-aligned rows the fast model's count plus one or two gives 4 to 22 times native FP64's
  // error (docs/benchmarks.md, crt_counts); the counted count must reach native's error on
  // them and on iid rows, against double-double, with the count the oracle's G gives.  Each
  // case is checked to be in the wide class with a finite G first (not vacuous).
  struct Case {
    std::int64_t M, N, K;
    double phi;
    bool anti;
  };
  for (const Case c : {Case{64, 48, 8192, 2.0, true}, Case{96, 80, 1024, 2.0, true},
                       Case{128, 96, 8192, 2.0, false}, Case{64, 64, 4096, 1.5, false}}) {
    Random rng(3300 + c.K + static_cast<int>(c.phi * 10) + (c.anti ? 1 : 0));
    const auto [A, B] = c.anti ? anti_aligned(c.M, c.N, c.K, c.phi, rng)
                               : std::make_pair(random_host(c.M, c.K, c.phi, rng),
                                                random_host(c.K, c.N, c.phi, rng));
    const HostMatrix C0 = random_host(c.M, c.N, 0.5, rng);
    const std::string what = std::to_string(c.M) + "x" + std::to_string(c.N) + "x" +
                             std::to_string(c.K) + (c.anti ? " anti-aligned" : " iid");
    ASSERT_EQ(oracle_peaks(A, B).rule, ozaki::Impl::CrtPeakClass::Accurate) << what;
    const double G = ozaki::serial::crt_counted_ratio(A.cref(), B.cref());
    ASSERT_LT(G, HUGE_VAL) << what;
    const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, crt(ozaki::auto_moduli));
    EXPECT_EQ(run.report.crt_scaling, CrtScaling::Fast) << what;
    EXPECT_EQ(run.report.moduli,
              ozaki::Impl::crt_counted_moduli(c.K, G, ozaki::Impl::fp64_unit_roundoff))
        << what;
    EXPECT_EQ(run.report.estimate_int8_gemms, 1) << what;
    EXPECT_NE(run.report.reason.find("counted fast rule"), std::string::npos) << run.report.reason;
    EXPECT_LE(run.report.modeled_error, u) << what;
    const auto [err, err_native] = errors_against_reference(A, B, run.C);
    EXPECT_LE(err, err_native) << what << ": " << run.report.moduli << " moduli, ozaki " << err
                               << " vs native " << err_native;
    expect_crt_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run);
    // The Report's options replay the call (a fixed count under the fast rule), bit for bit.
    const GemmRun replay = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, run.report.options);
    EXPECT_EQ(replay.report.moduli, run.report.moduli);
    EXPECT_EQ(replay.C.values, run.C.values) << what;
  }
}

TEST(Crt, ModeratelyPeakedRowsTakeTheRuleTheCertificateAllows) {
  // Peak products K q_A q_B in (8, 32]: where the coverage certificate bounds the mean-field
  // estimate within crt_coverage_gate, the automatic count (Auto scaling and explicit fast
  // scaling alike) keeps the fast rule with one modulus more than its model and no bound
  // product; where it cannot, the counted fast rule's window product gives the count.  Either
  // way native FP64's error or better against double-double, and the componentwise bound
  // within native's.  Each shape's seed is checked to land in that peak class first.
  struct Case {
    std::int64_t M, N, K;
    double phi;
    int seed;
  };
  for (const Case c :
       {Case{64, 48, 4096, 1.2, 12}, Case{96, 80, 1024, 1.2, 11}, Case{32, 40, 8192, 1.3, 11},
        Case{128, 128, 2048, 1.3, 11}, Case{64, 48, 4096, 1.4, 11}}) {
    Random rng(c.seed);
    const HostMatrix A = random_host(c.M, c.K, c.phi, rng), B = random_host(c.K, c.N, c.phi, rng);
    const HostMatrix C0 = random_host(c.M, c.N, 0.5, rng);
    const OraclePeaks peaks = oracle_peaks(A, B);
    const double peak = ozaki::Impl::crt_peak_product(c.K, peaks.q_a, peaks.q_b);
    ASSERT_EQ(peaks.rule, ozaki::Impl::CrtPeakClass::FastExtended)
        << c.M << "x" << c.N << "x" << c.K << ": K q_A q_B = " << peak;
    const ozaki::serial::CrtCoverage coverage = ozaki::serial::crt_coverage(A.cref(), B.cref());
    const bool certified =
        std::min(coverage.factor_a, coverage.factor_b) <= ozaki::Impl::crt_coverage_gate;
    const int model =
        ozaki::Impl::crt_fast_moduli(c.K, peaks.q_a, peaks.q_b, ozaki::Impl::fp64_unit_roundoff);
    const double G = ozaki::serial::crt_counted_ratio(A.cref(), B.cref());
    std::vector<double> first;
    for (const CrtScaling scaling : {CrtScaling::Auto, CrtScaling::Fast}) {
      const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, crt(ozaki::auto_moduli, scaling));
      EXPECT_EQ(run.report.crt_scaling, CrtScaling::Fast);
      if (certified) {
        EXPECT_EQ(run.report.moduli, model + 1) << "K q_A q_B = " << peak;
        EXPECT_EQ(run.report.estimate_int8_gemms, 0);
        EXPECT_NE(run.report.reason.find("moderately peaked"), std::string::npos)
            << run.report.reason;
      } else {
        ASSERT_LT(G, HUGE_VAL);
        EXPECT_GE(run.report.moduli,
                  ozaki::Impl::crt_counted_moduli(c.K, G, ozaki::Impl::fp64_unit_roundoff));
        EXPECT_EQ(run.report.estimate_int8_gemms, 1);
        EXPECT_NE(run.report.reason.find("counted fast rule"), std::string::npos)
            << run.report.reason;
      }
      EXPECT_LE(run.report.error_bound, ozaki::Impl::native_componentwise_bound(c.K));
      if (!first.empty()) {
        EXPECT_EQ(run.C.values, first) << "Auto and fast scaling took the same rule and count";
        continue;
      }
      first = run.C.values;
      const auto [err, err_native] = errors_against_reference(A, B, run.C);
      EXPECT_LE(err, err_native) << c.M << "x" << c.N << "x" << c.K << ", K q_A q_B = " << peak
                                 << ", " << run.report.moduli << " moduli: ozaki " << err
                                 << " vs native " << err_native;
      expect_crt_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run);
    }
  }
}

TEST(Crt, LayoutsTransposesAndRowMajorC) {
  Random rng(42);
  const std::int64_t M = 21, N = 18, K = 40;
  for (Layout la : {Layout::Left, Layout::Right, Layout::Stride}) {
    for (Layout lc : {Layout::Left, Layout::Right}) {
      const HostMatrix A = random_host(K, M, 1.0, rng), B = random_host(N, K, 1.0, rng);
      const HostMatrix C0 = random_host(M, N, 0.5, rng);
      const GemmRun run = run_gemm('T', 'T', -1.0, A, la, B, Layout::Right, 2.0, C0, lc,
                                   crt(14, CrtScaling::Accurate));
      expect_crt_accuracy('T', 'T', -1.0, A, B, 2.0, C0, run);
    }
  }
}

TEST(Crt, KBeyond2To17IsChunked) {
  Random rng(43);
  const std::int64_t M = 3, N = 2, K = 139941;
  const HostMatrix A = random_host(M, K, 0.5, rng), B = random_host(K, N, 0.5, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  for (CrtScaling scaling : {CrtScaling::Fast, CrtScaling::Accurate}) {
    const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, crt(12, scaling));
    EXPECT_EQ(run.report.int8_gemms, 2 * 12);  // two K chunks per modulus
    EXPECT_LE(run.report.k_chunk, ozaki::max_k_block);
    expect_crt_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run);
  }
}

TEST(Crt, SmallKBlockAndWorkspaceLimitGiveTheSameResult) {
  Random rng(44);
  const std::int64_t M = 40, N = 2100, K = 100;
  const HostMatrix A = random_host(M, K, 2.0, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  // Column-major B: op(B)^T's rows are K-contiguous; column-major B^T with 'T': they are
  // strided (tile kernels).  Both kinds of rows get their residues block by block.
  for (const char tb : {'N', 'T'}) {
    const HostMatrix B = tb == 'N' ? random_host(K, N, 2.0, rng) : random_host(N, K, 2.0, rng);
    const GemmRun whole = run_gemm('N', tb, 1.0, A, B, 0.5, C0, crt(13, CrtScaling::Accurate));
    EXPECT_EQ(whole.report.recombine_passes, 1);
    EXPECT_EQ(whole.report.int8_gemms, 13);
    Options o = crt(13, CrtScaling::Accurate);
    o.experimental.k_block = 32;  // 4 chunks of K per modulus, and of the bound product
    // Room for fewer columns than the 1024 a pass takes at least: 3 passes, evened out to 704
    // columns each, each with its own residues of op(B)^T.
    o.workspace_limit = 1 << 20;
    const GemmRun blocked = run_gemm('N', tb, 1.0, A, B, 0.5, C0, o);
    EXPECT_EQ(blocked.report.recombine_passes, 3);
    EXPECT_EQ(blocked.report.int8_gemms, 13 * 4 * 3);
    EXPECT_EQ(blocked.report.estimate_int8_gemms, 4);
    // Chunks and blocks change no integer: the results are identical.
    EXPECT_EQ(blocked.C.values, whole.C.values);
    expect_crt_accuracy('N', tb, 1.0, A, B, 0.5, C0, blocked);
  }
}

TEST(Crt, WorkspaceOfRequiredBytesServesEveryCall) {
  // Column-major A: op(A)'s rows are strided, and on a GPU the automatic count's estimate
  // copies them into its own scratch; required_bytes covers that and every pass.  An
  // automatic count is sized for 16 moduli: wide-range data that needs more grows the
  // workspace once, and a second call finds it large enough.
  Random rng(51);
  const std::int64_t M = 8, N = 1100, K = 64;
  for (const double phi : {0.5, 4.0}) {
    const HostMatrix A = random_host(M, K, phi, rng), B = random_host(K, N, phi, rng);
    const HostMatrix C0 = random_host(M, N, 0.5, rng);
    const DeviceMatrix dA = device_copy(A, Layout::Left), dB = device_copy(B, Layout::Left);
    Options limited = crt(18, CrtScaling::Accurate);
    limited.workspace_limit = 1 << 18;  // two passes
    for (const Options& o :
         {crt(ozaki::auto_moduli, CrtScaling::Accurate), crt(ozaki::auto_moduli, CrtScaling::Auto),
          crt(ozaki::auto_moduli, CrtScaling::Fast), crt(14, CrtScaling::Fast),
          crt(18, CrtScaling::Accurate), limited}) {
      ozaki::Workspace<TestSpace> ws(TestSpace(), M, N, K, o);
      EXPECT_EQ(ws.bytes(), ozaki::Workspace<TestSpace>::required_bytes(M, N, K, o));
      std::int64_t expected = ws.allocations();
      std::vector<double> first;
      for (int call = 0; call < 2; ++call) {
        const DeviceMatrix dC = device_copy(C0, Layout::Left);
        GemmRun run;
        run.report = ozaki::gemm(TestSpace(), "N", "N", 1.0, dA.left, dB.left, 0.5, dC.left, o, ws);
        run.C = to_host(dC.view);
        EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::Int8Crt);
        const bool beyond_sizing =
            o.moduli == ozaki::auto_moduli && run.report.moduli > ozaki::Impl::assumed_auto_moduli;
        if (call == 0 && beyond_sizing) {
          EXPECT_LE(ws.allocations(), expected + 1);
          expected = ws.allocations();
        }
        EXPECT_EQ(ws.allocations(), expected)
            << "phi " << phi << ", " << ozaki::to_string(o.crt_scaling) << ", moduli "
            << run.report.moduli << ", call " << call;
        if (call == 0) {
          expect_crt_accuracy('N', 'N', 1.0, A, B, 0.5, C0, run);
          first = run.C.values;
        } else {
          EXPECT_EQ(run.C.values, first);  // a reused workspace changes nothing
        }
        if (o.workspace_limit) EXPECT_EQ(run.report.recombine_passes, 2);
      }
    }
  }
}

TEST(Crt, PassWidths) {
  const ozaki::Impl::OperandPlan ops;
  Options o = crt(14, CrtScaling::Fast);  // the default 8 GiB limit
  o.experimental.overlap = false;         // one set of pass scratch
  auto width = [&](std::int64_t m, std::int64_t n, std::int64_t k, const Options& options,
                   std::int64_t pad = 16) {
    const ozaki::Impl::CallPlan plan = ozaki::Impl::make_plan({m, n, k}, options, 0, pad);
    return ozaki::Impl::crt_block_columns<TestSpace>(plan, 14, ops);
  };
  // Large M and K: passes of 2048 columns (the fastest measured on the H200), evened out.
  EXPECT_EQ(width(8192, 8192, 8192, o), 2048);
  EXPECT_EQ(width(16384, 16384, 16384, o), 2048);
  // N up to 1.5 times 2048: one pass (two of 1536 ran slower at 20000 x 3000 x 12000 on the
  // H200); beyond, the nearest count of passes, ties to the fewer.
  EXPECT_EQ(width(8192, 3000, 8192, o), 3008);
  EXPECT_EQ(width(8192, 3072, 8192, o), 3072);
  EXPECT_EQ(width(8192, 3088, 8192, o), 1552);
  EXPECT_EQ(width(8192, 5000, 8192, o), 2512);
  EXPECT_EQ(width(8192, 5120, 8192, o), 2560);
  EXPECT_EQ(width(8192, 10000, 8192, o), 2000);
  // CUDA's plan pads to 128: 20000 x 3000 x 12000 gets one pass of 3072 columns.
  EXPECT_EQ(width(20000, 3000, 12000, o, 128), 3072);
  // Under the library's limit large M and K never get narrower passes, even where op(A)'s
  // residues alone exceed 8 GiB (32768^3: 15 GB); an explicit limit of the same 8 GiB gets the
  // least, 1024 columns, and where 2048 fit it the same width as the library's.
  Options explicit_8gib = o;
  explicit_8gib.workspace_limit = std::int64_t(8) << 30;
  EXPECT_EQ(width(32768, 32768, 32768, o), 2048);
  EXPECT_EQ(width(32768, 32768, 32768, explicit_8gib), 1024);
  EXPECT_EQ(width(16384, 16384, 16384, explicit_8gib), 2048);
  EXPECT_EQ(width(8192, 3000, 8192, explicit_8gib), 3008);
  // Smaller M or K: one pass where the limit allows it.
  EXPECT_EQ(width(4096, 4096, 4096, o), 4096);
  EXPECT_EQ(width(2048, 2048, 65536, o), 2048);
  // (16384 x 16384 x 1024: 2 passes of 8192 columns fit the 8 GiB limit, 1 does not.)
  EXPECT_EQ(width(16384, 16384, 1024, o), 8192);
  // A tight limit: the widest pass that fits (with op(A)'s residues), evened out.
  Options tight = o;
  tight.workspace_limit = std::int64_t(4) << 30;
  const std::int64_t m = 32768, n = 32768, k = 1024;
  const std::int64_t skinny = width(m, n, k, tight);
  const std::int64_t per_column = 4 * 14 * m + 14 * k;
  EXPECT_EQ(skinny % 16, 0);
  EXPECT_GE(skinny, 1024);
  EXPECT_LE(m * 14 * k + skinny * per_column, *tight.workspace_limit);
  const std::int64_t passes = (n + skinny - 1) / skinny;
  EXPECT_GT(m * 14 * k + (n / (passes - 1) + 16) * per_column,
            *tight.workspace_limit);  // one pass fewer would not fit
  // Tuning::crt_pass_columns overrides the width (rounded up to 16, evened out).
  Options asked = o;
  asked.experimental.crt_pass_columns = 4096;
  EXPECT_EQ(width(8192, 8192, 8192, asked), 4096);
  asked.experimental.crt_pass_columns = 1000;  // 1008: 9 passes of 912
  EXPECT_EQ(width(8192, 8192, 8192, asked), 912);
  // Overlapped passes (where the space has a side instance) hold two sets of pass scratch:
  // under the same limit a pass is at most half as wide.  16384 x 16384 x 1024: 2 passes of
  // 8192 columns, or 4 overlapped passes of 4096.
  Options overlapped = o;
  overlapped.experimental.overlap = true;
  const auto layout = ozaki::Impl::crt_passes<TestSpace>(
      ozaki::Impl::make_plan({16384, 16384, 1024}, overlapped), 14, ops);
  if (ozaki::Impl::SideInstance<TestSpace>::available) {
    EXPECT_EQ(layout.buffers, 2);
    EXPECT_EQ(layout.width, 4096);
    EXPECT_EQ(layout.count, 4);
  } else {
    EXPECT_EQ(layout.buffers, 1);
    EXPECT_EQ(layout.width, 8192);
  }
  // Two sets that do not fit the limit: the passes run in order.
  Options cramped = overlapped;
  cramped.workspace_limit = 1;
  EXPECT_EQ(ozaki::Impl::crt_passes<TestSpace>(
                ozaki::Impl::make_plan({16384, 16384, 1024}, cramped), 14, ops)
                .buffers,
            1);
  // One pass needs no second set.
  EXPECT_EQ(ozaki::Impl::crt_passes<TestSpace>(
                ozaki::Impl::make_plan({4096, 4096, 4096}, overlapped), 14, ops)
                .buffers,
            1);
}

TEST(Crt, SampledPeakRatioBoundsTheFullOneFromBelow) {
  // Rows of very different peakedness (phi = 4 and a few near-constant rows): a sample's
  // largest ratio is at most all rows' largest, and close to it when the sample is every row
  // (the full one comes from the exact quantized norms of rules.hpp: n_r rounded up by at most
  // 2^-16 of the row's largest element per element, l1_r down by 2^-31).
  Random rng(47);
  const std::int64_t R = 300, K = 500;
  HostMatrix X = random_host(R, K, 4.0, rng);
  for (std::int64_t k = 0; k < K; ++k) X.values[7 + k * R] = 1.0 + 1e-3 * rng.uniform();
  for (const Layout layout : {Layout::Left, Layout::Right}) {
    const DeviceMatrix d = device_copy(X, layout);
    const TestSpace space;
    V::Exponents e("e", R);
    V::Norms l2("l2", R), l1("l1", R);
    scales_and_norms(as_const(d), e, l2, l1);
    const double full = ozaki::Impl::peak_ratio(space, l2, l1);
    // Both operands' samples come from one kernel: Y here is X's first 100 rows, whose
    // own full ratio is their max.
    const V::ConstMatrix first =
        Kokkos::subview(as_const(d), std::make_pair(0, 100), Kokkos::ALL());
    double full_first = 0;
    {
      V::Exponents e100("e", 100);
      V::Norms l2f("l2", 100), l1f("l1", 100);
      scales_and_norms(first, e100, l2f, l1f);
      full_first = ozaki::Impl::peak_ratio(space, l2f, l1f);
    }
    const auto every = ozaki::Impl::sampled_peak_ratios(space, as_const(d), first, R);
    EXPECT_LE(every.x, full * (1 + 1e-12)) << name(layout);
    EXPECT_GE(every.x, full * (1 - 1e-4)) << name(layout);
    EXPECT_LE(every.y, full_first * (1 + 1e-12)) << name(layout);
    EXPECT_GE(every.y, full_first * (1 - 1e-4)) << name(layout);
    for (const std::int64_t sample : {1, 16, 64}) {
      const auto some = ozaki::Impl::sampled_peak_ratios(space, as_const(d), first, sample);
      EXPECT_GT(some.x, 0.0);
      EXPECT_GT(some.y, 0.0);
      EXPECT_LE(some.x, full * (1 + 1e-12)) << sample << " rows, " << name(layout);
      EXPECT_LE(some.y, full_first * (1 + 1e-12)) << sample << " rows, " << name(layout);
    }
  }
}

TEST(Crt, RowSummaryIsTheReductionsItReplaces) {
  // The pipeline's one wait after pass 1 (row_summary) against the reductions it replaced, on
  // more rows than one summary team takes (2048), with an exponent spread, a zero row and
  // rows of one element: the same peak ratios (bitwise: the same divisions, maxima in any
  // order), the largest norms, the fewest fast bits from them, and NaN/Inf per operand.
  Random rng(48);
  const std::int64_t M = 3000, N = 1500, K = 70;
  HostMatrix A = random_host(M, K, 2.0, rng), Bt = random_host(N, K, 1.0, rng);
  for (std::int64_t k = 0; k < K; ++k) A.values[11 + k * M] = 0;         // a zero row
  for (std::int64_t k = 1; k < K; ++k) Bt.values[2900 % N + k * N] = 0;  // one element left
  for (const Layout layout : {Layout::Left, Layout::Right}) {
    const TestSpace space;
    const DeviceMatrix dA = device_copy(A, layout), dBt = device_copy(Bt, layout);
    V::Exponents ea("ea", M), eb("eb", N), bits("bits", std::max(M, N));
    V::Norms l2a("l2a", M), l1a("l1a", M), l2b("l2b", N), l1b("l1b", N);
    ASSERT_FALSE(scales_and_norms(as_const(dA), ea, l2a, l1a));
    ASSERT_FALSE(scales_and_norms(as_const(dBt), eb, l2b, l1b));
    const std::int64_t teams = ozaki::Impl::summary_teams(M + N);
    ASSERT_GT(teams, 1);
    V::Rows partials("partials", teams, ozaki::Impl::summary_values);
    // (The certificate's lambdas: CoverageMatchesTheOracleBitForBit; zero here.)
    const V::Norms lambda_a("lambda_a", M), lambda_b("lambda_b", N);
    const ozaki::Impl::SummaryRows<TestSpace> rows_a{ea, l2a, l1a, lambda_a};
    const ozaki::Impl::SummaryRows<TestSpace> rows_b{eb, l2b, l1b, lambda_b};
    const ozaki::Impl::RowSummary s = ozaki::Impl::row_summary(space, K, rows_a, rows_b, partials);
    EXPECT_FALSE(s.a.nonfinite);
    EXPECT_FALSE(s.b.nonfinite);
    EXPECT_EQ(s.a.peak, ozaki::Impl::peak_ratio(space, l2a, l1a)) << name(layout);
    EXPECT_EQ(s.b.peak, ozaki::Impl::peak_ratio(space, l2b, l1b)) << name(layout);
    const std::vector<double> ha = host_vector(l2a), hb = host_vector(l2b);
    EXPECT_EQ(s.a.largest_l2, *std::max_element(ha.begin(), ha.end()));
    EXPECT_EQ(s.b.largest_l2, *std::max_element(hb.begin(), hb.end()));
    for (const int L : {8, 14, 20}) {
      const double T = ozaki::Impl::crt_fast_target(L, K);
      const V::Exponents bits_a = Kokkos::subview(bits, std::make_pair(std::int64_t(0), M));
      const V::Exponents bits_b = Kokkos::subview(bits, std::make_pair(std::int64_t(0), N));
      EXPECT_EQ(ozaki::Impl::fast_row_bits(s.a.largest_l2, T),
                ozaki::Impl::fast_bits(space, l2a, T, bits_a))
          << L << " moduli";
      EXPECT_EQ(ozaki::Impl::fast_row_bits(s.b.largest_l2, T),
                ozaki::Impl::fast_bits(space, l2b, T, bits_b))
          << L << " moduli";
    }
    // NaN in one row of op(B)^T, Inf in one of op(A): each operand's flag, norms or not.
    for (const int which : {0, 1}) {
      HostMatrix X = which == 0 ? A : Bt;
      X.values[X.rows * (K / 2) + X.rows - 1] =
          which == 0 ? std::numeric_limits<double>::infinity() : std::nan("");
      const DeviceMatrix dX = device_copy(X, layout);
      EXPECT_TRUE(scales_and_norms(as_const(dX), which == 0 ? ea : eb, which == 0 ? l2a : l2b,
                                   which == 0 ? l1a : l1b));
      const ozaki::Impl::RowSummary bad =
          ozaki::Impl::row_summary(space, K, rows_a, rows_b, partials);
      EXPECT_EQ(bad.a.nonfinite, which == 0) << name(layout);
      EXPECT_EQ(bad.b.nonfinite, which == 1) << name(layout);
      // Restore the finite operand's exponents and norms for the next case.
      ASSERT_FALSE(scales_and_norms(which == 0 ? as_const(dA) : as_const(dBt), which == 0 ? ea : eb,
                                    which == 0 ? l2a : l2b, which == 0 ? l1a : l1b));
    }
  }
}

TEST(Crt, OverlappedPassesGiveTheSerialBits) {
  // 1000 columns in passes of 256: 4 passes, overlapped where the space has a side
  // instance, in order otherwise; the bits must not depend on the schedule.
  Random rng(46);
  const std::int64_t M = 90, N = 1000, K = 70;
  const HostMatrix A = random_host(M, K, 1.0, rng), B = random_host(K, N, 1.0, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  std::vector<double> serial;
  for (const bool overlap : {false, true}) {
    Options o = crt(15);
    o.experimental.crt_pass_columns = 256;
    o.experimental.overlap = overlap;
    const GemmRun run =
        run_gemm('N', 'N', 1.0, A, Layout::Left, B, Layout::Right, 0.5, C0, Layout::Left, o);
    EXPECT_EQ(run.report.recombine_passes, 4);
    EXPECT_EQ(run.report.overlapped, overlap && ozaki::Impl::SideInstance<TestSpace>::available);
    if (!overlap) {
      expect_crt_accuracy('N', 'N', 1.0, A, B, 0.5, C0, run);
      serial = run.C.values;
    } else {
      EXPECT_EQ(run.C.values, serial);
    }
  }
}

TEST(Crt, PassWidthsChangeNoBits) {
  Random rng(44);
  const std::int64_t M = 40, N = 400, K = 60;
  const HostMatrix A = random_host(M, K, 2.0, rng), B = random_host(K, N, 2.0, rng);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  // Pass widths are rounded up to the backend's padding (16 portable, 128 cuBLAS), then
  // evened out over the passes.
  const std::int64_t pad = ozaki::Impl::Int8Gemm<TestSpace>::padding;
  const std::int64_t npad = (N + pad - 1) / pad * pad;
  std::vector<double> first;
  for (const std::int64_t columns : {0, 16, 48, 130}) {
    Options o = crt(16);
    if (columns != 0) o.experimental.crt_pass_columns = columns;  // 0: the library's choice
    const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.5, C0, o);
    const std::int64_t width = columns == 0 ? npad : (columns + pad - 1) / pad * pad;
    EXPECT_EQ(run.report.recombine_passes, (npad + width - 1) / width) << columns;
    if (columns == 16) EXPECT_GE(run.report.recombine_passes, 2);
    if (columns == 0) {
      expect_crt_accuracy('N', 'N', 1.0, A, B, 0.5, C0, run);
      first = run.C.values;
    } else {
      EXPECT_EQ(run.C.values, first) << columns << " columns per pass";
    }
  }
}

// ---- hard numerics and bad input -------------------------------------------------------------

TEST(Crt, NaNAndInfGiveTheIeeeResultAndAReportedFallback) {
  Random rng(45);
  HostMatrix A = random_host(6, 8, 0.5, rng), B = random_host(8, 5, 0.5, rng);
  const HostMatrix C0 = random_host(6, 5, 0.5, rng);
  A.values[7] = std::numeric_limits<double>::quiet_NaN();
  B.values[9] = std::numeric_limits<double>::infinity();
  const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 1.0, C0, crt(16));
  EXPECT_TRUE(run.report.fallback);
  EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::Native);
  HostMatrix want = C0;
  ozaki::serial::dgemm('N', 'N', 1.0, A.cref(), B.cref(), 1.0, want.ref());
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    if (std::isnan(want.values[i])) {
      EXPECT_TRUE(std::isnan(run.C.values[i])) << i;
    } else if (std::isinf(want.values[i])) {
      EXPECT_EQ(run.C.values[i], want.values[i]) << i;
    } else {
      EXPECT_NEAR(run.C.values[i], want.values[i], 1e-14 * (1 + std::fabs(want.values[i]))) << i;
    }
  }
}

TEST(Crt, ExtremeMagnitudesNeitherOverflowNorUnderflowSpuriously) {
  Random rng(46);
  const std::int64_t M = 5, N = 3, K = 20;
  const HostMatrix A = random_host(M, K, 1.0, rng, [](std::int64_t i) {
    return i == 0 ? 960 : i == 1 ? -990 : i == 2 ? -1060 : i == 3 ? 900 : 0;
  });
  const HostMatrix B = random_host(N, K, 1.0, rng, [](std::int64_t j) {
    return j == 0 ? -990 : j == 1 ? 0 : 40;
  });
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  for (CrtScaling scaling : {CrtScaling::Fast, CrtScaling::Accurate}) {
    const GemmRun run = run_gemm('N', 'T', 1.0, A, B, 0.5, C0, crt(16, scaling));
    expect_crt_accuracy('N', 'T', 1.0, A, B, 0.5, C0, run);
  }
}

TEST(Crt, ZeroRowsColumnsAndOperands) {
  Random rng(47);
  HostMatrix A = random_host(5, 11, 0.5, rng), B = random_host(11, 4, 0.5, rng);
  for (std::int64_t k = 0; k < 11; ++k) A.values[2 + 5 * k] = 0;
  for (std::int64_t k = 0; k < 11; ++k) B.values[k + 11 * 3] = 0;
  const HostMatrix C0 = random_host(5, 4, 0.5, rng);
  for (CrtScaling scaling : {CrtScaling::Fast, CrtScaling::Accurate}) {
    const GemmRun run = run_gemm('N', 'N', 2.0, A, B, -1.0, C0, crt(10, scaling));
    for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(run.C(2, j), -C0(2, j));
    for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(run.C(i, 3), -C0(i, 3));
    expect_crt_accuracy('N', 'N', 2.0, A, B, -1.0, C0, run);
    HostMatrix Z = A;
    for (double& z : Z.values) z = 0;
    const GemmRun zero = run_gemm('N', 'N', 2.0, Z, B, 3.0, C0, crt(10, scaling));
    for (std::size_t i = 0; i < C0.values.size(); ++i)
      EXPECT_EQ(zero.C.values[i], 3.0 * C0.values[i]);
  }
}

TEST(Crt, EmptyShapesAndAlphaZero) {
  Random rng(48);
  const HostMatrix C0 = random_host(3, 4, 0.5, rng);
  HostMatrix A0;
  A0.rows = 3;
  HostMatrix B0;
  B0.cols = 4;
  const GemmRun k0 = run_gemm('N', 'N', 1.0, A0, B0, 2.0, C0, crt(12));
  for (std::size_t i = 0; i < C0.values.size(); ++i) EXPECT_EQ(k0.C.values[i], 2.0 * C0.values[i]);
  HostMatrix A = random_host(3, 5, 0.5, rng), B = random_host(5, 4, 0.5, rng);
  A.values[0] = std::numeric_limits<double>::quiet_NaN();
  const GemmRun a0 = run_gemm('N', 'N', 0.0, A, B, -1.0, C0, crt(12));
  EXPECT_EQ(a0.report.algorithm, ozaki::Algorithm::None);
  for (std::size_t i = 0; i < C0.values.size(); ++i) EXPECT_EQ(a0.C.values[i], -C0.values[i]);
}

TEST(Crt, BadOptionsAndTooFewModuliThrowWithCUntouched) {
  Random rng(49);
  const std::int64_t M = 6, N = 4, K = 4096;
  const DeviceMatrix A = device_copy(random_host(M, K, 0.5, rng), Layout::Left);
  const DeviceMatrix B = device_copy(random_host(K, N, 0.5, rng), Layout::Left);
  const HostMatrix C0 = random_host(M, N, 0.5, rng);
  const DeviceMatrix C = device_copy(C0, Layout::Left);
  auto call = [&](const Options& o) {
    return ozaki::gemm(TestSpace(), "N", "N", 1.0, A.left, B.left, 1.0, C.left, o);
  };
  EXPECT_THROW(call(crt(1)), ozaki::InvalidArgument);
  EXPECT_THROW(call(crt(ozaki::max_moduli + 1)), ozaki::InvalidArgument);
  Options bad = crt(10);
  bad.crt_scaling = static_cast<CrtScaling>(7);
  EXPECT_THROW(call(bad), ozaki::InvalidArgument);
  // Two moduli (M = 65280) cannot hold a product of K = 4096 terms with 16 bits each.
  EXPECT_THROW(call(crt(2, CrtScaling::Fast)), ozaki::InvalidArgument);
  EXPECT_THROW(call(crt(2, CrtScaling::Accurate)), ozaki::InvalidArgument);
  EXPECT_EQ(to_host(C.view).values, C0.values);
}

TEST(Crt, AutoAlgorithmPrefersCrtForFp64AccuracyWhereNoDeviceRatioIsKnown) {
  Random rng(50);
  const HostMatrix A = random_host(20, 300, 0.5, rng), B = random_host(300, 10, 0.5, rng);
  const HostMatrix C0 = random_host(20, 10, 0.5, rng);
  const GemmRun run = run_gemm('N', 'N', 1.0, A, B, 0.0, C0, Options{});
  if (ozaki::Impl::Int8Gemm<TestSpace>::int8_over_fp64_throughput(TestSpace()) == 0) {
    EXPECT_EQ(run.report.algorithm, ozaki::Algorithm::Int8Crt) << run.report.reason;
    expect_crt_accuracy('N', 'N', 1.0, A, B, 0.0, C0, run);
  } else {
    EXPECT_TRUE(run.report.algorithm == ozaki::Algorithm::Int8Crt ||
                run.report.algorithm == ozaki::Algorithm::Native)
        << run.report.reason;
  }
}

}  // namespace
