// GoogleTest main that brings Kokkos up and down around the tests, with crash reports
// (crash_report.cpp).
#include "crash_report.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

int main(int argc, char* argv[]) {
  ozaki_test::install_crash_report();
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
