// GoogleTest main that brings Kokkos up and down around the tests, with crash reports
// (crash_report.cpp), and the library's test hooks set from the environment
// (hooks_from_environment.hpp).
#include "crash_report.hpp"
#include "hooks_from_environment.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

int main(int argc, char* argv[]) {
  ozaki_test::install_crash_report();
  ozaki_test::set_test_hooks_from_environment();
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
