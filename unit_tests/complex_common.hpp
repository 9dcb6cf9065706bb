#pragma once
// Complex host matrices, their device copies in every layout, and ozaki::gemm on them: shared
// by the test sources that run complex data (test_complex.cpp, test_componentwise.cpp).

#include "common.hpp"

#include <ozaki/serial/complex.hpp>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

namespace ozaki_test {

using ozaki::serial::zdouble;
using KC = Kokkos::complex<double>;

static_assert(sizeof(KC) == sizeof(zdouble) && alignof(KC) >= alignof(zdouble),
              "the tests copy std::complex<double> and Kokkos::complex<double> bytewise");

/// A complex host matrix, column-major.
struct HostZ {
  std::int64_t rows = 0, cols = 0;
  std::vector<zdouble> values;
  ozaki::serial::ComplexRef ref() { return {values.data(), rows, cols, 1, rows}; }
  ozaki::serial::ConstComplexRef cref() const { return {values.data(), rows, cols, 1, rows}; }
  zdouble operator()(std::int64_t i, std::int64_t j) const { return values[i + j * rows]; }
};

/// Real and imaginary parts each (U - 1/2) exp(phi N).
inline HostZ random_z(std::int64_t rows, std::int64_t cols, double phi, Random& rng) {
  HostZ h;
  h.rows = rows;
  h.cols = cols;
  h.values.resize(static_cast<std::size_t>(rows * cols));
  for (zdouble& z : h.values) {
    const double re = rng.spread(phi);
    z = zdouble(re, rng.spread(phi));
  }
  return h;
}

/// A complex matrix on the memory space of Space in the given layout (Layout::Stride: every
/// other row and column of a larger row-major matrix), with the host values copied in.
template <class Space>
struct DeviceZ {
  using Mem = typename Space::memory_space;
  Kokkos::View<KC**, Kokkos::LayoutStride, Mem> view;
  Kokkos::View<KC**, Kokkos::LayoutLeft, Mem> left;
  Kokkos::View<KC**, Kokkos::LayoutRight, Mem> right;
  Kokkos::View<KC**, Kokkos::LayoutRight, Mem> parent;
  Layout layout = Layout::Left;

  template <class F>
  auto visit(F&& f) const {
    if (layout == Layout::Left) return f(left);
    if (layout == Layout::Right) return f(right);
    return f(view);
  }

  DeviceZ(const HostZ& h, Layout l) : layout(l) {
    const std::int64_t rows = h.rows, cols = h.cols;
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
    copy(h, true);
  }

  /// Host <-> device through a contiguous column-major buffer.
  void copy(HostZ& h, bool to_device) const { copy_impl(h, to_device); }
  void copy(const HostZ& h, bool to_device) const { copy_impl(const_cast<HostZ&>(h), to_device); }

  HostZ to_host() const {
    HostZ h;
    h.rows = view.extent(0);
    h.cols = view.extent(1);
    h.values.resize(static_cast<std::size_t>(h.rows * h.cols));
    copy(h, false);
    return h;
  }

  // (public: CUDA's extended lambdas may not live in private member functions)
  void copy_impl(HostZ& h, bool to_device) const {
    const std::int64_t rows = h.rows, cols = h.cols;
    Kokkos::View<KC**, Kokkos::LayoutLeft, Mem> tmp("tmp", rows, cols);
    Kokkos::View<KC**, Kokkos::LayoutLeft, Kokkos::HostSpace> host(
        reinterpret_cast<KC*>(h.values.data()), rows, cols);
    if (to_device) Kokkos::deep_copy(tmp, host);
    const auto v = view;
    Kokkos::parallel_for(
        "test::zcopy",
        Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(Space(), 0, rows * cols),
        KOKKOS_LAMBDA(const std::int64_t idx) {
          const std::int64_t i = idx % rows, j = idx / rows;
          if (to_device) {
            v(i, j) = tmp(i, j);
          } else {
            tmp(i, j) = v(i, j);
          }
        });
    Kokkos::fence();
    if (!to_device) Kokkos::deep_copy(host, tmp);
  }
};

struct ZRun {
  HostZ C;
  ozaki::Report report;
};

/// ozaki::gemm on Space with complex operands in the given layouts; C back on the host.
template <class Space = TestSpace>
ZRun run_z(char ta, char tb, zdouble alpha, const HostZ& A, Layout la, const HostZ& B, Layout lb,
           zdouble beta, const HostZ& C0, Layout lc, const ozaki::Options& options) {
  const DeviceZ<Space> dA(A, la), dB(B, lb), dC(C0, lc);
  const std::string sa(1, ta), sb(1, tb);
  const KC a(alpha.real(), alpha.imag()), b(beta.real(), beta.imag());
  ZRun run;
  run.report = dA.visit([&](const auto& x) {
    return dB.visit([&](const auto& y) {
      return dC.visit([&](const auto& c) {
        return ozaki::gemm(Space(), sa.c_str(), sb.c_str(), a, x, y, b, c, options);
      });
    });
  });
  run.C = dC.to_host();
  return run;
}

inline ZRun run_z(char ta, char tb, zdouble alpha, const HostZ& A, const HostZ& B, zdouble beta,
                  const HostZ& C0, const ozaki::Options& options) {
  return run_z(ta, tb, alpha, A, Layout::Left, B, Layout::Left, beta, C0, Layout::Left, options);
}

}  // namespace ozaki_test
