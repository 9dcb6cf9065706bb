// A crash prints where it happened (the GPU machine has no debugger): the faulting address,
// the instruction pointer and the object and symbol that hold it, then the stack; the process
// then ends as the signal would.  The handler runs on its own stack, so that a stack overflow
// is reported too.  Used by the GoogleTest main and by the tests with their own main.
#include "crash_report.hpp"

#include <dlfcn.h>
#include <execinfo.h>
#include <ucontext.h>
#include <unistd.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace {

void describe(const char* what, void* address) {
  Dl_info info{};
  char line[512];
  if (address != nullptr && dladdr(address, &info) != 0) {
    std::snprintf(line, sizeof line, "%s %p in %s (%s + %#lx)\n", what, address,
                  info.dli_fname ? info.dli_fname : "?", info.dli_sname ? info.dli_sname : "?",
                  static_cast<unsigned long>(
                      static_cast<char*>(address) -
                      static_cast<char*>(info.dli_saddr ? info.dli_saddr : info.dli_fbase)));
  } else {
    std::snprintf(line, sizeof line, "%s %p\n", what, address);
  }
  (void)!write(STDERR_FILENO, line, std::strlen(line));
}

void report_crash(int signal_number, siginfo_t* info, void* context) {
  const char header[] = "\n*** fatal signal\n";
  (void)!write(STDERR_FILENO, header, sizeof header - 1);
  describe("faulting address", info->si_addr);
#if defined(__x86_64__)
  const auto* uc = static_cast<ucontext_t*>(context);
  describe("instruction", reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]));
  // The caller of a call through a bad pointer: the return address on top of the stack.
  const auto* sp = reinterpret_cast<void* const*>(uc->uc_mcontext.gregs[REG_RSP]);
  if (sp != nullptr) describe("return address on the stack", *sp);
#else
  (void)context;
#endif
  void* frames[64];
  const int count = backtrace(frames, 64);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

namespace ozaki_test {

void install_crash_report() {
  static char alternate_stack[1 << 16];
  stack_t ss{};
  ss.ss_sp = alternate_stack;
  ss.ss_size = sizeof alternate_stack;
  sigaltstack(&ss, nullptr);
  struct sigaction action {};
  action.sa_sigaction = report_crash;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) sigaction(s, &action, nullptr);
}

}  // namespace ozaki_test
