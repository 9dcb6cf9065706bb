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

/// A complex matrix on the memory space of Space in the given layout (DeviceOf), with the host
/// values copied in.
template <class Space>
struct DeviceZ : DeviceOf<KC, Space> {
  DeviceZ(const HostZ& h, Layout l)
      : DeviceOf<KC, Space>(reinterpret_cast<const KC*>(h.values.data()), h.rows, h.cols, l) {}

  HostZ to_host() const {
    HostZ h;
    h.rows = this->view.extent(0);
    h.cols = this->view.extent(1);
    h.values.resize(static_cast<std::size_t>(h.rows * h.cols));
    this->copy(reinterpret_cast<KC*>(h.values.data()), false);
    return h;
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
