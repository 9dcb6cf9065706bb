// GoogleTest main that brings Kokkos up and down around the tests.  A crash prints the stack
// (the GPU machine has no debugger), then ends the process as the signal would.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <csignal>
#include <execinfo.h>
#include <unistd.h>

namespace {

void print_stack_and_die(int signal_number) {
  void* frames[64];
  const int count = backtrace(frames, 64);
  const char message[] = "\n*** fatal signal; stack:\n";
  (void)!write(STDERR_FILENO, message, sizeof message - 1);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

int main(int argc, char* argv[]) {
  std::signal(SIGSEGV, print_stack_and_die);
  std::signal(SIGBUS, print_stack_and_die);
  std::signal(SIGFPE, print_stack_and_die);
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
