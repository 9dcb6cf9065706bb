#pragma once
// Shared by every test source.  Each source is compiled once per execution space; CMake
// names the space in OZAKI_TEST_SPACE (Kokkos::Serial, Kokkos::OpenMP, Kokkos::Cuda), and
// every test compares that space's result with the serial oracle (backends/serial).

#include <ozaki/ozaki.hpp>
#include <ozaki/serial/reference.hpp>
#include <ozaki/test_hooks.hpp>

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#ifndef OZAKI_TEST_SPACE
#error "OZAKI_TEST_SPACE must name the execution space under test"
#endif

namespace ozaki_test {

using TestSpace = OZAKI_TEST_SPACE;
using MemSpace = typename TestSpace::memory_space;

/// Changes the test hooks (ozaki::Experimental::TestHooks) for one scope: `change` edits a copy
/// of the hooks in force, which come back when the scope ends.
class ScopedHooks {
 public:
  template <class Change>
  explicit ScopedHooks(Change&& change) : before_(ozaki::Experimental::test_hooks()) {
    ozaki::Experimental::TestHooks h = before_;
    change(h);
    ozaki::Experimental::set_test_hooks(h);
  }
  ~ScopedHooks() { ozaki::Experimental::set_test_hooks(before_); }
  ScopedHooks(const ScopedHooks&) = delete;
  ScopedHooks& operator=(const ScopedHooks&) = delete;

 private:
  ozaki::Experimental::TestHooks before_;
};

/// Makes every scratch allocation above `bytes` fail for one scope, as if the memory were
/// exhausted (TestHooks::fail_scratch_above, scratch.hpp's fault injection).
struct FailScratchAbove : ScopedHooks {
  explicit FailScratchAbove(std::size_t bytes)
      : ScopedHooks([bytes](ozaki::Experimental::TestHooks& h) {
          h.fail_scratch_above = static_cast<std::int64_t>(bytes);
        }) {}
};

/// Deterministic random numbers, the same on every platform (no std:: distributions).
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  /// Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1p-53; }
  /// Standard normal (Box-Muller).
  double normal() {
    const double u1 = 1.0 - uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  /// The Ozaki papers' test distribution: (U - 1/2) exp(phi N), so phi sets the exponent
  /// spread (phi = 0.5: about 3 binades, phi = 4: about 25).
  double spread(double phi) { return (uniform() - 0.5) * std::exp(phi * normal()); }
  std::int8_t int8() { return static_cast<std::int8_t>(static_cast<int>(engine_() & 0xff) - 128); }

 private:
  std::mt19937_64 engine_;
};

/// One draw of rng.spread(phi) rounded to the scalar T; a complex T takes two draws, real part
/// first.
template <class T>
T spread_value(Random& rng, double phi) {
  if constexpr (std::is_floating_point<T>::value) {
    return static_cast<T>(rng.spread(phi));
  } else {
    using R = typename T::value_type;
    const R re = static_cast<R>(rng.spread(phi));
    return T(re, static_cast<R>(rng.spread(phi)));
  }
}

enum class Layout { Left, Right, Stride };

inline const char* name(Layout l) {
  return l == Layout::Left ? "Left" : l == Layout::Right ? "Right" : "Stride";
}

/// Copies between a (possibly non-contiguous) view on Space's memory and a contiguous
/// column-major one, on Space: Kokkos cannot deep_copy strided views across memory spaces.
template <class Space = TestSpace, class Strided, class Contiguous>
void copy_on_device(const Strided& strided, const Contiguous& contiguous, bool to_strided) {
  const std::int64_t rows = strided.extent(0), cols = strided.extent(1);
  Kokkos::parallel_for(
      "test::copy",
      Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(Space(), 0, rows * cols),
      KOKKOS_LAMBDA(const std::int64_t idx) {
        const std::int64_t i = idx % rows, j = idx / rows;
        if (to_strided) {
          strided(i, j) = contiguous(i, j);
        } else {
          contiguous(i, j) = strided(i, j);
        }
      });
  Kokkos::fence();
}

/// A rows x cols matrix of T on Space's memory in the given layout (Layout::Stride: every
/// other row and column of a larger row-major matrix), copied from and back to column-major
/// host values through a contiguous buffer on the device (Kokkos cannot deep_copy strided
/// views across memory spaces).
template <class T, class Space = TestSpace>
struct DeviceOf {
  using Mem = typename Space::memory_space;
  Kokkos::View<T**, Kokkos::LayoutStride, Mem> view;
  Kokkos::View<T**, Kokkos::LayoutLeft, Mem> left;
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> right;
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> parent;  // Stride's storage
  Layout layout = Layout::Left;

  /// Calls f with the View in its own layout type (LayoutLeft, LayoutRight or LayoutStride).
  template <class F>
  auto visit(F&& f) const {
    if (layout == Layout::Left) return f(left);
    if (layout == Layout::Right) return f(right);
    return f(view);
  }

  DeviceOf() = default;

  /// Zeros.
  DeviceOf(std::int64_t rows, std::int64_t cols, Layout l) : layout(l) {
    switch (l) {
      case Layout::Left:
        left = decltype(left)("left", rows, cols);
        view = decltype(view)(left.data(), Kokkos::LayoutStride(rows, 1, cols, left.stride(1)));
        break;
      case Layout::Right:
        right = decltype(right)("right", rows, cols);
        view = decltype(view)(right.data(), Kokkos::LayoutStride(rows, right.stride(0), cols, 1));
        break;
      case Layout::Stride:
        parent = decltype(parent)("parent", 2 * rows + 1, 2 * cols + 1);
        view = decltype(view)(parent.data() + parent.stride(0),
                              Kokkos::LayoutStride(rows, 2 * parent.stride(0), cols, 2));
        break;
    }
  }

  /// The host values, column-major.
  DeviceOf(const T* values, std::int64_t rows, std::int64_t cols, Layout l)
      : DeviceOf(rows, cols, l) {
    copy(const_cast<T*>(values), true);
  }

  /// Host <-> device: `values` column-major, rows x cols.
  void copy(T* values, bool to_device) const {
    const std::int64_t rows = view.extent(0), cols = view.extent(1);
    Kokkos::View<T**, Kokkos::LayoutLeft, Mem> tmp("tmp", rows, cols);
    Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace> host(values, rows, cols);
    if (to_device) Kokkos::deep_copy(tmp, host);
    copy_on_device<Space>(view, tmp, to_device);
    if (!to_device) Kokkos::deep_copy(host, tmp);
  }
};

/// Row-major host values (rows x cols) as a DeviceOf in `layout`, through column-major.
template <class T>
DeviceOf<T> device_rows(const std::vector<T>& row_major, std::int64_t rows, std::int64_t cols,
                        Layout layout) {
  std::vector<T> column_major(row_major.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) column_major[r + c * rows] = row_major[r * cols + c];
  return DeviceOf<T>(column_major.data(), rows, cols, layout);
}

/// A DeviceOf's values, row-major.
template <class T>
std::vector<T> host_rows(const DeviceOf<T>& d) {
  const std::int64_t rows = d.view.extent(0), cols = d.view.extent(1);
  std::vector<T> column_major(rows * cols), row_major(rows * cols);
  d.copy(column_major.data(), false);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) row_major[r * cols + c] = column_major[r + c * rows];
  return row_major;
}

/// A double matrix on the test space (DeviceOf).
using DeviceMatrix = DeviceOf<double>;

inline DeviceMatrix make_matrix(std::int64_t rows, std::int64_t cols, Layout layout) {
  return DeviceMatrix(rows, cols, layout);
}

/// Host values of a device matrix, column-major, plus a serial::MatrixRef onto them.
struct HostMatrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> values;
  ozaki::serial::MatrixRef ref() { return {values.data(), rows, cols, 1, rows}; }
  ozaki::serial::ConstMatrixRef cref() const { return {values.data(), rows, cols, 1, rows}; }
  double operator()(std::int64_t i, std::int64_t j) const { return values[i + j * rows]; }
};

inline HostMatrix to_host(const Kokkos::View<double**, Kokkos::LayoutStride, MemSpace>& v) {
  HostMatrix h;
  h.rows = v.extent(0);
  h.cols = v.extent(1);
  h.values.resize(static_cast<std::size_t>(h.rows * h.cols));
  Kokkos::View<double**, Kokkos::LayoutLeft, MemSpace> tmp("to_host", h.rows, h.cols);
  copy_on_device(v, tmp, false);
  Kokkos::deep_copy(Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>(h.values.data(),
                                                                                  h.rows, h.cols),
                    tmp);
  return h;
}

inline void from_host(const HostMatrix& h,
                      const Kokkos::View<double**, Kokkos::LayoutStride, MemSpace>& v) {
  Kokkos::View<double**, Kokkos::LayoutLeft, MemSpace> tmp("from_host", h.rows, h.cols);
  Kokkos::deep_copy(tmp, Kokkos::View<const double**, Kokkos::LayoutLeft, Kokkos::HostSpace>(
                             h.values.data(), h.rows, h.cols));
  copy_on_device(v, tmp, true);
}

/// A device matrix in the given layout holding the values of h.
inline DeviceMatrix device_copy(const HostMatrix& h, Layout layout) {
  DeviceMatrix d = make_matrix(h.rows, h.cols, layout);
  from_host(h, d.view);
  return d;
}

/// A matrix filled with rng.spread(phi), optionally with each row scaled by 2^row_shift(i)
/// so that rows differ in magnitude.
template <class RowScale>
HostMatrix random_host(std::int64_t rows, std::int64_t cols, double phi, Random& rng,
                       RowScale row_scale) {
  HostMatrix h;
  h.rows = rows;
  h.cols = cols;
  h.values.resize(static_cast<std::size_t>(rows * cols));
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i)
      h.values[i + j * rows] = std::ldexp(rng.spread(phi), row_scale(i));
  return h;
}

inline HostMatrix random_host(std::int64_t rows, std::int64_t cols, double phi, Random& rng) {
  return random_host(rows, cols, phi, rng, [](std::int64_t) { return 0; });
}

/// Normwise error max |c - ref| / (|A||B|)_mn (the measure of the Ozaki papers).
inline double normwise_error(const HostMatrix& C, const HostMatrix& ref,
                             const std::vector<double>& abs_product) {
  double worst = 0;
  for (std::size_t i = 0; i < C.values.size(); ++i) {
    const double denom = abs_product[i];
    const double diff = std::fabs(C.values[i] - ref.values[i]);
    worst = std::max(worst, denom > 0 ? diff / denom : diff);
  }
  return worst;
}

/// (|op(A)||op(B)|)_mn, column-major.
inline std::vector<double> abs_product(char ta, char tb, const HostMatrix& A, const HostMatrix& B) {
  const auto opA = ozaki::serial::op(A.cref(), ta);
  const auto opB = ozaki::serial::op(B.cref(), tb);
  std::vector<double> out(static_cast<std::size_t>(opA.rows * opB.cols), 0.0);
  for (std::int64_t n = 0; n < opB.cols; ++n)
    for (std::int64_t m = 0; m < opA.rows; ++m) {
      double s = 0;
      for (std::int64_t k = 0; k < opA.cols; ++k) s += std::fabs(opA(m, k) * opB(k, n));
      out[m + n * opA.rows] = s;
    }
  return out;
}

/// Normwise errors (normwise_error) of C = A B (no transposes, beta = 0) and of plain FP64
/// GEMM on the same inputs, both against a double-double reference.
struct ErrorsAgainstReference {
  double ozaki = 0, native = 0;
};
inline ErrorsAgainstReference errors_against_reference(const HostMatrix& A, const HostMatrix& B,
                                                       const HostMatrix& C) {
  HostMatrix ref = C, native = C;
  ozaki::serial::dd_gemm('N', 'N', 1.0, A.cref(), B.cref(), 0.0, ref.ref());
  ozaki::serial::dgemm('N', 'N', 1.0, A.cref(), B.cref(), 0.0, native.ref());
  const auto abs_ab = abs_product('N', 'N', A, B);
  return {normwise_error(C, ref, abs_ab), normwise_error(native, ref, abs_ab)};
}

/// ozaki::gemm on the test space with the operands in the given layouts; C back on the host.
struct GemmRun {
  HostMatrix C;
  ozaki::Report report;
};

inline GemmRun run_gemm(char ta, char tb, double alpha, const HostMatrix& A, Layout la,
                        const HostMatrix& B, Layout lb, double beta, const HostMatrix& C0,
                        Layout lc, const ozaki::Options& options) {
  const DeviceMatrix dA = device_copy(A, la), dB = device_copy(B, lb), dC = device_copy(C0, lc);
  const std::string sa(1, ta), sb(1, tb);
  GemmRun run;
  run.report = dA.visit([&](const auto& a) {
    return dB.visit([&](const auto& b) {
      return dC.visit([&](const auto& c) {
        return ozaki::gemm(TestSpace(), sa.c_str(), sb.c_str(), alpha, a, b, beta, c, options);
      });
    });
  });
  run.C = to_host(dC.view);
  return run;
}

inline GemmRun run_gemm(char ta, char tb, double alpha, const HostMatrix& A, const HostMatrix& B,
                        double beta, const HostMatrix& C0, const ozaki::Options& options) {
  return run_gemm(ta, tb, alpha, A, Layout::Left, B, Layout::Left, beta, C0, Layout::Left, options);
}

}  // namespace ozaki_test
