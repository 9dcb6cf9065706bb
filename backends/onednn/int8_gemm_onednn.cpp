// INT8 products through oneDNN (see ozaki/onednn/int8_gemm_onednn.hpp).
#include <ozaki/onednn/int8_gemm_onednn.hpp>

#include <ozaki/errors.hpp>
#include <ozaki/test_hooks.hpp>

#include <oneapi/dnnl/dnnl.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

namespace ozaki {
namespace Impl {
namespace onednn {

namespace {

/// Whether the instruction set oneDNN dispatches to has an INT32-accumulating u8 x s8 dot
/// product: AVX-512 VNNI (and AMX, whose mask contains it) or AVX2 VNNI.  dnnl_cpu_isa_t
/// values are nested bit masks.
bool has_int32_dot_product(unsigned isa) {
  const unsigned vnni512 = dnnl_cpu_isa_avx512_core_vnni;
  const unsigned vnni256 = dnnl_cpu_isa_avx2_vnni;
  return (isa & vnni512) == vnni512 || (isa & vnni256) == vnni256;
}

/// Set by an exit handler registered right after the first oneDNN call: oneDNN keeps its
/// JIT-compiled kernels in static objects made during that call, which the exit sequence
/// destroys after this handler runs (handlers run in reverse order of registration, with the
/// static destructors).  A product asked for after that (a call from another exit handler or
/// a static destructor, which host spaces support) takes the portable kernel: oneDNN's code
/// would be freed by then (the exit test makes such calls).
std::atomic<bool> exiting{false};

void note_used() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit([] { exiting.store(true); }); });
}

}  // namespace

bool usable_now() { return exact_int8_here() && !exiting.load(); }

bool exact_int8_here() {
  static const bool exact =
      has_int32_dot_product(static_cast<unsigned>(dnnl_get_effective_cpu_isa()));
  return exact && !Experimental::test_hooks().onednn_off;
}

std::string instruction_set() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

void int8_gemm(const Int8GemmProblem& p) {
  // oneDNN's GEMM is row-major.  Our column-major rows_a x rows_b result is row-major
  // rows_b x rows_a: C^T = B A^T with B's rows (rows_b x length, ldb) and A's rows
  // (rows_a x length, lda) both stored K-contiguous, that is row-major.
  const std::int32_t no_offset = 0;
  const dnnl_status_t status =
      dnnl_gemm_s8s8s32('N', 'T', 'F', p.rows_b, p.rows_a, p.length, 1.0f, p.b, p.ldb, 0, p.a,
                        p.lda, 0, 0.0f, p.c, p.ldc, &no_offset);
  note_used();
  if (status != dnnl_success) {
    throw BackendError("dnnl_gemm_s8s8s32 failed with status " + std::to_string(status) + " (" +
                       std::to_string(p.rows_a) + " x " + std::to_string(p.rows_b) + " x " +
                       std::to_string(p.length) + ")");
  }
}

}  // namespace onednn
}  // namespace Impl
}  // namespace ozaki
