#pragma once
/// \file backend.hpp
/// The seam between the portable pipeline and the backends.
///
/// The one operation a backend must provide is an INT8 x INT8 -> INT32 GEMM in "TN" form,
/// both operands K-contiguous (the form INT8 tensor cores run fastest): Int8Gemm<ExecSpace>.
/// Dispatch follows Kokkos Kernels: Int8Gemm<ExecSpace> defaults to the portable Kokkos
/// kernel below; a backend specialises Int8GemmBackendAvail<Space> to true and provides
/// Int8Gemm<Space, true>.  EmulationBackend<Space> is the same kind of trait for a vendor's
/// FP64 emulation.  No preprocessor selects a backend: the backends compiled into the library
/// register their specialisations with the build (ozaki_register_backend), which lists them in
/// the generated ozaki/backends.hpp included at the end of this header.

#include <ozaki/config.hpp>
#include <ozaki/impl/common/column_major.hpp>
#include <ozaki/impl/common/kernels.hpp>
#include <ozaki/impl/common/kokkos_compat.hpp>
#include <ozaki/impl/common/views.hpp>
#include <ozaki/impl/cost_model.hpp>
#include <ozaki/impl/quantized/quantized_problem.hpp>
#include <ozaki/test_hooks.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>

namespace ozaki {
namespace Impl {

/// c[m + n*ldc] = sum_{l < length} a[m*lda + l] * b[n*ldb + l], 0 <= m < rows_a, 0 <= n < rows_b.
/// The caller guarantees length <= max_k_block, so no INT32 sum can overflow, and the form
/// INT8 tensor cores need: rows_a, rows_b, length, lda, ldb and ldc multiples of 16, a, b and c
/// 16-byte aligned (the driver pads its storage so; backends may reject anything else).
struct Int8GemmProblem {
  std::int64_t rows_a = 0;
  std::int64_t rows_b = 0;
  std::int64_t length = 0;
  const std::int8_t* a = nullptr;
  std::int64_t lda = 0;
  const std::int8_t* b = nullptr;
  std::int64_t ldb = 0;
  std::int32_t* c = nullptr;
  std::int64_t ldc = 0;
  /// `batch` products of this shape: product i multiplies a + i stride_a by b + i stride_b
  /// into c + i stride_c (scheme II's moduli of one pass: one call where a backend batches).
  std::int64_t batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
};

/// Product i of a batched problem, as a problem of its own.
inline Int8GemmProblem batch_item(const Int8GemmProblem& p, std::int64_t i) {
  Int8GemmProblem q = p;
  q.a = p.a + i * p.stride_a;
  q.b = p.b + i * p.stride_b;
  q.c = p.c + i * p.stride_c;
  q.batch = 1;
  return q;
}

/// The product of two packed row blocks: rows_a (rows_b) rows of `length` int8 each, stored
/// one after another, into a packed column-major rows_a x rows_b result.
inline Int8GemmProblem packed_int8_problem(std::int64_t rows_a, std::int64_t rows_b,
                                           std::int64_t length, const std::int8_t* a,
                                           const std::int8_t* b, std::int32_t* c) {
  Int8GemmProblem p;
  p.rows_a = rows_a;
  p.rows_b = rows_b;
  p.length = length;
  p.a = a;
  p.lda = length;
  p.b = b;
  p.ldb = length;
  p.c = c;
  p.ldc = rows_a;
  return p;
}

/// True where a backend provides Int8Gemm<ExecSpace, true>.
template <class ExecSpace>
struct Int8GemmBackendAvail : std::false_type {};

/// Portable implementation (any Kokkos execution space).
template <class ExecSpace, bool backend_avail = Int8GemmBackendAvail<ExecSpace>::value>
struct Int8Gemm {
  static const char* name() { return "portable"; }
  /// What scheme II pads M, N and K of its products to (a multiple of 16).
  static constexpr std::int64_t padding = 16;
  static void run(const ExecSpace& space, const Int8GemmProblem& p);
  /// Whether run takes a whole batch (Int8GemmProblem::batch); otherwise the caller hands it
  /// the products one by one.
  static constexpr bool batched = false;
  /// Every space runs the portable kernel.
  static bool supported(const ExecSpace&, std::string&) { return true; }
  /// Whether the backend's library is being torn down at exit (then a call is refused).
  static bool torn_down(std::string&) { return false; }
  /// INT8 over FP64 GEMM throughput on host spaces, the ratios measured on the project's
  /// 2-core host (docs/benchmarks.md, "CPUs"): 1.5 through the BLAS's SGEMM, 0.64 for the
  /// plain int8 kernel.  Scheme II needs 14
  /// products for FP64 accuracy, so Algorithm::Auto runs native FP64 GEMM on host spaces, the
  /// fastest method there; an explicit algorithm, or the Report::options of a GPU call, gives
  /// the GPU's bits.
  static double int8_over_fp64_throughput(const ExecSpace&) {
    return is_host_space<ExecSpace>() && compat::host_blas ? 1.5 : 0.64;
  }
  /// FP64 GEMM flops per byte of memory bandwidth, 0 when unknown (Auto's cost model then
  /// counts INT8 products only).
  static double fp64_flops_per_byte(const ExecSpace&) { return 0; }
};

namespace detail {

/// Host kernel: 64 x 64 output tiles, the inner dimension in blocks of 256 so that a tile's
/// operands (2 x 64 x 256 bytes) stay in L1, and 4 x 4 register blocks whose inner loops are
/// plain int8 dot products that compilers vectorise.
template <class ExecSpace>
void int8_gemm_host(const ExecSpace& space, const Int8GemmProblem& p) {
  constexpr std::int64_t tile = 64;
  constexpr std::int64_t depth = 256;
  const std::int64_t tiles_m = (p.rows_a + tile - 1) / tile;
  const std::int64_t tiles_n = (p.rows_b + tile - 1) / tile;
  Kokkos::parallel_for("ozaki::int8_gemm[portable,host]",
                       RangeLaunch<ExecSpace>(space, 0, tiles_m * tiles_n),
                       [=](const std::int64_t t) {
                         const std::int64_t m0 = (t % tiles_m) * tile;
                         const std::int64_t n0 = (t / tiles_m) * tile;
                         const std::int64_t mt = std::min(tile, p.rows_a - m0);
                         const std::int64_t nt = std::min(tile, p.rows_b - n0);
                         std::int32_t acc[tile][tile] = {};  // acc[n][m]
                         for (std::int64_t l0 = 0; l0 < p.length; l0 += depth) {
                           const std::int64_t lt = std::min(depth, p.length - l0);
                           for (std::int64_t j = 0; j < nt; ++j) {
                             const std::int8_t* bj = p.b + (n0 + j) * p.ldb + l0;
                             for (std::int64_t i = 0; i < mt; ++i) {
                               const std::int8_t* ai = p.a + (m0 + i) * p.lda + l0;
                               std::int32_t sum = 0;
                               for (std::int64_t l = 0; l < lt; ++l)
                                 sum += std::int32_t(ai[l]) * std::int32_t(bj[l]);
                               acc[j][i] += sum;
                             }
                           }
                         }
                         for (std::int64_t j = 0; j < nt; ++j)
                           for (std::int64_t i = 0; i < mt; ++i)
                             p.c[(m0 + i) + (n0 + j) * p.ldc] = acc[j][i];
                       });
}

/// Host spaces with a vendor BLAS: the INT8 product as FP32 GEMMs of at most 1024 terms,
/// exact.  Every product of two int8 values is an integer of magnitude at most 2^14, so every
/// partial sum of at most 1024 of them, in any order and with or without FMA, is an integer
/// of magnitude at most 2^24, which FP32 holds exactly; the INT32 sum of the blocks is exact
/// too (the caller keeps length <= max_k_block).  So the result is bitwise the integer
/// product, whatever the BLAS does inside.  A vendor SGEMM is several times the plain int8
/// kernel's rate on hosts (docs/benchmarks.md, "CPUs").
constexpr std::int64_t fp32_exact_block = 1024;

template <class ExecSpace>
void int8_gemm_host_fp32(const ExecSpace& space, const Int8GemmProblem& p) {
  using Matrix = Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  const std::int64_t M = p.rows_a, N = p.rows_b;
  const std::int64_t block = std::min(fp32_exact_block, p.length);
  // Column l of op^T: a_f(l, m) = a[m lda + l], the K-contiguous rows as columns.
  const Matrix a_f(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ozaki::int8_fp32::a"), block,
                   M);
  const Matrix b_f(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ozaki::int8_fp32::b"), block,
                   N);
  const Matrix c_f(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ozaki::int8_fp32::c"), M, N);
  using Policy = RangeLaunch<ExecSpace>;
  for (std::int64_t l0 = 0; l0 < p.length; l0 += block) {
    const std::int64_t lt = std::min(block, p.length - l0);
    // A last, shorter block is padded with zeros (whole LayoutLeft Views reach the BLAS).
    Kokkos::parallel_for(
        "ozaki::int8_gemm[fp32,operands]", Policy(space, 0, M + N), [=](const std::int64_t r) {
          const bool in_a = r < M;
          const std::int8_t* row = in_a ? p.a + r * p.lda + l0 : p.b + (r - M) * p.ldb + l0;
          float* col = in_a ? &a_f(0, r) : &b_f(0, r - M);  // LayoutLeft: contiguous in l
          for (std::int64_t l = 0; l < lt; ++l) col[l] = static_cast<float>(row[l]);
          for (std::int64_t l = lt; l < block; ++l) col[l] = 0.0f;
        });
    compat::native_gemm(space, "T", "N", 1.0, a_f, b_f, 0.0, c_f);
    const bool first = l0 == 0;
    Kokkos::parallel_for(
        "ozaki::int8_gemm[fp32,accumulate]", Policy(space, 0, N), [=](const std::int64_t n) {
          std::int32_t* c = p.c + n * p.ldc;
          for (std::int64_t m = 0; m < M; ++m) {
            const std::int32_t v = static_cast<std::int32_t>(c_f(m, n));  // exact: |v| <= 2^24
            c[m] = first ? v : c[m] + v;
          }
        });
  }
  space.fence();
}

/// Device-space fallback: one dot product per thread.  Correct anywhere, fast nowhere; spaces
/// that matter have a backend.
template <class ExecSpace>
void int8_gemm_generic(const ExecSpace& space, const Int8GemmProblem& p) {
  const std::int64_t rows_a = p.rows_a;
  const Int8GemmProblem q = p;
  Kokkos::parallel_for(
      "ozaki::int8_gemm[portable,generic]", RangeLaunch<ExecSpace>(space, 0, p.rows_a * p.rows_b),
      KOKKOS_LAMBDA(const std::int64_t idx) {
        const std::int64_t m = idx % rows_a;
        const std::int64_t n = idx / rows_a;
        std::int32_t sum = 0;
        for (std::int64_t l = 0; l < q.length; ++l)
          sum += std::int32_t(q.a[m * q.lda + l]) * std::int32_t(q.b[n * q.ldb + l]);
        q.c[m + n * q.ldc] = sum;
      });
}

}  // namespace detail

template <class ExecSpace, bool backend_avail>
void Int8Gemm<ExecSpace, backend_avail>::run(const ExecSpace& space, const Int8GemmProblem& p) {
  if (p.rows_a == 0 || p.rows_b == 0) return;
  if constexpr (is_host_space<ExecSpace>() && compat::host_blas) {
    detail::int8_gemm_host_fp32(space, p);
  } else if constexpr (is_host_space<ExecSpace>()) {
    detail::int8_gemm_host(space, p);
  } else {
    detail::int8_gemm_generic(space, p);
  }
}

/// A vendor FP64-emulation GEMM (Algorithm::CublasEmulation).  None by default.
template <class ExecSpace>
struct EmulationBackend {
  static constexpr bool available = false;
  static std::size_t workspace_bytes(std::int64_t, std::int64_t, std::int64_t, int) { return 0; }
  static bool run(const ExecSpace&, bool, bool, std::int64_t, std::int64_t, std::int64_t, double,
                  const double*, std::int64_t, const double*, std::int64_t, double, double*,
                  std::int64_t, int, void*, std::size_t, std::string& why_not) {
    why_not = "CublasEmulation needs the CUDA backend (Kokkos::Cuda)";
    return false;
  }
};

/// Native FP64 and complex FP64 GEMM through a vendor BLAS on the instance's own stream
/// (Algorithm::Native and the fallbacks; common/native.hpp).  None by default: native GEMM
/// then goes through KokkosBlas::gemm, which on Kokkos Kernels 3.4 has no execution-space
/// overload and is fenced on both sides.  A backend that has one specialises this with
/// `available = true`, `name()` and
/// `static void run(const ExecSpace&, const ColumnMajorProduct<T>&, T alpha, T beta)` for T =
/// double and Kokkos::complex<double>, operations as BLAS characters allow (has_char()).
template <class ExecSpace>
struct NativeBackend {
  static constexpr bool available = false;
};

/// Whether the instance's stream is being captured into a graph (CUDA graphs): then nothing may
/// allocate, fence or read device data on the host, so a call runs native FP64 GEMM on the
/// stream (dispatch.hpp).  Host spaces have no capture; a backend with streams specialises
/// this with `static bool active(const ExecSpace&)`.
template <class ExecSpace>
struct StreamCapture {
  static bool active(const ExecSpace&) { return false; }
};

/// Whether the call's stream is being captured into a graph (StreamCapture), or on a host
/// space whether the tests emulate that (Experimental::TestHooks::emulate_capture).
template <class ExecSpace>
bool captured(const ExecSpace& space) {
  if constexpr (is_host_space<ExecSpace>()) {
    return Experimental::test_hooks().emulate_capture;
  } else {
    return StreamCapture<ExecSpace>::active(space);
  }
}

/// Scheme II's products of one pass reduced by the backend itself: `p` is a pass (batch =
/// L products of inner length p.length <= max_k_block, product l of block l of interleaved
/// operands: stride_a = stride_b = length, lda = ldb = L length; p.c unused), and `tiles`
/// receives P_l mod crt_moduli[l] as residue tiles (crt/residue_tiles.hpp: 1 byte per entry
/// and modulus where the INT32 products take 4).  A backend that has such a kernel
/// specialises this with `available = true`,
/// `static bool supported(const ExecSpace&, const Int8GemmProblem&, std::string& why_not)` and
/// `static void run(const ExecSpace&, const Int8GemmProblem&, std::int8_t* tiles)`; elsewhere
/// the reconstruction reduces the INT32 products.  The same bits either way (exact integers).
template <class ExecSpace>
struct ResidueGemmBackend {
  static constexpr bool available = false;
};

/// A kernel that runs a QuantizedGemmProblem (impl/quantized/quantized_problem.hpp) whole.  A
/// backend that has one specialises this with `available = true`, `static const char* name()`,
/// `static bool supported(const ExecSpace&, const QuantizedGemmProblem&, std::string& why_not)` and
/// `static void run(const ExecSpace&, const QuantizedGemmProblem&)`;
/// elsewhere, or where it is not supported, the INT8 GEMM's INT32 products go through the
/// portable epilogue (ozaki/impl/quantized/w8a8.hpp).
template <class ExecSpace>
struct FusedQuantizedGemmBackend {
  static constexpr bool available = false;
};

/// FP8 e4m3 GEMM with block scales (ozaki/fp8.hpp) as a vendor library runs it, on operands
/// already in its form: D(m, n) = sum over 128-column blocks kb of w_scales(n / 128, kb)
/// a_scales(m, kb) sum_{k in kb} W(n, k) A(m, k), with W (N x K) and A (M x K) rows
/// K-contiguous (ldw, lda bytes; K a multiple of 16); a_scales stored kb-major
/// (a_scales[kb * lda_scales + m], lda_scales a multiple of 4), w_scales n-block-major
/// (w_scales[nb * ldw_scales + kb], ldw_scales a multiple of 4); D of float or bfloat16, at
/// d[m ldd + n] (d_row_major) or d[m + n ldd].
struct Fp8GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  const std::uint8_t* a = nullptr;
  std::int64_t lda = 0;
  const std::uint8_t* w = nullptr;
  std::int64_t ldw = 0;
  const float* a_scales = nullptr;
  std::int64_t lda_scales = 0;
  const float* w_scales = nullptr;
  std::int64_t ldw_scales = 0;
  void* d = nullptr;
  std::int64_t ldd = 0;
  bool d_row_major = true;
  bool d_bfloat16 = true;  // else float
};

/// The orientations of D a vendor's FP8 GEMM writes (Fp8GemmProblem::d_row_major true: rows).
struct Fp8Forms {
  bool rows = false, columns = false;
};

/// A vendor's FP8 block-scaled GEMM.  A backend that has one specialises this with
/// `available = true`, `static const char* name()`,
/// `static bool supported(const ExecSpace&, std::string& why_not)`,
/// `static Fp8Forms forms(const ExecSpace&)`, `static bool ready(const ExecSpace&)` (whether a
/// call may run during a graph capture, having nothing left to create) and
/// `static void run(const ExecSpace&, const Fp8GemmProblem&)`; elsewhere the portable kernel
/// computes the oracle's result (ozaki/impl/quantized/fp8.hpp).
template <class ExecSpace>
struct Fp8GemmBackend {
  static constexpr bool available = false;
};

/// The INT8 product `whole` (inner length a multiple of 16; each of its `batch` products) as
/// INT8 GEMMs of at most `block` terms each, so that no INT32 sum can overflow: chunk c
/// multiplies columns [c block, (c+1) block) of both operands into whole.c + c * c_stride.  A
/// backend that batches gets each chunk's products in one call.  Returns the products
/// multiplied (batch times chunks).
template <class ExecSpace>
int int8_gemm_in_k_chunks(const ExecSpace& space, const Int8GemmProblem& whole, std::int64_t block,
                          std::int64_t c_stride) {
  int chunks = 0;
  for (std::int64_t offset = 0; offset < whole.length; offset += block, ++chunks) {
    Int8GemmProblem p = whole;
    p.length = std::min(block, whole.length - offset);
    p.a = whole.a + offset;
    p.b = whole.b + offset;
    p.c = whole.c + chunks * c_stride;
    if constexpr (Int8Gemm<ExecSpace>::batched) {
      Int8Gemm<ExecSpace>::run(space, p);
    } else {
      for (std::int64_t i = 0; i < p.batch; ++i) Int8Gemm<ExecSpace>::run(space, batch_item(p, i));
    }
  }
  return static_cast<int>(chunks * whole.batch);
}

/// What identifies an execution space instance's library scratch (library_scratch.hpp), and
/// whether work enqueued on the instance runs in order (a stream).  Host spaces run a call to
/// completion on the calling thread, so the calling thread identifies it; a backend whose
/// instances are streams specialises this (backends/cuda: device and stream).  A device space
/// without a specialisation gets a fence at the end of each call that used library scratch.
struct ScratchKeyValue {
  int device = 0;
  std::uintptr_t stream = 0;
  std::thread::id thread;
  bool operator<(const ScratchKeyValue& o) const {
    return std::tie(device, stream, thread) < std::tie(o.device, o.stream, o.thread);
  }
};

template <class ExecSpace>
struct ScratchKey {
  static constexpr bool stream_ordered = false;
  static ScratchKeyValue of(const ExecSpace&) { return {0, 0, std::this_thread::get_id()}; }
};

/// Held for the whole of one call: calls on one execution-space instance take turns.  Kokkos
/// keeps per-instance state that two host threads enqueueing on the same instance at once
/// would share (CUDA: each instance's reduction scratch; the host spaces of Kokkos 3.4: one
/// set of reduction and team buffers for all threads, so there all calls on the space take
/// turns).  Calls on different device instances run concurrently.  Never destroyed, so that
/// calls made while static destructors run still find it.
template <class ExecSpace>
std::unique_lock<std::mutex> instance_turn(const ExecSpace& space) {
  struct Turns {
    std::mutex mutex;
    std::map<ScratchKeyValue, std::unique_ptr<std::mutex>> of;  // never erased
  };
  static Turns* const turns = new Turns;
  ScratchKeyValue key{};
  if constexpr (!is_host_space<ExecSpace>()) key = ScratchKey<ExecSpace>::of(space);
  std::mutex* turn = nullptr;
  {
    std::lock_guard<std::mutex> lock(turns->mutex);
    std::unique_ptr<std::mutex>& m = turns->of[key];
    if (!m) m = std::make_unique<std::mutex>();
    turn = m.get();
  }
  return std::unique_lock<std::mutex>(*turn);
}

/// A second instance of the execution space, ordered with the caller's by events, on which a
/// pipeline runs memory-bound work while the caller's instance runs INT8 products
/// (backends/cuda: a stream of the library's own per caller's stream).  None by default:
/// pipelines then run everything on the caller's instance, in order.
///
/// A backend that has one specialises this with `available = true`, `slots` (events per
/// lease) and `static Lease lease(const ExecSpace& main)`, where a Lease holds the side
/// instance for one call and offers `side()`, `record(slot, on)` (mark the work enqueued on
/// `on` so far) and `wait(waiter, slot)` (later work on `waiter` waits for that mark).
template <class ExecSpace>
struct SideInstance {
  static constexpr bool available = false;
};

struct CrtCaptureConstants;

/// A branch decided on the device, for a call on a stream being captured into a graph
/// (crt/captured.hpp): stream-ordered scratch, two branches made beforehand, and a verdict
/// (crt_capture_verdict) on summary partials that the device evaluates at every replay.  Used
/// as
///   open(bytes, why)       scratch of `bytes` for the call (false, with why: nothing done);
///   scratch()              its address;
///   make(i, work, why)     branch i (0: the verdict kept the promise, 1: it did not) is what
///                          work(on) enqueues on the instance `on`;
///   abandon()              after a failed make: releases what open and make took;
///   fork()                 the instance the work before the verdict runs on, ordered after
///                          everything enqueued on the caller's instance;
///   decide(c, partials, teams)   the verdict on summary_maxima of `partials` and the branch
///                          it picks, both in stream order, then the caller's instance after;
///   close()                releases the scratch in stream order;
/// and static prepare(space), called by every eager INT8 call that allows graph products
/// (Options::experimental.graph_products): what the branch needs that cannot be made while a
/// stream is being captured.
/// This default runs on the host: decide waits for the space, evaluates the verdict and runs
/// the branch at once (the tests emulate a captured call on host spaces with it:
/// ozaki::Experimental::TestHooks::emulate_capture).  backends/cuda specialises it with CUDA
/// graphs' conditional nodes.
template <class ExecSpace>
class DeviceBranch {
 public:
  using Work = std::function<void(const ExecSpace&)>;
  /// What a branch on the device needs that cannot be made during a capture, made by every
  /// eager INT8 call that allows graph products (nothing here).
  static void prepare(const ExecSpace&) {}
  explicit DeviceBranch(const ExecSpace& space) : space_(space) {}
  bool open(std::size_t bytes, std::string&) {
    memory_ = Kokkos::View<unsigned char*, typename ExecSpace::memory_space>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ozaki::captured_scratch"), bytes);
    return true;
  }
  unsigned char* scratch() const { return memory_.data(); }
  template <class F>
  bool make(int which, const F& work, std::string&) {
    branches_[which] = work;
    return true;
  }
  void abandon() { close(); }
  ExecSpace fork() const { return space_; }
  void decide(const CrtCaptureConstants& c, const double* partials, int teams);  // captured.hpp
  void close() { memory_ = {}; }

 private:
  ExecSpace space_;
  Kokkos::View<unsigned char*, typename ExecSpace::memory_space> memory_;
  Work branches_[2];
};

/// FP32 GEMM (SGEMM) over FP64 GEMM throughput: twice on host spaces (twice the SIMD lanes);
/// below 1 on GPUs with FP64 tensor cores, where SGEMM runs on the FP32 pipes (sm_90's rates
/// are in docs/benchmarks.md, "FP32 anchors").
template <class ExecSpace>
constexpr double fp32_over_fp64_throughput() {
  return is_host_space<ExecSpace>() ? 2.0 : 0.9;
}

/// The rates Auto's cost models need, as the backend of this space reports them.
template <class ExecSpace>
DeviceRates device_rates(const ExecSpace& space) {
  return {Int8Gemm<ExecSpace>::int8_over_fp64_throughput(space),
          Int8Gemm<ExecSpace>::fp64_flops_per_byte(space), fp32_over_fp64_throughput<ExecSpace>()};
}

}  // namespace Impl
}  // namespace ozaki

// The backends this build holds specialise the traits above (generated by CMake from what
// each backend registers: ozaki_register_backend), so that every translation unit sees the
// same dispatch.
#include <ozaki/backends.hpp>
