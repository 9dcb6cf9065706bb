// libozaki_cublas.so: cuBLAS's GEMM entry points, answered by ozaki::gemm where that is
// faster at FP64-equivalent (or, with OZAKI_CUBLAS_FP32=1, FP32) accuracy and passed to the real
// cuBLAS otherwise (double and double complex: cublasDgemm_v2, cublasZgemm_v2, cublasGemmEx,
// their strided batches, their batches of pointer arrays, cublasDgemmGroupedBatched; float and
// float complex; cublasLtMatmul in those types, without an epilogue or with a bias), for
// programs that were not written for ozaki (LD_PRELOAD, or linked ahead of libcublas).  A
// batched or grouped call is its products, each one a GEMM of its own.
//
// What a call keeps of the caller's cuBLAS state: the handle's stream (the Kokkos::Cuda
// instance the call runs on), its pointer mode (alpha and beta read from the device where it
// says so), leading dimensions (strided Views), transposes, beta, and the current device.
// Everything else of the handle (math mode, workspace, atomics) is cuBLAS's own, used only on
// the calls that pass through.  A cublasLtMatmul call brings its stream and its descriptors:
// what ozaki cannot answer exactly (lt_matmul_plan) passes through whole.
//
// This library carries its own copy of Kokkos, hidden by its version script: it initialises
// that copy on the first call it takes (on the current device) and finalises it at exit.  A
// Kokkos the program owns is a different copy, never touched.

#include "../device_cache_config.hpp"
#include "config.hpp"
#include "real_cublas.hpp"

#include <ozaki/ozaki.hpp>

#include <ozaki/impl/common/kernels.hpp>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#define OZAKI_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))

namespace ozaki_cublas {
namespace {

/// > 0 while this thread is inside ozaki: ozaki's own cuBLAS calls (its native path, and its
/// INT8 products through cublasGemmEx) reach these same entry points and must go straight to
/// cuBLAS.
thread_local int inside_ozaki = 0;

struct Guard {
  Guard() { ++inside_ozaki; }
  ~Guard() { --inside_ozaki; }
};

/// > 0 while this thread is in a real cuBLAS call made for the caller (a pass-through, or the
/// caller's own call as ozaki's native GEMM): libcublas calls cuBLASLt through cuBLASLt's
/// exported cublasLtMatmul, which this library's definition interposes, and such calls are
/// cuBLAS's own, to go straight to cuBLASLt.
thread_local int inside_cublas = 0;

struct InCublas {
  InCublas() { ++inside_cublas; }
  ~InCublas() { --inside_cublas; }
};

/// Why a call passed through to cuBLAS without entering ozaki, on the paths every call may
/// take (counted without a lock: these paths must cost next to nothing).
enum class Passed : int {
  Off,
  InvalidArguments,
  BelowMinimum,
  StreamCapture,
  Fp32Off,
  Tf32,
  LtTypes,
  LtEpilogue,
  LtLayout,
  LtSettings,
  RankKSmall,
  TriangularSlower,
  Count
};

const char* passed_reason(Passed p) {
  static const char* const names[] = {"OZAKI_CUBLAS=off",
                                      "invalid arguments (cuBLAS reports them)",
                                      "below OZAKI_CUBLAS_MIN",
                                      "stream capture",
                                      "FP32 (OZAKI_CUBLAS_FP32 unset)",
                                      "the handle's math mode allows TF32",
                                      "cublasLtMatmul in other types (not FP64 or FP32 "
                                      "throughout: TF32, BF16, FP16, FP8, pedantic, emulated)",
                                      "cublasLtMatmul with an epilogue other than bias",
                                      "cublasLtMatmul on batched, row-major or planar layouts",
                                      "cublasLtMatmul settings ozaki does not answer (scale or "
                                      "amax pointers, vector scalars, SM count target, C and "
                                      "D overlapping in other layouts)",
                                      "syrk or herk below n = k = 8192 (cuBLAS's is "
                                      "faster there; OZAKI_CUBLAS=auto)",
                                      "trsm or ztrmm below m = n = 16384, or dtrmm (cuBLAS's "
                                      "is faster or about as fast; OZAKI_CUBLAS=auto)"};
  return names[static_cast<int>(p)];
}

/// What the summary at exit reports.  The counters of the common paths are atomics; the
/// reasons of the rare ones (ozaki refused a call) and the flops go under the mutex.
struct Tally {
  std::atomic<long> through_ozaki{0}, native{0}, native_by_shape{0};
  std::atomic<long> passed[static_cast<int>(Passed::Count)] = {};
  std::mutex mutex;
  long passed_other = 0;
  double ozaki_flops = 0;
  std::map<std::string, long> reasons;  // why other calls passed through
};

Tally& tally() {
  static Tally* t = new Tally;  // never destroyed: read at exit
  return *t;
}

/// A call that passed, counted as its `products` (a batch counts its products, wherever they go).
void count_pass(Passed why, long products = 1) {
  tally().passed[static_cast<int>(why)].fetch_add(products, std::memory_order_relaxed);
}

void count_pass(const std::string& why, long products = 1) {
  Tally& t = tally();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.passed_other += products;
  t.reasons[why] += products;
}

/// This library's Kokkos, and the Kokkos::Cuda instance of each caller's stream (Kokkos 3.4
/// allocates per instance, so one is made per stream and kept).
class Runtime {
 public:
  static Runtime& get() {
    static Runtime* r = new Runtime;  // never destroyed: exit() finishes it explicitly
    return *r;
  }

  /// Ready to run on `device`, or false with why (Kokkos runs on one device per process).
  bool ready(int device, std::string& why) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) {
      why = "the process is exiting";
      return false;
    }
    if (!Kokkos::is_initialized()) {
      std::string id = "--kokkos-device-id=" + std::to_string(device);
      char name[] = "ozaki_cublas";
      char disable[] = "--kokkos-disable-warnings";
      char* argv[] = {name, &id[0], disable, nullptr};
      int argc = 3;
      const ozaki::Impl::cuda::KeepDeviceCacheConfig program_cache;  // the program's, not Kokkos'
      Kokkos::initialize(argc, argv);
      device_ = device;
      std::atexit(finish);
      if (config().options.experimental.graph_products) make_capture_lane();
    }
    if (device != device_) {
      why = "device " + std::to_string(device) + " (this process's ozaki runs on device " +
            std::to_string(device_) + ")";
      return false;
    }
    return true;
  }

  /// Whether this library's Kokkos already runs on `device` (a captured call may not start it).
  bool started(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    return !finished_ && Kokkos::is_initialized() && device == device_;
  }

  /// This library's own stream for calls captured into graphs, with its Kokkos instance: a
  /// captured call is forked from the caller's stream onto it and joined back (events, which
  /// capture records as edges), because a Kokkos 3.4 instance cannot be made for the caller's
  /// stream during its capture (making one allocates and writes memory outside stream order,
  /// which invalidates the capture).  Made with this library's Kokkos, outside any capture,
  /// unless OZAKI_CUBLAS_GRAPHS=0; one call at a time uses it (its lock).
  struct CaptureLane {
    std::mutex* lock = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t forked = nullptr, joined = nullptr;
    Kokkos::Cuda space;
  };
  std::optional<CaptureLane> capture_lane() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!capture_space_) return std::nullopt;
    return CaptureLane{&capture_lock_, capture_stream_, capture_forked_, capture_joined_,
                       *capture_space_};
  }

  Kokkos::Cuda instance(cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = instances_.find(stream);
    if (found == instances_.end()) {
      const ozaki::Impl::cuda::KeepDeviceCacheConfig program_cache;  // the program's, not Kokkos'
      found = instances_.emplace(stream, stream ? Kokkos::Cuda(stream) : Kokkos::Cuda()).first;
    }
    return found->second;
  }

 private:
  /// At exit: the summary, then this library's Kokkos finalised (registered after the
  /// program's first cuBLAS call, so it runs before cuBLAS's own teardown).
  static void finish();

  void make_capture_lane() {
    if (cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreateWithFlags(&capture_forked_, cudaEventDisableTiming) != cudaSuccess ||
        cudaEventCreateWithFlags(&capture_joined_, cudaEventDisableTiming) != cudaSuccess) {
      cudaGetLastError();  // no lane: captured calls pass through
      return;
    }
    const ozaki::Impl::cuda::KeepDeviceCacheConfig program_cache;  // the program's, not Kokkos'
    capture_space_.emplace(capture_stream_);
  }

  std::mutex mutex_;
  int device_ = -1;
  bool finished_ = false;
  std::map<cudaStream_t, Kokkos::Cuda> instances_;
  std::mutex capture_lock_;
  cudaStream_t capture_stream_ = nullptr;
  cudaEvent_t capture_forked_ = nullptr, capture_joined_ = nullptr;
  std::optional<Kokkos::Cuda> capture_space_;
};

void print_summary() {
  Tally& t = tally();
  std::lock_guard<std::mutex> lock(t.mutex);
  long passed = t.passed_other;
  for (const auto& p : t.passed) passed += p.load();
  const long native = t.native.load() + t.native_by_shape.load();
  const long calls = t.through_ozaki.load() + native + passed;
  if (config().log == 0 || calls == 0) return;
  std::fprintf(stderr,
               "ozaki_cublas: %ld calls (GEMMs, a batched call counting its products, and level-3 "
               "routines), %ld through ozaki's INT8 products (%.3g TFLOP), %ld where Auto chose "
               "native GEMM (%ld from the shape alone), %ld passed through to cuBLAS (%s%s%s)",
               calls, t.through_ozaki.load(), t.ozaki_flops * 1e-12, native,
               t.native_by_shape.load(), passed, real_cublas_path().c_str(),
               real_cublas_path(true).empty() ? "" : ", ", real_cublas_path(true).c_str());
  for (int i = 0; i < static_cast<int>(Passed::Count); ++i) {
    const long n = t.passed[i].load();
    if (n > 0) std::fprintf(stderr, "; %ld: %s", n, passed_reason(static_cast<Passed>(i)));
  }
  for (const auto& kv : t.reasons) std::fprintf(stderr, "; %ld: %s", kv.second, kv.first.c_str());
  std::fprintf(stderr, "\n");
}

void Runtime::finish() {
  print_summary();
  Runtime& r = get();
  std::lock_guard<std::mutex> lock(r.mutex_);
  r.finished_ = true;
  r.instances_.clear();
  r.capture_space_.reset();
  if (Kokkos::is_initialized()) Kokkos::finalize();
}

/// Seconds between two events recorded around a call (waits for the second).
double elapsed(cudaEvent_t start, cudaEvent_t stop) {
  float ms = 0;
  cudaEventSynchronize(stop);
  cudaEventElapsedTime(&ms, start, stop);
  return ms * 1e-3;
}

/// Times a call on `stream` when the per-call log is on.
class CallTimer {
 public:
  explicit CallTimer(cudaStream_t stream) : stream_(stream) {
    if (config().log != 1) return;
    cudaEventCreate(&start_);
    cudaEventCreate(&stop_);
    cudaEventRecord(start_, stream_);
  }
  double seconds() {
    if (config().log != 1) return 0;
    cudaEventRecord(stop_, stream_);
    return elapsed(start_, stop_);
  }
  ~CallTimer() {
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

char op_letter(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? 'N' : op == CUBLAS_OP_T ? 'T' : 'C';
}

/// What differs between the entry points of each element type (double, cuDoubleComplex,
/// float, cuComplex): the real cuBLAS function, ozaki's element type (Kokkos::complex has
/// cuBLAS's complex layout), whether it is complex or FP32, and flops per multiply-add.
template <class T>
struct Scalar;

template <>
struct Scalar<double> {
  using RealGemm = decltype(&cublasDgemm_v2);
  using Element = double;
  static RealGemm real_gemm() {
    static const RealGemm f = real<RealGemm>("cublasDgemm_v2");  // found once
    return f;
  }
  static constexpr bool complex = false, fp32 = false;
  static constexpr double flops = 2;
};

template <>
struct Scalar<cuDoubleComplex> {
  using RealGemm = decltype(&cublasZgemm_v2);
  using Element = Kokkos::complex<double>;
  static RealGemm real_gemm() {
    static const RealGemm f = real<RealGemm>("cublasZgemm_v2");  // found once
    return f;
  }
  static constexpr bool complex = true, fp32 = false;
  static constexpr double flops = 8;
};

template <>
struct Scalar<float> {
  using RealGemm = decltype(&cublasSgemm_v2);
  using Element = float;
  static RealGemm real_gemm() {
    static const RealGemm f = real<RealGemm>("cublasSgemm_v2");  // found once
    return f;
  }
  static constexpr bool complex = false, fp32 = true;
  static constexpr double flops = 2;
};

template <>
struct Scalar<cuComplex> {
  using RealGemm = decltype(&cublasCgemm_v2);
  using Element = Kokkos::complex<float>;
  static RealGemm real_gemm() {
    static const RealGemm f = real<RealGemm>("cublasCgemm_v2");  // found once
    return f;
  }
  static constexpr bool complex = true, fp32 = true;
  static constexpr double flops = 8;
};

static_assert(sizeof(cuDoubleComplex) == sizeof(Kokkos::complex<double>) &&
                  alignof(cuDoubleComplex) == alignof(Kokkos::complex<double>),
              "cuDoubleComplex and Kokkos::complex<double> must share a layout");
static_assert(sizeof(cuComplex) == sizeof(Kokkos::complex<float>) &&
                  alignof(cuComplex) == alignof(Kokkos::complex<float>),
              "cuComplex and Kokkos::complex<float> must share a layout");

/// A cublasLtMatmul call as the caller made it, D = alpha op(A) op(B) + beta C (+ bias), and
/// what its descriptors say beyond the Gemm it becomes (whose C is D).  `pass` is the caller's
/// call on the real cuBLASLt, unchanged: for the calls ozaki does not answer, and as the native
/// GEMM of those it does.
struct LtCall {
  cublasLtHandle_t handle;
  cublasLtMatmulDesc_t desc;
  const void* alpha;
  const void* A;
  cublasLtMatrixLayout_t a_layout;
  const void* B;
  cublasLtMatrixLayout_t b_layout;
  const void* beta;
  const void* C;
  cublasLtMatrixLayout_t c_layout;
  void* D;
  cublasLtMatrixLayout_t d_layout;
  const cublasLtMatmulAlgo_t* algo;
  void* workspace;
  size_t workspace_bytes;
  cudaStream_t stream;
  // From the descriptors (lt_matmul_plan):
  bool device_scalars = false;  // CUBLASLT_POINTER_MODE_DEVICE
  std::int64_t ldc = 0;         // C's leading dimension (D's is the Gemm's)
  const void* bias = nullptr;   // CUBLASLT_EPILOGUE_BIAS: one value per row of D, D's type

  static decltype(&cublasLtMatmul) real_matmul() {
    static const auto f = real<decltype(&cublasLtMatmul)>("cublasLtMatmul");  // found once
    return f;
  }
  cublasStatus_t pass() const {
    const InCublas in_cublas;
    return real_matmul()(handle, desc, alpha, A, a_layout, B, b_layout, beta, C, c_layout, D,
                         d_layout, algo, workspace, workspace_bytes, stream);
  }
};

/// One GEMM (double, double complex, float or float complex) in cuBLAS's column-major terms.
template <class T>
struct Gemm {
  const char* entry;  // the cuBLAS function called, for the log
  cublasHandle_t handle;
  cublasOperation_t transa, transb;
  int m, n, k;
  const T *alpha, *A;
  int lda;
  const T* B;
  int ldb;
  const T* beta;
  T* C;
  int ldc;
  const LtCall* lt = nullptr;  // a cublasLtMatmul call (handle is null then)

  /// The stored shapes of A (rows_a x cols_a) and B: op(A) is m x k, op(B) is k x n.
  int rows_a() const { return transa == CUBLAS_OP_N ? m : k; }
  int cols_a() const { return transa == CUBLAS_OP_N ? k : m; }
  int rows_b() const { return transb == CUBLAS_OP_N ? k : n; }
  int cols_b() const { return transb == CUBLAS_OP_N ? n : k; }
};

void log_line(const char* entry, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
              int k, const std::string& what, double seconds) {
  if (config().log != 1) return;
  std::fprintf(stderr, "ozaki_cublas: %s %c%c %dx%dx%d -> %s, %.3f ms\n", entry, op_letter(transa),
               op_letter(transb), m, n, k, what.c_str(), seconds * 1e3);
}

template <class T>
void log_call(const Gemm<T>& g, const std::string& what, double seconds) {
  log_line(g.entry, g.transa, g.transb, g.m, g.n, g.k, what, seconds);
}

/// Why this call cannot or should not go through ozaki (false: it can).
template <class T>
bool ineligible(const Gemm<T>& g, Passed& why) {
  const Config& c = config();
  if (c.mode == Mode::Off) {
    why = Passed::Off;
    return true;
  }
  const int rows_a = g.rows_a(), rows_b = g.rows_b();
  const auto operation = [](cublasOperation_t op) {
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
  };
  // cuBLAS reports its own argument errors: such calls pass through unchanged.
  if (!operation(g.transa) || !operation(g.transb) || g.m < 0 || g.n < 0 || g.k < 0 ||
      g.lda < (rows_a > 1 ? rows_a : 1) || g.ldb < (rows_b > 1 ? rows_b : 1) ||
      g.ldc < (g.m > 1 ? g.m : 1)) {
    why = Passed::InvalidArguments;
    return true;
  }
  const int smallest = g.m < g.n ? (g.m < g.k ? g.m : g.k) : (g.n < g.k ? g.n : g.k);
  if (smallest < c.min_dimension) {
    why = Passed::BelowMinimum;
    return true;
  }
  if constexpr (Scalar<T>::fp32) {
    if (!c.fp32) {
      why = Passed::Fp32Off;
      return true;
    }
    // A handle that allows TF32 asked for less than FP32 accuracy: its call is cuBLAS's.  (A
    // cublasLtMatmul call says so with its compute type, lt_matmul_plan.)
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    if (g.lt == nullptr) real<decltype(&cublasGetMathMode)>("cublasGetMathMode")(g.handle, &math);
    if ((static_cast<int>(math) & static_cast<int>(CUBLAS_TF32_TENSOR_OP_MATH)) != 0) {
      why = Passed::Tf32;
      return true;
    }
  }
  return false;
}

template <class T>
using ConstMatrix = Kokkos::View<const typename Scalar<T>::Element**, Kokkos::LayoutStride,
                                 Kokkos::CudaSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using Matrix = Kokkos::View<typename Scalar<T>::Element**, Kokkos::LayoutStride, Kokkos::CudaSpace,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// The caller's call, unchanged, on the real cuBLAS (or cuBLASLt).
template <class T>
cublasStatus_t pass_through(typename Scalar<T>::RealGemm real_gemm, const Gemm<T>& g) {
  if (g.lt != nullptr) return g.lt->pass();
  const InCublas in_cublas;
  return real_gemm(g.handle, g.transa, g.transb, g.m, g.n, g.k, g.alpha, g.A, g.lda, g.B, g.ldb,
                   g.beta, g.C, g.ldc);
}

/// Whether the handle's scalars are device pointers (its pointer mode).
bool device_pointer_mode(cublasHandle_t handle) {
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
  real<decltype(&cublasGetPointerMode_v2)>("cublasGetPointerMode_v2")(handle, &mode);
  return mode == CUBLAS_POINTER_MODE_DEVICE;
}

/// Whether alpha and beta are device pointers (the handle's pointer mode, or the cublasLtMatmul
/// descriptor's).
template <class T>
bool scalars_on_device(const Gemm<T>& g) {
  if (g.lt != nullptr) return g.lt->device_scalars;
  return device_pointer_mode(g.handle);
}

/// A cuBLAS operation as ozaki's transpose character: conjugation is the identity on real
/// matrices, and kept for complex ones.
template <class T>
char trans_char(cublasOperation_t op) {
  if (op == CUBLAS_OP_N) return 'N';
  return !Scalar<T>::complex || op == CUBLAS_OP_T ? 'T' : 'C';
}

template <class T>
typename Scalar<T>::Element element(const T& x) {
  if constexpr (Scalar<T>::complex) {
    return typename Scalar<T>::Element(x.x, x.y);
  } else {
    return x;
  }
}

/// alpha and beta on the host; where they are device pointers, read in stream order (earlier
/// work on this stream may write them).  False where they cannot be read.
template <class T>
bool read_scalars(const Gemm<T>& g, cudaStream_t stream, T& alpha, T& beta) {
  if (!scalars_on_device(g)) {
    alpha = *g.alpha;
    beta = *g.beta;
    return true;
  }
  return cudaMemcpyAsync(&alpha, g.alpha, sizeof alpha, cudaMemcpyDeviceToHost, stream) ==
             cudaSuccess &&
         cudaMemcpyAsync(&beta, g.beta, sizeof beta, cudaMemcpyDeviceToHost, stream) ==
             cudaSuccess &&
         cudaStreamSynchronize(stream) == cudaSuccess;
}

/// A cublasLtMatmul call whose D is not its C, with beta != 0: D = C first, in stream order on
/// `stream`, because ozaki computes C = alpha op(A) op(B) + beta C in place (on D).  C itself
/// stays untouched, so the caller's own call (ozaki's native GEMM, or the pass-through after a
/// refusal) still finds it.  lt_matmul_plan took only a D that does not overlap C.
template <class T>
bool copy_c_into_d(const Gemm<T>& g, const T& beta, cudaStream_t stream, std::string& what) {
  using Element = typename Scalar<T>::Element;
  if (g.lt == nullptr || g.lt->C == g.lt->D || element(beta) == Element(0)) return true;
  const size_t bytes = sizeof(T);
  if (g.lt->C == nullptr ||
      cudaMemcpy2DAsync(g.C, g.ldc * bytes, g.lt->C, g.lt->ldc * bytes, g.m * bytes, g.n,
                        cudaMemcpyDeviceToDevice, stream) != cudaSuccess) {
    cudaGetLastError();  // the copy's error is not the caller's: the call passes through
    what = "C could not be copied into D";
    return false;
  }
  return true;
}

/// D(i, j) += bias(i): CUBLASLT_EPILOGUE_BIAS, added in D's precision to the D that ozaki
/// wrote (alpha op(A) op(B) + beta C, rounded).  One rounding more than the call without a
/// bias, as in cuBLAS's epilogue, which adds the bias to its own alpha op(A) op(B) + beta C in
/// the compute type: D stays within ozaki's bound plus u (|alpha op(A) op(B) + beta C| +
/// |bias|).  Folding the bias into C beforehand would save that rounding where beta = 0, but
/// would change a C that the caller's own call (ozaki's native GEMM) may still read.
template <class E>
struct AddBias {
  Kokkos::View<E**, Kokkos::LayoutStride, Kokkos::CudaSpace,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      D;
  const E* bias;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, const std::int64_t j) const {
    D(i, j) += bias[i];
  }
};

/// AddBias on `space`, after ozaki's kernels in stream order (real types only: a complex bias
/// passes through, lt_matmul_plan).  False where the kernel could not be launched.
template <class T>
bool add_bias(const Kokkos::Cuda& space, const Matrix<T>& D, const void* bias) {
  if constexpr (!Scalar<T>::complex) {
    try {
      ozaki::Impl::grid_for("ozaki_cublas::bias", space, D.extent(0), D.extent(1),
                            AddBias<T>{D, static_cast<const T*>(bias)});
    } catch (const std::exception&) {
      return false;
    }
  }
  return true;
}

/// What ran, for the log ("Int8Crt L=14 x3", "Native", ...).
std::string describe(const ozaki::Report& r) {
  std::string what = ozaki::to_string(r.algorithm);
  if (r.algorithm == ozaki::Algorithm::Int8Crt) what += " L=" + std::to_string(r.moduli);
  if (r.complex_products > 0) what += " x" + std::to_string(r.complex_products);
  if (r.algorithm == ozaki::Algorithm::Int8Slices) what += " S=" + std::to_string(r.slices);
  return what;
}

/// A call (or a batch of `products`) that ozaki ran, in the tally: native where its Report
/// says so, else `flops` through ozaki's INT8 products.
void tally_ozaki_call(const ozaki::Report& r, long products, double flops) {
  Tally& t = tally();
  if (r.algorithm == ozaki::Algorithm::Native) {
    t.native.fetch_add(products, std::memory_order_relaxed);
  } else {
    t.through_ozaki.fetch_add(products, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(t.mutex);
    t.ozaki_flops += flops;
  }
}

/// The instance of `stream` with this library's Kokkos started on the current device if it is
/// not yet; nothing (with why) where there is none.  (No Kokkos::Cuda exists before Kokkos is
/// started: its constructor checks that it is.)
std::optional<Kokkos::Cuda> stream_instance(cudaStream_t stream, std::string& what) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    what = "no current device";
    return std::nullopt;
  }
  Runtime& runtime = Runtime::get();
  if (!runtime.ready(device, what)) return std::nullopt;
  return runtime.instance(stream);
}

/// The call through ozaki::gemm; false (with why) where it could not run there.  C is left
/// untouched whenever it returns false (ozaki's guarantee on exceptions; a cublasLtMatmul D
/// may hold a copy of C, which the caller's call that follows overwrites).  Where ozaki runs
/// native GEMM (Auto's choice, or a fallback), that is the caller's own call on the real cuBLAS
/// (Options::experimental.native_gemm), whose status `status` returns.  `space`: the stream's
/// instance.  `d_holds_c`: a cublasLtMatmul D was given its C already (captured_gemm).
template <class T>
bool run_ozaki_on(const Gemm<T>& g, const Kokkos::Cuda& space, cudaStream_t stream,
                  typename Scalar<T>::RealGemm real_gemm, cublasStatus_t& status, std::string& what,
                  bool d_holds_c = false) {
  using Element = typename Scalar<T>::Element;
  T alpha{}, beta{};
  if (!read_scalars(g, stream, alpha, beta)) {
    what = "alpha or beta unreadable on the device";
    return false;
  }
  if (!d_holds_c && !copy_c_into_d(g, beta, stream, what)) return false;
  const auto* a = reinterpret_cast<const Element*>(g.A);
  const auto* b = reinterpret_cast<const Element*>(g.B);
  auto* c = reinterpret_cast<Element*>(g.C);
  const ConstMatrix<T> A(a, Kokkos::LayoutStride(g.rows_a(), 1, g.cols_a(), g.lda));
  const ConstMatrix<T> B(b, Kokkos::LayoutStride(g.rows_b(), 1, g.cols_b(), g.ldb));
  const Matrix<T> C(c, Kokkos::LayoutStride(g.m, 1, g.n, g.ldc));
  const char ta[2] = {trans_char<T>(g.transa), '\0'};
  const char tb[2] = {trans_char<T>(g.transb), '\0'};
  ozaki::Options options = config().options;
  bool callers_call = false;  // the caller's own call wrote C (D), its epilogue included
  options.experimental.native_gemm = [&] {
    callers_call = true;
    status = pass_through<T>(real_gemm, g);
  };
  try {
    const Guard inside;
    const ozaki::Report r =
        ozaki::gemm(space, ta, tb, element(alpha), A, B, element(beta), C, options);
    what = describe(r);
    if (g.lt != nullptr && g.lt->bias != nullptr && !callers_call) {
      // D holds ozaki's result now: a failed launch is this call's failure, not a refusal.
      if (!add_bias<T>(space, C, g.lt->bias)) status = CUBLAS_STATUS_EXECUTION_FAILED;
      what += " + bias";
    }
    if (!r.reason.empty() && config().log == 1) what += " (" + r.reason + ")";
    tally_ozaki_call(r, 1, Scalar<T>::flops * g.m * g.n * g.k);
    return true;
  } catch (const std::exception& e) {
    what = std::string("ozaki refused: ") + e.what();
    return false;
  }
}

/// run_ozaki_on with this library's Kokkos started on the current device if it is not yet,
/// and the stream's instance.
template <class T>
bool run_ozaki(const Gemm<T>& g, cudaStream_t stream, typename Scalar<T>::RealGemm real_gemm,
               cublasStatus_t& status, std::string& what) {
  const std::optional<Kokkos::Cuda> space = stream_instance(stream, what);
  return space && run_ozaki_on<T>(g, *space, stream, real_gemm, status, what);
}

/// Whether `stream` is being captured into a graph (an active or invalidated capture).
bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();  // the query's error is not the caller's
    return false;
  }
  return status != cudaStreamCaptureStatusNone;
}

/// Auto's choice from the shape alone (ozaki::auto_choice) for the last few shapes this thread
/// asked about: the decision depends on the shape, the element type and the device only, so
/// repeated shapes (a solver's panels, a batch) cost a lookup.
struct ShapeDecisions {
  struct Entry {
    int device = -1, m = 0, n = 0, k = 0;
    int element = 0;  // the element type: 1 for complex, plus 2 for FP32
    bool native = false;
  };
  static constexpr int size = 8;
  Entry entries[size];
  int next = 0;

  const Entry* find(int device, int m, int n, int k, int element) const {
    for (const Entry& e : entries) {
      if (e.device == device && e.m == m && e.n == n && e.k == k && e.element == element) {
        return &e;
      }
    }
    return nullptr;
  }
  void add(const Entry& e) {
    entries[next] = e;
    next = (next + 1) % size;
  }
};

/// Whether Auto runs native FP64 GEMM on this call's shape whatever its data: then the call is
/// the caller's own, passed on without entering ozaki (no host round trip, no scratch, no
/// Kokkos launch).  Only in OZAKI_CUBLAS=auto; false where ozaki cannot tell (it then decides
/// in the call).  `batch`: the products of a strided batch that ozaki takes whole, which it
/// weighs as one plan (ozaki::auto_choice_batched: real products may take scheme II where one
/// alone would not); that answer depends on their count, which the shape cache does not hold.
template <class T>
bool auto_declines(const Gemm<T>& g, cudaStream_t stream, long batch = 1) {
  if (config().mode != Mode::Auto) return false;
  thread_local ShapeDecisions decisions;
  constexpr int element = (Scalar<T>::complex ? 1 : 0) + (Scalar<T>::fp32 ? 2 : 0);
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  // Only real products are weighed as a batch: other batches decide as one product does.
  const long items = std::is_same<typename Scalar<T>::Element, double>::value ? batch : 1;
  const bool cached = items == 1;
  if (const ShapeDecisions::Entry* e =
          cached ? decisions.find(device, g.m, g.n, g.k, element) : nullptr) {
    return e->native;
  }
  std::string why;
  Runtime& runtime = Runtime::get();
  if (!runtime.ready(device, why)) return false;
  bool native = false;
  try {
    native = ozaki::auto_choice_batched<typename Scalar<T>::Element>(
                 runtime.instance(stream), g.m, g.n, g.k, items, config().options) ==
             ozaki::Algorithm::Native;
  } catch (const std::exception&) {
    return false;  // the call itself reports what failed
  }
  if (!cached) return native;
  ShapeDecisions::Entry decided;
  decided.device = device;
  decided.m = g.m;
  decided.n = g.n;
  decided.k = g.k;
  decided.element = element;
  decided.native = native;
  decisions.add(decided);
  return native;
}

/// The handle's stream (cublasGetStream_v2 of the real cuBLAS, found once).
cudaStream_t handle_stream(cublasHandle_t handle) {
  using GetStream = decltype(&cublasGetStream_v2);
  static const GetStream get_stream = real<GetStream>("cublasGetStream_v2");
  cudaStream_t stream = nullptr;
  if (get_stream != nullptr) get_stream(handle, &stream);
  return stream;
}

/// The call's stream: its handle's, or the one a cublasLtMatmul call names.
template <class T>
cudaStream_t stream_of(const Gemm<T>& g) {
  if (g.lt != nullptr) return g.lt->stream;
  return handle_stream(g.handle);
}

/// An FP64 call on a stream being captured into a graph (unless OZAKI_CUBLAS_GRAPHS=0): through
/// ozaki on this library's capture lane (Runtime::capture_lane), forked from the caller's
/// stream and joined back, where ozaki's scheme II then runs inside the graph with its verdict
/// on the device (whose native branch is the library's cublasDgemm or cublasZgemm), or, where ozaki
/// declines the call, the caller's own call on its stream (docs/design.md §7).  Only where nothing
/// on the way needs what capture forbids: the scalars on the host, this library's Kokkos started by
/// an earlier eager call, and FP64 data (real, or complex: Karatsuba inside the graph). Otherwise
/// the caller's own call, untouched.  No timer: its wait is not allowed here.
template <class T>
cublasStatus_t captured_gemm(const Gemm<T>& g, cudaStream_t stream,
                             typename Scalar<T>::RealGemm real_gemm) {
  std::optional<Runtime::CaptureLane> lane;
  if (config().options.experimental.graph_products &&
      (std::is_same<T, double>::value || std::is_same<T, cuDoubleComplex>::value)) {
    int device = 0;
    Runtime& runtime = Runtime::get();
    if (!scalars_on_device(g) && cudaGetDevice(&device) == cudaSuccess && runtime.started(device)) {
      lane = runtime.capture_lane();
    }
  }
  if (!lane) {
    count_pass(Passed::StreamCapture);
    return pass_through<T>(real_gemm, g);
  }
  std::lock_guard<std::mutex> hold(*lane->lock);
  std::string what;
  // A cublasLtMatmul D gets its C on the caller's stream before the fork, so that both the
  // lane and the caller's own call (the native branch taken on the caller's stream) see it.
  if (!copy_c_into_d(g, *g.beta, stream, what) ||
      cudaEventRecord(lane->forked, stream) != cudaSuccess ||
      cudaStreamWaitEvent(lane->stream, lane->forked, 0) != cudaSuccess) {
    cudaGetLastError();
    count_pass(Passed::StreamCapture);
    return pass_through<T>(real_gemm, g);
  }
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  const bool through = run_ozaki_on<T>(g, lane->space, stream, real_gemm, status, what, true);
  // The join: the caller's stream continues after everything the call put on the lane.
  cudaEventRecord(lane->joined, lane->stream);
  cudaStreamWaitEvent(stream, lane->joined, 0);
  if (through) {
    if (config().log == 1) log_call(g, what + " (captured into a graph)", 0);
    return status;
  }
  count_pass(what);
  return pass_through<T>(real_gemm, g);
}

template <class T>
cublasStatus_t gemm(const Gemm<T>& g) {
  using RealGemm = typename Scalar<T>::RealGemm;
  const RealGemm real_gemm = Scalar<T>::real_gemm();
  if (real_gemm == nullptr && g.lt == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (inside_ozaki > 0) return pass_through<T>(real_gemm, g);
  Passed passed = Passed::Count;
  if (ineligible(g, passed)) {
    count_pass(passed);
    if (config().log == 1) log_call(g, std::string("cuBLAS (") + passed_reason(passed) + ")", 0);
    return pass_through<T>(real_gemm, g);
  }
  const cudaStream_t stream = stream_of(g);
  if (capturing(stream)) return captured_gemm<T>(g, stream, real_gemm);
  CallTimer timer(stream);
  if (auto_declines(g, stream)) {
    tally().native_by_shape.fetch_add(1, std::memory_order_relaxed);
    const cublasStatus_t status = pass_through<T>(real_gemm, g);
    if (config().log == 1) log_call(g, "Native (Auto, from the shape)", timer.seconds());
    return status;
  }
  std::string what;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  if (run_ozaki<T>(g, stream, real_gemm, status, what)) {
    log_call(g, what, timer.seconds());
    return status;
  }
  status = pass_through<T>(real_gemm, g);
  count_pass(what);
  log_call(g, "cuBLAS (" + what + ")", timer.seconds());
  return status;
}

/// Whether a batch of `products` products of one shape (`shape`: the first product, or the
/// shape alone, its matrices unread) passes to cuBLAS whole, as the caller's one call: ozaki's
/// own calls, calls ozaki does not take (ineligible), calls on a stream being captured (a
/// batch given by pointer arrays could not read them there), and shapes that Auto declines
/// (cuBLAS's strength for many small products).  Decided from the shape and the handle alone:
/// nothing is read from the device.  Counted as its products; `stream` is the call's stream
/// where it does not pass.
template <class T>
bool batch_passes_whole(const Gemm<T>& shape, long products, cudaStream_t& stream,
                        bool strided = false) {
  if (inside_ozaki > 0 || products < 1) return true;
  Passed passed = Passed::Count;
  if (ineligible(shape, passed)) {
    count_pass(passed, products);
    if (config().log == 1) {
      log_call(shape,
               std::string("cuBLAS (") + passed_reason(passed) + "), the whole batch of " +
                   std::to_string(products),
               0);
    }
    return true;
  }
  stream = stream_of(shape);
  if (capturing(stream)) {
    count_pass(Passed::StreamCapture, products);
    return true;
  }
  if (auto_declines(shape, stream, strided ? products : 1)) {
    tally().native_by_shape.fetch_add(products, std::memory_order_relaxed);
    if (config().log == 1) {
      log_call(shape,
               "Native (Auto, from the shape), the whole batch of " + std::to_string(products), 0);
    }
    return true;
  }
  return false;
}

/// A strided batch of real FP64 products as rank-3 Views of the caller's memory, batch along
/// extent 0.
using Batch = Kokkos::View<double***, Kokkos::LayoutStride, Kokkos::CudaSpace,
                           Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using ConstBatch = Kokkos::View<const double***, Kokkos::LayoutStride, Kokkos::CudaSpace,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// A strided batch of real FP64 products through ozaki::gemm_batched on the stream's instance
/// (one plan for the batch: docs/design.md §13): true with `status` where ozaki ran it (or
/// failed after it may have written a C), false with `what` where it refused before writing
/// anything (the products then go one by one).
template <class T>
bool run_ozaki_strided(const Gemm<T>& g, long long stride_a, long long stride_b, long long stride_c,
                       int count, cudaStream_t stream, cublasStatus_t& status, std::string& what) {
  if constexpr (!std::is_same<T, double>::value) {
    (void)g, (void)stride_a, (void)stride_b, (void)stride_c, (void)count, (void)stream,
        (void)status;
    what = "not a real FP64 batch";
    return false;
  } else {
    double alpha = 0, beta = 0;
    if (g.lt != nullptr) {
      what = "a cublasLt call";
      return false;
    }
    const std::optional<Kokkos::Cuda> space = stream_instance(stream, what);
    if (!space) return false;
    if (!read_scalars(g, stream, alpha, beta)) {
      what = "alpha or beta unreadable on the device";
      return false;
    }
    const ConstBatch A(g.A,
                       Kokkos::LayoutStride(count, stride_a, g.rows_a(), 1, g.cols_a(), g.lda));
    const ConstBatch B(g.B,
                       Kokkos::LayoutStride(count, stride_b, g.rows_b(), 1, g.cols_b(), g.ldb));
    const Batch C(g.C, Kokkos::LayoutStride(count, stride_c, g.m, 1, g.n, g.ldc));
    const char ta[2] = {trans_char<T>(g.transa), '\0'};
    const char tb[2] = {trans_char<T>(g.transb), '\0'};
    try {
      const Guard inside;
      const ozaki::Report r =
          ozaki::gemm_batched(*space, ta, tb, alpha, A, B, beta, C, config().options);
      what = describe(r) + ", a batch of " + std::to_string(count);
      if (!r.reason.empty() && config().log == 1) what += " (" + r.reason + ")";
      tally_ozaki_call(r, count, Scalar<T>::flops * g.m * g.n * g.k * count);
      status = CUBLAS_STATUS_SUCCESS;
    } catch (const ozaki::InvalidArgument& e) {
      what = std::string("ozaki refused the batch: ") + e.what();  // checked before any write
      return false;
    } catch (const std::exception& e) {
      what = std::string("ozaki failed in the batch: ") + e.what();
      status = CUBLAS_STATUS_EXECUTION_FAILED;
    }
    return true;
  }
}

/// A strided batch: whole to cuBLAS where batch_passes_whole says so (`real_batch`: the
/// caller's call); real FP64 products to ozaki as one batch (run_ozaki_strided); otherwise,
/// or where that refuses, each product to ozaki one by one (gemm).
template <class T, class PassWhole>
cublasStatus_t strided_batched(const Gemm<T>& first, long long stride_a, long long stride_b,
                               long long stride_c, int batch_count, const PassWhole& real_batch) {
  cudaStream_t stream = nullptr;
  if (batch_passes_whole(first, batch_count, stream, true)) {
    const InCublas in_cublas;
    return real_batch();
  }
  if (std::is_same<T, double>::value && batch_count > 1) {
    CallTimer timer(stream);
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    std::string what;
    if (run_ozaki_strided<T>(first, stride_a, stride_b, stride_c, batch_count, stream, status,
                             what)) {
      log_call(first, what, timer.seconds());
      return status;
    }
    if (config().log == 1) log_call(first, what + "; one product at a time", timer.seconds());
  }
  for (int i = 0; i < batch_count; ++i) {
    Gemm<T> g = first;
    g.A = first.A + i * stride_a;
    g.B = first.B + i * stride_b;
    g.C = first.C + i * stride_c;
    const cublasStatus_t status = gemm(g);
    if (status != CUBLAS_STATUS_SUCCESS) return status;
  }
  return CUBLAS_STATUS_SUCCESS;
}

/// The matrices of a batched or grouped call, as the caller's device arrays of device pointers
/// hold them, on the host.
template <class T>
struct HostPointers {
  std::vector<const T*> A, B;
  std::vector<T*> C;
};

/// The first `count` entries of the caller's pointer arrays, read in stream order: copied on
/// the call's stream (earlier work on it may write them) and waited for on that stream alone.
/// False where they cannot be read, or where a matrix pointer is null (the call is then
/// cuBLAS's to run or report, whole).  Never on a stream being captured: a capture records the
/// copy instead of making it, and its wait is not allowed.
template <class T>
bool read_pointer_arrays(const T* const* a, const T* const* b, T* const* c, std::int64_t count,
                         cudaStream_t stream, HostPointers<T>& host) {
  host.A.resize(count);
  host.B.resize(count);
  host.C.resize(count);
  const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(void*);
  if (a == nullptr || b == nullptr || c == nullptr ||
      cudaMemcpyAsync(host.A.data(), a, bytes, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaMemcpyAsync(host.B.data(), b, bytes, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaMemcpyAsync(host.C.data(), c, bytes, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess) {
    cudaGetLastError();  // the copy's error is not the caller's: the call passes through
    return false;
  }
  for (std::int64_t i = 0; i < count; ++i) {
    if (host.A[i] == nullptr || host.B[i] == nullptr || host.C[i] == nullptr) return false;
  }
  return true;
}

const char* const unreadable_pointers =
    "the call's pointer arrays could not be read (or hold a null matrix)";

/// A batch of one shape given by device arrays of device pointers (cublasDgemmBatched,
/// cublasZgemmBatched, cublasGemmBatchedEx): whole to cuBLAS where batch_passes_whole says so,
/// before the arrays are read; otherwise the arrays are read (read_pointer_arrays) and each
/// product goes to ozaki one by one (gemm), as a strided batch's do.
template <class T, class PassWhole>
cublasStatus_t pointer_batched(const Gemm<T>& shape, const T* const* a, const T* const* b,
                               T* const* c, int batch_count, const PassWhole& real_batch) {
  const auto pass_whole = [&] {
    const InCublas in_cublas;
    return real_batch();
  };
  cudaStream_t stream = nullptr;
  if (batch_passes_whole(shape, batch_count, stream)) return pass_whole();
  HostPointers<T> host;
  if (!read_pointer_arrays(a, b, c, batch_count, stream, host)) {
    count_pass(unreadable_pointers, batch_count);
    return pass_whole();
  }
  for (int i = 0; i < batch_count; ++i) {
    Gemm<T> g = shape;
    g.A = host.A[i];
    g.B = host.B[i];
    g.C = host.C[i];
    const cublasStatus_t status = gemm(g);
    if (status != CUBLAS_STATUS_SUCCESS) return status;
  }
  return CUBLAS_STATUS_SUCCESS;
}

/// A grouped batch (cublasDgemmGroupedBatched): group g is group_size[g] products of one shape
/// with its own transposes, leading dimensions and scalars (host arrays, one entry a group);
/// the products' matrices are device arrays of device pointers, group after group.
template <class T>
struct Grouped {
  using Real = cublasStatus_t (*)(cublasHandle_t, const cublasOperation_t*,
                                  const cublasOperation_t*, const int*, const int*, const int*,
                                  const T*, const T* const*, const int*, const T* const*,
                                  const int*, const T*, T* const*, const int*, int, const int*);
  const char* entry;
  Real real;  // the real cuBLAS's grouped call
  cublasHandle_t handle;
  const cublasOperation_t *transa, *transb;
  const int *m, *n, *k;
  const T* alpha;
  const T* const* A;
  const int* lda;
  const T* const* B;
  const int* ldb;
  const T* beta;
  T* const* C;
  const int* ldc;
  int group_count;
  const int* group_size;

  /// Group g's shape and scalars, its matrices unread.
  Gemm<T> shape(int g) const {
    return {entry,   handle, transa[g], transb[g], m[g],     n[g],    k[g],  alpha + g,
            nullptr, lda[g], nullptr,   ldb[g],    beta + g, nullptr, ldc[g]};
  }
  /// The caller's call, unchanged.
  cublasStatus_t pass() const {
    const InCublas in_cublas;
    return real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, group_count,
                group_size);
  }
  /// Group g alone, as a grouped call of its own (`first`: its first product's index in the
  /// pointer arrays, whose entries from there on are its own).
  cublasStatus_t pass_group(int g, std::int64_t first) const {
    const InCublas in_cublas;
    return real(handle, transa + g, transb + g, m + g, n + g, k + g, alpha + g, A + first, lda + g,
                B + first, ldb + g, beta + g, C + first, ldc + g, 1, group_size + g);
  }
};

/// Each group's route in a grouped batch: cuBLAS's (ineligible, with why, or declined by
/// Auto), or ozaki's.  A group of no products is nobody's.
enum class Route { Empty, Passed, Declined, Ozaki };

/// The groups in their order once the pointer arrays are read (`host`): each group ozaki takes
/// goes product by product through gemm, each other group is cuBLAS's as a grouped call of its
/// own (`count_kept` counts and logs it).  The first failing status ends the call.
template <class T, class Kept>
cublasStatus_t run_groups(const Grouped<T>& call, const std::vector<Route>& routes,
                          const HostPointers<T>& host, const Kept& count_kept) {
  std::int64_t first = 0;
  for (int g = 0; g < call.group_count; first += call.group_size[g], ++g) {
    if (routes[g] == Route::Empty) continue;
    if (routes[g] != Route::Ozaki) {
      count_kept(g, "as a grouped call of its own");
      const cublasStatus_t status = call.pass_group(g, first);
      if (status != CUBLAS_STATUS_SUCCESS) return status;
      continue;
    }
    for (int i = 0; i < call.group_size[g]; ++i) {
      Gemm<T> product = call.shape(g);
      product.A = host.A[first + i];
      product.B = host.B[first + i];
      product.C = host.C[first + i];
      const cublasStatus_t status = gemm(product);
      if (status != CUBLAS_STATUS_SUCCESS) return status;
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}

/// A grouped batch, decided group by group from each group's shape: a group that ozaki does
/// not take (ineligible) or whose shape Auto declines is cuBLAS's, and the other groups' products
/// go to ozaki one by one (gemm).  Where no group is taken, the caller's call passes whole,
/// before the pointer arrays are read; otherwise they are read once (read_pointer_arrays) and
/// the groups run in their order, each group cuBLAS keeps as a grouped call of that group alone
/// on the same handle.  The whole call passes, untouched, where cuBLAS must answer it whole:
/// ozaki's own calls, OZAKI_CUBLAS=off, arguments cuBLAS rejects (it writes no C then), the
/// device pointer mode (cuBLAS takes the grouped call's scalars as host arrays), and a stream
/// being captured.
template <class T>
cublasStatus_t grouped_batched(const Grouped<T>& call) {
  if (call.real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (inside_ozaki > 0) return call.pass();
  const bool arrays = call.transa && call.transb && call.m && call.n && call.k && call.alpha &&
                      call.lda && call.ldb && call.beta && call.ldc && call.group_size;
  if (!arrays || call.group_count < 1) return call.pass();
  std::int64_t products = 0;
  for (int g = 0; g < call.group_count; ++g) {
    if (call.group_size[g] < 0) return call.pass();
    products += call.group_size[g];
  }
  if (config().mode == Mode::Off) {
    count_pass(Passed::Off, products);
    return call.pass();
  }
  if (scalars_on_device(call.shape(0))) {
    count_pass("a grouped call in device pointer mode (its scalars are host arrays)", products);
    return call.pass();
  }
  std::vector<Route> routes(call.group_count, Route::Empty);
  std::vector<Passed> reasons(call.group_count, Passed::Count);
  for (int g = 0; g < call.group_count; ++g) {
    const bool passes = ineligible(call.shape(g), reasons[g]);
    if (reasons[g] == Passed::InvalidArguments) {
      count_pass(Passed::InvalidArguments, products);
      return call.pass();
    }
    if (passes && call.group_size[g] > 0) routes[g] = Route::Passed;
  }
  const cudaStream_t stream = stream_of(call.shape(0));
  if (capturing(stream)) {
    count_pass(Passed::StreamCapture, products);
    return call.pass();
  }
  std::int64_t taken = 0;
  for (int g = 0; g < call.group_count; ++g) {
    if (call.group_size[g] == 0 || routes[g] == Route::Passed) continue;
    routes[g] = auto_declines(call.shape(g), stream) ? Route::Declined : Route::Ozaki;
    if (routes[g] == Route::Ozaki) taken += call.group_size[g];
  }
  // What cuBLAS keeps, counted and logged group by group.
  const auto count_kept = [&](int g, const char* how) {
    const long size = call.group_size[g];
    std::string what;
    if (routes[g] == Route::Passed) {
      count_pass(reasons[g], size);
      what = std::string("cuBLAS (") + passed_reason(reasons[g]) + ")";
    } else {
      tally().native_by_shape.fetch_add(size, std::memory_order_relaxed);
      what = "Native (Auto, from the shape)";
    }
    if (config().log == 1) {
      log_call(call.shape(g), what + ", a group of " + std::to_string(size) + " " + how, 0);
    }
  };
  HostPointers<T> host;
  const bool readable =
      taken > 0 && read_pointer_arrays(call.A, call.B, call.C, products, stream, host);
  if (!readable) {
    for (int g = 0; g < call.group_count; ++g) {
      if (routes[g] == Route::Ozaki) {
        count_pass(unreadable_pointers, call.group_size[g]);
      } else if (routes[g] != Route::Empty) {
        count_kept(g, "in the whole call");
      }
    }
    return call.pass();
  }
  return run_groups(call, routes, host, count_kept);
}

/// A cublasGemmEx-family call's element type where ozaki answers it: FP64 (real or complex) in
/// A, B and C with CUBLAS_COMPUTE_64F (not the pedantic mode, which asks for cuBLAS's own
/// order), or FP32 likewise with CUBLAS_COMPUTE_32F (not the TF32, BF16 or FP16 compute types,
/// which ask for less; gemm takes these with OZAKI_CUBLAS_FP32=1 only).  `taken(T{})` answers
/// such a call, and the rest go to the real cuBLAS unchanged (`pass`), as do ozaki's own calls
/// (its INT8 products come through cublasGemmEx).
template <class Taken, class Pass>
cublasStatus_t by_ex_type(cudaDataType a, cudaDataType b, cudaDataType c,
                          cublasComputeType_t compute, const Taken& taken, const Pass& pass) {
  if (inside_ozaki == 0 && a == c && b == c) {
    if (compute == CUBLAS_COMPUTE_64F && c == CUDA_R_64F) return taken(double{});
    if (compute == CUBLAS_COMPUTE_64F && c == CUDA_C_64F) return taken(cuDoubleComplex{});
    if (compute == CUBLAS_COMPUTE_32F && c == CUDA_R_32F) return taken(float{});
    if (compute == CUBLAS_COMPUTE_32F && c == CUDA_C_32F) return taken(cuComplex{});
  }
  const InCublas in_cublas;
  return pass();
}

/// The cublasLtMatmul descriptor's attributes that ozaki answers, or must find at their
/// defaults.
struct LtDesc {
  std::int32_t compute = -1, scale = -1, pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  std::int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N, transc = CUBLAS_OP_N;
  std::int32_t fill = CUBLAS_FILL_MODE_FULL, sm_count = 0, bias_type = -1;
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  std::int8_t fast_accum = 0;
  bool scaled = false;  // scale, amax or auxiliary pointers, scale modes, emulation: passed
};

/// One attribute of a cublasLtMatmul descriptor, read by the real cuBLASLt.
template <class V>
bool desc_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, V& value) {
  using Get = decltype(&cublasLtMatmulDescGetAttribute);
  static const Get get = real<Get>("cublasLtMatmulDescGetAttribute");  // found once
  size_t written = 0;
  return get != nullptr &&
         get(desc, attribute, &value, sizeof value, &written) == CUBLAS_STATUS_SUCCESS;
}

/// What the call is: its compute and scale types and its transposes.
bool read_lt_kind(cublasLtMatmulDesc_t desc, LtDesc& d) {
  return desc_attribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, d.compute) &&
         desc_attribute(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, d.scale) &&
         desc_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, d.transa) &&
         desc_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, d.transb);
}

/// The rest: the pointer mode and the bias, which ozaki answers, and what it must find at its
/// defaults.
bool read_lt_settings(cublasLtMatmulDesc_t desc, LtDesc& d) {
  if (!desc_attribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, d.pointer_mode) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSC, d.transc) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_FILL_MODE, d.fill) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, d.epilogue) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, d.bias) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, d.bias_type) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, d.sm_count) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, d.fast_accum)) {
    return false;
  }
  // Scaling factors, amax and auxiliary outputs: ozaki makes none of them.
  for (const auto attribute :
       {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
        CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
        CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
        CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER,
        CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER}) {
    const void* pointer = nullptr;
    if (!desc_attribute(desc, attribute, pointer)) return false;
    d.scaled = d.scaled || pointer != nullptr;
  }
  // Attributes of later cuBLASLt releases: where the library the call reaches does not know
  // one, the caller cannot have set it.
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 120800
  for (const auto attribute :
       {CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
        CUBLASLT_MATMUL_DESC_C_SCALE_MODE, CUBLASLT_MATMUL_DESC_D_SCALE_MODE,
        CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE}) {
    std::int32_t mode = 0;
    if (desc_attribute(desc, attribute, mode)) d.scaled = d.scaled || mode != 0;
  }
  const void* d_out_scale = nullptr;
  if (desc_attribute(desc, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, d_out_scale)) {
    d.scaled = d.scaled || d_out_scale != nullptr;
  }
#endif
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 130100
  cublasLtEmulationDesc_t emulation = nullptr;  // the caller asked for cuBLAS's emulation
  if (desc_attribute(desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, emulation)) {
    d.scaled = d.scaled || emulation != nullptr;
  }
#endif
  return true;
}

/// A cublasLtMatmul matrix layout's attributes.
struct LtMatrix {
  std::uint32_t type = 0;
  std::int32_t order = CUBLASLT_ORDER_COL, batch = 1;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0, plane_offset = 0;
};

bool read_lt_matrix(cublasLtMatrixLayout_t layout, LtMatrix& x) {
  using Get = decltype(&cublasLtMatrixLayoutGetAttribute);
  static const Get get = real<Get>("cublasLtMatrixLayoutGetAttribute");  // found once
  const auto attribute = [&](cublasLtMatrixLayoutAttribute_t which, auto& value) {
    size_t written = 0;
    return get(layout, which, &value, sizeof value, &written) == CUBLAS_STATUS_SUCCESS;
  };
  return get != nullptr && attribute(CUBLASLT_MATRIX_LAYOUT_TYPE, x.type) &&
         attribute(CUBLASLT_MATRIX_LAYOUT_ORDER, x.order) &&
         attribute(CUBLASLT_MATRIX_LAYOUT_ROWS, x.rows) &&
         attribute(CUBLASLT_MATRIX_LAYOUT_COLS, x.cols) &&
         attribute(CUBLASLT_MATRIX_LAYOUT_LD, x.ld) &&
         attribute(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, x.batch) &&
         attribute(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, x.plane_offset);
}

/// The GEMM a cublasLtMatmul call is, where ozaki may answer it.
struct LtShape {
  std::uint32_t type = CUDA_R_64F;  // of A, B, C, D, alpha and beta
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldd = 0;
};

/// op(A) m x k, op(B) k x n, C and D m x n, in int (the Gemm's): the shape, or why not (calls
/// whose layouts disagree are cuBLAS's to report).
Passed lt_shape(const LtDesc& d, const LtMatrix& a, const LtMatrix& b, const LtMatrix& c,
                const LtMatrix& dm, LtShape& s) {
  for (const LtMatrix* x : {&a, &b, &c, &dm}) {
    if (x->rows > INT_MAX || x->cols > INT_MAX || x->ld > INT_MAX) return Passed::LtLayout;
  }
  for (const std::int32_t op : {d.transa, d.transb}) {
    if (op != CUBLAS_OP_N && op != CUBLAS_OP_T && op != CUBLAS_OP_C) {
      return Passed::InvalidArguments;
    }
  }
  s.transa = static_cast<cublasOperation_t>(d.transa);
  s.transb = static_cast<cublasOperation_t>(d.transb);
  const bool ta = s.transa != CUBLAS_OP_N, tb = s.transb != CUBLAS_OP_N;
  s.m = static_cast<int>(dm.rows);
  s.n = static_cast<int>(dm.cols);
  s.k = static_cast<int>(ta ? a.rows : a.cols);
  s.lda = static_cast<int>(a.ld);
  s.ldb = static_cast<int>(b.ld);
  s.ldd = static_cast<int>(dm.ld);
  s.type = dm.type;
  const std::uint64_t m = dm.rows, n = dm.cols, k = s.k;
  if ((ta ? a.cols : a.rows) != m || (tb ? b.cols : b.rows) != k || (tb ? b.rows : b.cols) != n ||
      c.rows != m || c.cols != n) {
    return Passed::InvalidArguments;
  }
  return Passed::Count;
}

/// FP64 (real or complex) data, scalars and compute, or FP32 likewise: no TF32, BF16, FP16 or
/// emulated compute type (which ask for less, or for cuBLAS's own method), no pedantic one
/// (which asks for cuBLAS's own order), no mixed types.
bool lt_types_answered(const LtDesc& d, const LtMatrix& a, const LtMatrix& b, const LtMatrix& c,
                       const LtMatrix& dm) {
  const std::uint32_t t = dm.type;
  const bool fp64 = t == CUDA_R_64F || t == CUDA_C_64F, fp32 = t == CUDA_R_32F || t == CUDA_C_32F;
  const std::int32_t compute = fp64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  return (fp64 || fp32) && a.type == t && b.type == t && c.type == t &&
         d.scale == static_cast<std::int32_t>(t) && d.compute == compute;
}

/// Whether two column-major m x n matrices of `bytes`-byte elements share memory.
bool overlap(const void* x, std::int64_t ldx, const void* y, std::int64_t ldy, std::int64_t m,
             std::int64_t n, std::size_t bytes) {
  if (m == 0 || n == 0) return false;
  const auto first_x = reinterpret_cast<std::uintptr_t>(x),
             first_y = reinterpret_cast<std::uintptr_t>(y);
  const std::uintptr_t end_x = first_x + static_cast<std::uintptr_t>((n - 1) * ldx + m) * bytes,
                       end_y = first_y + static_cast<std::uintptr_t>((n - 1) * ldy + m) * bytes;
  return first_x < end_y && first_y < end_x;
}

/// Whether ozaki answers this cublasLtMatmul call exactly (Passed::Count), or why it passes
/// through whole.  Fills `s` (as far as the descriptors were read: the log shows it) and the
/// call's pointer mode, C's leading dimension and bias.
Passed lt_matmul_plan(LtCall& call, LtShape& s) {
  LtDesc d;
  LtMatrix a, b, c, dm;
  if (!read_lt_kind(call.desc, d)) return Passed::LtSettings;
  if (!read_lt_matrix(call.a_layout, a) || !read_lt_matrix(call.b_layout, b) ||
      !read_lt_matrix(call.c_layout, c) || !read_lt_matrix(call.d_layout, dm)) {
    return Passed::LtLayout;
  }
  const Passed shaped = lt_shape(d, a, b, c, dm, s);
  if (shaped != Passed::Count) return shaped;
  if (!lt_types_answered(d, a, b, c, dm)) return Passed::LtTypes;
  for (const LtMatrix* x : {&a, &b, &c, &dm}) {
    if (x->order != CUBLASLT_ORDER_COL || x->batch != 1 || x->plane_offset != 0) {
      return Passed::LtLayout;
    }
  }
  // The common calls that pass anyway (a model's FP32 or small layers) are decided before the
  // other attributes are read: each read is a call into cuBLASLt.
  const bool fp32 = dm.type == CUDA_R_32F || dm.type == CUDA_C_32F;
  if (fp32 && !config().fp32) return Passed::Fp32Off;
  if (std::min({s.m, s.n, s.k}) < config().min_dimension) return Passed::BelowMinimum;
  if (!read_lt_settings(call.desc, d)) return Passed::LtSettings;
  const bool complex = dm.type == CUDA_C_64F || dm.type == CUDA_C_32F;
  if (d.epilogue == CUBLASLT_EPILOGUE_BIAS) {
    if (complex || d.bias == nullptr ||
        (d.bias_type != -1 && d.bias_type != static_cast<std::int32_t>(dm.type))) {
      return Passed::LtEpilogue;
    }
    call.bias = d.bias;
  } else if (d.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    return Passed::LtEpilogue;
  }
  if (d.scaled || d.transc != CUBLAS_OP_N || d.fill != CUBLAS_FILL_MODE_FULL || d.sm_count != 0 ||
      d.fast_accum != 0 ||
      (d.pointer_mode != CUBLASLT_POINTER_MODE_HOST &&
       d.pointer_mode != CUBLASLT_POINTER_MODE_DEVICE)) {
    return Passed::LtSettings;
  }
  // D is computed in place: C itself (same layout), or a D apart from C that gets C's copy.
  const std::size_t bytes = (dm.type == CUDA_R_32F ? 4 : dm.type == CUDA_C_64F ? 16 : 8);
  if (call.C == call.D
          ? c.ld != dm.ld
          : call.C != nullptr && overlap(call.C, c.ld, call.D, dm.ld, s.m, s.n, bytes)) {
    return Passed::LtSettings;
  }
  call.device_scalars = d.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE;
  call.ldc = c.ld;
  return Passed::Count;
}

/// The Gemm of a cublasLtMatmul call that lt_matmul_plan took: its C is D.
template <class T>
Gemm<T> lt_gemm(const LtCall& call, const LtShape& s) {
  return {"cublasLtMatmul",
          nullptr,
          s.transa,
          s.transb,
          s.m,
          s.n,
          s.k,
          static_cast<const T*>(call.alpha),
          static_cast<const T*>(call.A),
          s.lda,
          static_cast<const T*>(call.B),
          s.ldb,
          static_cast<const T*>(call.beta),
          static_cast<T*>(call.D),
          s.ldd,
          &call};
}

/// cublasLtMatmul: the GEMM that lt_matmul_plan finds goes the way of the cuBLAS entry points
/// of its type (gemm: FP32 only with OZAKI_CUBLAS_FP32=1); everything else passes through.
cublasStatus_t lt_matmul(LtCall& call) {
  if (LtCall::real_matmul() == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  // ozaki's own INT8 products through cuBLASLt, and cuBLAS's own calls of cuBLASLt
  if (inside_ozaki > 0 || inside_cublas > 0) return call.pass();
  if (config().mode == Mode::Off) {
    count_pass(Passed::Off);
    return call.pass();
  }
  LtShape s;
  const Passed why = lt_matmul_plan(call, s);
  if (why != Passed::Count) {
    count_pass(why);
    if (config().log == 1) {
      log_line("cublasLtMatmul", s.transa, s.transb, s.m, s.n, s.k,
               std::string("cuBLAS (") + passed_reason(why) + ")", 0);
    }
    return call.pass();
  }
  switch (s.type) {
    case CUDA_R_64F: return gemm<double>(lt_gemm<double>(call, s));
    case CUDA_C_64F: return gemm<cuDoubleComplex>(lt_gemm<cuDoubleComplex>(call, s));
    case CUDA_R_32F: return gemm<float>(lt_gemm<float>(call, s));
    default: return gemm<cuComplex>(lt_gemm<cuComplex>(call, s));
  }
}

/// The level-3 routines answered besides GEMM, each by its ozaki routine.
enum class Routine { Syrk, Herk, Trsm, Trmm, Symm, Hemm };

/// One level-3 call in cuBLAS's column-major terms.  The output C is m x n (trsm's is its B,
/// solved in place); syrk and herk's is n x n (m = n) with op(A) n x k; the other routines' A is
/// m x m (side L) or n x n (side R), and their k is unused.  `S`: the scalars' type (herk's are
/// real on complex data).
template <class T, class S = T>
struct Level3 {
  const char* entry;  // the cuBLAS function called, for the log
  Routine routine;
  cublasHandle_t handle;
  cublasSideMode_t side;
  cublasFillMode_t uplo;
  cublasOperation_t trans;
  cublasDiagType_t diag;
  int m, n, k;
  const S* alpha;
  const T* A;
  int lda;
  const T* B;  // trmm's and symm's B (null for syrk, herk and trsm)
  int ldb;
  const S* beta;  // null for trsm and trmm
  T* C;
  int ldc;

  bool rank_k() const { return routine == Routine::Syrk || routine == Routine::Herk; }
  bool triangular() const { return routine == Routine::Trsm || routine == Routine::Trmm; }
  bool has_b() const { return !rank_k() && routine != Routine::Trsm; }
  bool left() const { return side == CUBLAS_SIDE_LEFT; }
  /// A's stored shape.
  int rows_a() const {
    if (rank_k()) return trans == CUBLAS_OP_N ? n : k;
    return left() ? m : n;
  }
  int cols_a() const { return rank_k() ? (trans == CUBLAS_OP_N ? k : n) : rows_a(); }
  /// Its multiply-adds as BLAS counts them (the summary's TFLOP).
  double multiply_adds() const {
    const double order = rows_a();
    if (rank_k()) return 0.5 * n * (n + 1.0) * k;
    return (triangular() ? 0.5 : 1.0) * order * order * (left() ? n : m);
  }
};

/// Where ozaki's syrk and herk are faster than cuBLAS's in OZAKI_CUBLAS=auto, from their
/// measurement on an H100 (docs/benchmarks.md, "Level 3 and batched calls against cuBLAS",
/// n = k): one scheme II call on the triangle is ahead of cuBLAS's dsyrk and zherk from 8192.
/// Complex syrk takes zherk's (the same complex GEMMs; not measured itself).
constexpr int rank_k_min_n = 8192, rank_k_min_k = 8192;

/// Where ozaki's trsm and ztrmm are faster than cuBLAS's in OZAKI_CUBLAS=auto, from their
/// measurement on an H100 (docs/benchmarks.md, "Level 3 and batched calls against cuBLAS", left
/// lower, an n x n A and n columns): dtrsm ahead at 8192 and 16384 but behind at 12288, ztrsm and
/// ztrmm behind or even at 8192 and ahead at 16384; so both dimensions from 16384.  dtrmm at
/// 16384 leads by less than the card's run-to-run spread: it passes.
constexpr int triangular_min = 16384;

/// Whether Auto takes this trsm or trmm call (trsm and ztrmm of triangular_min and up).
template <class T, class S>
bool triangular_taken(const Level3<T, S>& c) {
  const bool routine =
      c.routine == Routine::Trsm || (c.routine == Routine::Trmm && Scalar<T>::complex);
  return routine && c.m >= triangular_min && c.n >= triangular_min;
}

/// Whether cuBLAS would accept the call's arguments (it reports the others itself, writing
/// nothing).
template <class T, class S>
bool level3_valid(const Level3<T, S>& c) {
  const auto leading = [](int ld, int rows) { return ld >= (rows > 1 ? rows : 1); };
  const bool n = c.trans == CUBLAS_OP_N, t = c.trans == CUBLAS_OP_T, h = c.trans == CUBLAS_OP_C;
  bool trans = true;  // symm and hemm have none
  if (c.routine == Routine::Herk) trans = n || h;
  if (c.routine == Routine::Syrk) trans = n || t || (h && !Scalar<T>::complex);
  if (c.triangular()) trans = n || t || h;
  const bool side = c.rank_k() || c.side == CUBLAS_SIDE_LEFT || c.side == CUBLAS_SIDE_RIGHT;
  const bool diag = !c.triangular() || c.diag == CUBLAS_DIAG_NON_UNIT || c.diag == CUBLAS_DIAG_UNIT;
  const bool uplo = c.uplo == CUBLAS_FILL_MODE_LOWER || c.uplo == CUBLAS_FILL_MODE_UPPER;
  return trans && side && diag && uplo && c.m >= 0 && c.n >= 0 && c.k >= 0 &&
         leading(c.lda, c.rows_a()) && leading(c.ldc, c.m) && (!c.has_b() || leading(c.ldb, c.m));
}

/// Why this level-3 call passes to cuBLAS, decided from its arguments alone (false: it may go
/// through ozaki): off, arguments cuBLAS reports, below OZAKI_CUBLAS_MIN, and in
/// OZAKI_CUBLAS=auto the routines and shapes where cuBLAS's own routine is faster.  A routine
/// made of GEMMs that Auto would send to native GEMM one by one is slower than cuBLAS's own
/// routine, so Auto's GEMM decision does not decide these: trsm and trmm pass except trsm and
/// ztrmm from triangular_min, syrk and herk pass below rank_k_min_n and rank_k_min_k, and symm
/// and hemm, one GEMM on the filled-in operand, are decided by Auto on that GEMM's shape
/// (level3_declines).
template <class T, class S>
bool level3_ineligible(const Level3<T, S>& c, Passed& why) {
  const Config& settings = config();
  why = Passed::Count;
  if (settings.mode == Mode::Off) {
    why = Passed::Off;
  } else if (!level3_valid(c)) {
    why = Passed::InvalidArguments;
  } else if ((c.rank_k() ? std::min(c.n, c.k) : std::min(c.m, c.n)) < settings.min_dimension) {
    why = Passed::BelowMinimum;
  } else if (settings.mode == Mode::Auto && c.triangular() && !triangular_taken(c)) {
    why = Passed::TriangularSlower;
  } else if (settings.mode == Mode::Auto && c.rank_k() &&
             (c.n < rank_k_min_n || c.k < rank_k_min_k)) {
    why = Passed::RankKSmall;
  }
  return why != Passed::Count;
}

/// Whether Auto runs native GEMM on the GEMM a symm or hemm call makes (side L: m x n x m,
/// side R: m x n x n), from its shape alone (auto_declines; only in OZAKI_CUBLAS=auto).
template <class T, class S>
bool level3_declines(const Level3<T, S>& c, cudaStream_t stream) {
  if (c.rank_k() || c.triangular()) return false;
  const Gemm<T> product{c.entry, c.handle,   CUBLAS_OP_N, CUBLAS_OP_N, c.m,
                        c.n,     c.rows_a(), nullptr,     nullptr,     0,
                        nullptr, 0,          nullptr,     nullptr,     0};
  return auto_declines(product, stream);
}

void log_level3_line(const char* entry, const std::string& flags, int rows, int cols,
                     const std::string& what, double seconds) {
  if (config().log != 1) return;
  std::fprintf(stderr, "ozaki_cublas: %s %s %dx%d -> %s, %.3f ms\n", entry, flags.c_str(), rows,
               cols, what.c_str(), seconds * 1e3);
}

/// One log line: the entry point, its side, uplo, trans and diag letters where it has them
/// ("LUTN"), and its shape (syrk, herk: n x k; the others m x n).
template <class T, class S>
void log_level3(const Level3<T, S>& c, const std::string& what, double seconds) {
  if (config().log != 1) return;
  std::string flags;
  if (!c.rank_k()) flags += c.left() ? 'L' : 'R';
  flags += c.uplo == CUBLAS_FILL_MODE_LOWER ? 'L' : 'U';
  if (c.rank_k() || c.triangular()) flags += op_letter(c.trans);
  if (c.triangular()) flags += c.diag == CUBLAS_DIAG_UNIT ? 'U' : 'N';
  log_level3_line(c.entry, flags, c.rank_k() ? c.n : c.m, c.rank_k() ? c.k : c.n, what, seconds);
}

/// Whether the memory of two column-major matrices (x: rows_x x cols_x, leading dimension ldx)
/// may meet: their address ranges, first to last element, intersect.
bool ranges_meet(const void* x, std::int64_t ldx, std::int64_t rows_x, std::int64_t cols_x,
                 const void* y, std::int64_t ldy, std::int64_t rows_y, std::int64_t cols_y,
                 std::size_t bytes) {
  if (rows_x == 0 || cols_x == 0 || rows_y == 0 || cols_y == 0) return false;
  const auto first_x = reinterpret_cast<std::uintptr_t>(x),
             first_y = reinterpret_cast<std::uintptr_t>(y);
  const std::uintptr_t end_x = first_x +
                               static_cast<std::uintptr_t>((cols_x - 1) * ldx + rows_x) * bytes,
                       end_y = first_y +
                               static_cast<std::uintptr_t>((cols_y - 1) * ldy + rows_y) * bytes;
  return first_x < end_y && first_y < end_x;
}

/// Why a trmm call whose C is not its B passes ("" where it does not): cuBLAS's trmm_v2 writes
/// C = alpha op(A) B out of place, and ozaki's trmm works in place, so B is first copied into C
/// (copy_b_into_c), which must then write neither B nor A.
template <class T, class S>
std::string trmm_overlaps(const Level3<T, S>& c) {
  if (c.routine != Routine::Trmm || (c.B == c.C && c.ldb == c.ldc)) return "";
  const std::size_t bytes = sizeof(T);
  if (ranges_meet(c.B, c.ldb, c.m, c.n, c.C, c.ldc, c.m, c.n, bytes) ||
      ranges_meet(c.A, c.lda, c.rows_a(), c.cols_a(), c.C, c.ldc, c.m, c.n, bytes)) {
    return "trmm with C overlapping A or B (other than C = B in one layout)";
  }
  return "";
}

/// trmm's B copied into its C on `stream`, in stream order, where C is not B (trmm_overlaps).
/// B stays untouched, so where ozaki then refuses, the caller's own call, which writes all of C,
/// still finds it.
template <class T, class S>
bool copy_b_into_c(const Level3<T, S>& c, cudaStream_t stream, std::string& what) {
  if (c.routine != Routine::Trmm || c.B == c.C) return true;
  const std::size_t bytes = sizeof(T);
  if (cudaMemcpy2DAsync(c.C, c.ldc * bytes, c.B, c.ldb * bytes, c.m * bytes, c.n,
                        cudaMemcpyDeviceToDevice, stream) != cudaSuccess) {
    cudaGetLastError();  // the copy's error is not the caller's: the call passes through
    what = "B could not be copied into C";
    return false;
  }
  return true;
}

/// alpha and beta (where the routine has one) on the host, read as a GEMM's are (read_scalars):
/// where the handle's pointer mode says they are device pointers, in stream order.
template <class T, class S>
bool read_level3_scalars(const Level3<T, S>& c, cudaStream_t stream, S& alpha, S& beta) {
  if (!device_pointer_mode(c.handle)) {
    alpha = *c.alpha;
    if (c.beta != nullptr) beta = *c.beta;
    return true;
  }
  return cudaMemcpyAsync(&alpha, c.alpha, sizeof alpha, cudaMemcpyDeviceToHost, stream) ==
             cudaSuccess &&
         (c.beta == nullptr || cudaMemcpyAsync(&beta, c.beta, sizeof beta, cudaMemcpyDeviceToHost,
                                               stream) == cudaSuccess) &&
         cudaStreamSynchronize(stream) == cudaSuccess;
}

template <class T>
ConstMatrix<T> const_matrix(const T* x, int rows, int cols, int ld) {
  return ConstMatrix<T>(reinterpret_cast<const typename Scalar<T>::Element*>(x),
                        Kokkos::LayoutStride(rows, 1, cols, ld));
}

/// The call's ozaki routine on `space`, on unmanaged Views of the caller's memory.  (herk is
/// the one call with real scalars on complex data; hemm is complex only.)
template <class T, class S>
ozaki::Report run_routine(const Level3<T, S>& c, const Kokkos::Cuda& space, const S& alpha,
                          const S& beta) {
  const ozaki::Options& options = config().options;
  const char side[2] = {c.left() ? 'L' : 'R', '\0'};
  const char uplo[2] = {c.uplo == CUBLAS_FILL_MODE_LOWER ? 'L' : 'U', '\0'};
  const char trans[2] = {trans_char<T>(c.trans), '\0'};
  const char diag[2] = {c.diag == CUBLAS_DIAG_UNIT ? 'U' : 'N', '\0'};
  const ConstMatrix<T> A = const_matrix(c.A, c.rows_a(), c.cols_a(), c.lda);
  const Matrix<T> C(reinterpret_cast<typename Scalar<T>::Element*>(c.C),
                    Kokkos::LayoutStride(c.m, 1, c.n, c.ldc));
  if constexpr (!std::is_same<S, T>::value) {
    return ozaki::herk(space, uplo, trans, alpha, A, beta, C, options);
  } else {
    const auto B = [&] { return const_matrix(c.B, c.m, c.n, c.ldb); };
    switch (c.routine) {
      case Routine::Syrk:
        return ozaki::syrk(space, uplo, trans, element(alpha), A, element(beta), C, options);
      case Routine::Trsm:
        return ozaki::trsm(space, side, uplo, trans, diag, element(alpha), A, C, options);
      case Routine::Trmm:
        return ozaki::trmm(space, side, uplo, trans, diag, element(alpha), A, C, options);
      case Routine::Hemm:
        if constexpr (Scalar<T>::complex) {
          return ozaki::hemm(space, side, uplo, element(alpha), A, B(), element(beta), C, options);
        }
        break;
      default: break;
    }
    return ozaki::symm(space, side, uplo, element(alpha), A, B(), element(beta), C, options);
  }
}

/// The call through its ozaki routine on the Kokkos::Cuda instance of `stream`; false (with why)
/// where it could not run there, C then untouched (ozaki checks every argument before writing;
/// a trmm's C may hold B's copy, which the caller's call that follows overwrites).
template <class T, class S>
bool run_level3(const Level3<T, S>& c, cudaStream_t stream, std::string& what) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    what = "no current device";
    return false;
  }
  Runtime& runtime = Runtime::get();
  if (!runtime.ready(device, what)) return false;
  const Kokkos::Cuda space = runtime.instance(stream);
  S alpha{}, beta{};
  if (!read_level3_scalars(c, stream, alpha, beta)) {
    what = "alpha or beta unreadable on the device";
    return false;
  }
  if (!copy_b_into_c(c, stream, what)) return false;
  try {
    const Guard inside;
    const ozaki::Report r = run_routine(c, space, alpha, beta);
    what = describe(r);
    if (!r.reason.empty() && config().log == 1) what += " (" + r.reason + ")";
    Tally& t = tally();
    if (r.algorithm == ozaki::Algorithm::Native) {
      t.native.fetch_add(1, std::memory_order_relaxed);
    } else {
      t.through_ozaki.fetch_add(1, std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(t.mutex);
      t.ozaki_flops += Scalar<T>::flops * c.multiply_adds();
    }
    return true;
  } catch (const std::exception& e) {
    what = std::string("ozaki refused: ") + e.what();
    return false;
  }
}

/// A level-3 call (syrk, herk, trsm, trmm, symm, hemm): through its ozaki routine, or `pass`,
/// the caller's own call on the real cuBLAS, unchanged: for ozaki's and cuBLAS's own calls, the
/// calls level3_ineligible passes, a stream being captured (the call passes whole: nothing of
/// it is read or run), a symm or hemm whose GEMM Auto declines, C overlapping a trmm's A or B,
/// and whatever ozaki refuses.
template <class T, class S, class Pass>
cublasStatus_t level3(const Level3<T, S>& c, const Pass& pass) {
  const auto callers_call = [&] {
    const InCublas in_cublas;
    return pass();
  };
  if (inside_ozaki > 0 || inside_cublas > 0) return callers_call();
  Passed passed = Passed::Count;
  if (level3_ineligible(c, passed)) {
    count_pass(passed);
    log_level3(c, std::string("cuBLAS (") + passed_reason(passed) + ")", 0);
    return callers_call();
  }
  const cudaStream_t stream = handle_stream(c.handle);
  if (capturing(stream)) {
    count_pass(Passed::StreamCapture);
    log_level3(c, std::string("cuBLAS (") + passed_reason(Passed::StreamCapture) + ")", 0);
    return callers_call();
  }
  CallTimer timer(stream);
  if (level3_declines(c, stream)) {
    tally().native_by_shape.fetch_add(1, std::memory_order_relaxed);
    const cublasStatus_t status = callers_call();
    log_level3(c, "Native (Auto, from the shape of its GEMM)", timer.seconds());
    return status;
  }
  std::string what = trmm_overlaps(c);
  if (what.empty() && run_level3(c, stream, what)) {
    log_level3(c, what, timer.seconds());
    return CUBLAS_STATUS_SUCCESS;
  }
  const cublasStatus_t status = callers_call();
  count_pass(what);
  log_level3(c, "cuBLAS (" + what + ")", timer.seconds());
  return status;
}

}  // namespace
}  // namespace ozaki_cublas

using namespace ozaki_cublas;

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                  cublasOperation_t transb, int m, int n, int k,
                                                  const double* alpha, const double* A, int lda,
                                                  const double* B, int ldb, const double* beta,
                                                  double* C, int ldc) {
  return gemm<double>(
      {"cublasDgemm_v2", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc});
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasZgemm_v2(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda, const cuDoubleComplex* B,
    int ldb, const cuDoubleComplex* beta, cuDoubleComplex* C, int ldc) {
  return gemm<cuDoubleComplex>(
      {"cublasZgemm_v2", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc});
}

// FP32 (with OZAKI_CUBLAS_FP32=1; otherwise, and on handles that allow TF32, they pass
// through): ozaki's FP32 path at native FP32 GEMM's accuracy (docs/design.md §9).
OZAKI_CUBLAS_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                  cublasOperation_t transb, int m, int n, int k,
                                                  const float* alpha, const float* A, int lda,
                                                  const float* B, int ldb, const float* beta,
                                                  float* C, int ldc) {
  return gemm<float>(
      {"cublasSgemm_v2", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc});
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasCgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                  cublasOperation_t transb, int m, int n, int k,
                                                  const cuComplex* alpha, const cuComplex* A,
                                                  int lda, const cuComplex* B, int ldb,
                                                  const cuComplex* beta, cuComplex* C, int ldc) {
  return gemm<cuComplex>(
      {"cublasCgemm_v2", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc});
}

OZAKI_CUBLAS_EXPORT cublasStatus_t
cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
             int n, int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
             const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
             cudaDataType Ctype, int ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  // (cuBLAS's C++ headers overload cublasGemmEx: the C signature, spelled out.)
  using RealGemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                        int, int, const void*, const void*, cudaDataType, int,
                                        const void*, cudaDataType, int, const void*, void*,
                                        cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  return by_ex_type(
      Atype, Btype, Ctype, computeType,
      [&](auto zero) {
        using T = decltype(zero);
        return gemm<T>({"cublasGemmEx", handle, transa, transb, m, n, k,
                        static_cast<const T*>(alpha), static_cast<const T*>(A), lda,
                        static_cast<const T*>(B), ldb, static_cast<const T*>(beta),
                        static_cast<T*>(C), ldc});
      },
      [&] {
        const RealGemmEx pass = real<RealGemmEx>("cublasGemmEx");
        if (pass == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
        return pass(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                    Ctype, ldc, computeType, algo);
      });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasDgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const double* alpha, const double* A, int lda, long long int strideA, const double* B, int ldb,
    long long int strideB, const double* beta, double* C, int ldc, long long int strideC,
    int batchCount) {
  using RealBatched = decltype(&cublasDgemmStridedBatched);
  const RealBatched pass = real<RealBatched>("cublasDgemmStridedBatched");
  if (pass == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return strided_batched<double>({"cublasDgemmStridedBatched", handle, transa, transb, m, n, k,
                                  alpha, A, lda, B, ldb, beta, C, ldc},
                                 strideA, strideB, strideC, batchCount, [&] {
                                   return pass(handle, transa, transb, m, n, k, alpha, A, lda,
                                               strideA, B, ldb, strideB, beta, C, ldc, strideC,
                                               batchCount);
                                 });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasZgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda, long long int strideA,
    const cuDoubleComplex* B, int ldb, long long int strideB, const cuDoubleComplex* beta,
    cuDoubleComplex* C, int ldc, long long int strideC, int batchCount) {
  using RealBatched = decltype(&cublasZgemmStridedBatched);
  const RealBatched pass = real<RealBatched>("cublasZgemmStridedBatched");
  if (pass == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return strided_batched<cuDoubleComplex>({"cublasZgemmStridedBatched", handle, transa, transb, m,
                                           n, k, alpha, A, lda, B, ldb, beta, C, ldc},
                                          strideA, strideB, strideC, batchCount, [&] {
                                            return pass(handle, transa, transb, m, n, k, alpha, A,
                                                        lda, strideA, B, ldb, strideB, beta, C, ldc,
                                                        strideC, batchCount);
                                          });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float* alpha, const float* A, int lda, long long int strideA, const float* B, int ldb,
    long long int strideB, const float* beta, float* C, int ldc, long long int strideC,
    int batchCount) {
  using RealBatched = decltype(&cublasSgemmStridedBatched);
  const RealBatched pass = real<RealBatched>("cublasSgemmStridedBatched");
  if (pass == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return strided_batched<float>({"cublasSgemmStridedBatched", handle, transa, transb, m, n, k,
                                 alpha, A, lda, B, ldb, beta, C, ldc},
                                strideA, strideB, strideC, batchCount, [&] {
                                  return pass(handle, transa, transb, m, n, k, alpha, A, lda,
                                              strideA, B, ldb, strideB, beta, C, ldc, strideC,
                                              batchCount);
                                });
}

// Batches given by device arrays of device pointers: whole to cuBLAS where the shape says so
// (pointer_batched), otherwise each product through ozaki after the arrays are read.
OZAKI_CUBLAS_EXPORT cublasStatus_t cublasDgemmBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const double* alpha, const double* const Aarray[], int lda, const double* const Barray[],
    int ldb, const double* beta, double* const Carray[], int ldc, int batchCount) {
  using RealBatched = decltype(&cublasDgemmBatched);
  const RealBatched pass = real<RealBatched>("cublasDgemmBatched");
  if (pass == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return pointer_batched<double>({"cublasDgemmBatched", handle, transa, transb, m, n, k, alpha,
                                  nullptr, lda, nullptr, ldb, beta, nullptr, ldc},
                                 Aarray, Barray, Carray, batchCount, [&] {
                                   return pass(handle, transa, transb, m, n, k, alpha, Aarray, lda,
                                               Barray, ldb, beta, Carray, ldc, batchCount);
                                 });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasZgemmBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const cuDoubleComplex* alpha, const cuDoubleComplex* const Aarray[], int lda,
    const cuDoubleComplex* const Barray[], int ldb, const cuDoubleComplex* beta,
    cuDoubleComplex* const Carray[], int ldc, int batchCount) {
  using RealBatched = decltype(&cublasZgemmBatched);
  const RealBatched pass = real<RealBatched>("cublasZgemmBatched");
  if (pass == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return pointer_batched<cuDoubleComplex>({"cublasZgemmBatched", handle, transa, transb, m, n, k,
                                           alpha, nullptr, lda, nullptr, ldb, beta, nullptr, ldc},
                                          Aarray, Barray, Carray, batchCount, [&] {
                                            return pass(handle, transa, transb, m, n, k, alpha,
                                                        Aarray, lda, Barray, ldb, beta, Carray, ldc,
                                                        batchCount);
                                          });
}

// The GemmEx batches: the element types of cublasGemmEx (by_ex_type) go the way of the typed
// batches; every other type passes whole.  (cuBLAS's C++ headers overload both names: the C
// signatures, spelled out.)
OZAKI_CUBLAS_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
    const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  using RealBatched = cublasStatus_t (*)(
      cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
      cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*,
      void*, cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t);
  const RealBatched real_batch = real<RealBatched>("cublasGemmStridedBatchedEx");
  if (real_batch == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  const auto pass = [&] {
    return real_batch(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
                      strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
  };
  return by_ex_type(
      Atype, Btype, Ctype, computeType,
      [&](auto zero) {
        using T = decltype(zero);
        return strided_batched<T>(
            {"cublasGemmStridedBatchedEx", handle, transa, transb, m, n, k,
             static_cast<const T*>(alpha), static_cast<const T*>(A), lda, static_cast<const T*>(B),
             ldb, static_cast<const T*>(beta), static_cast<T*>(C), ldc},
            strideA, strideB, strideC, batchCount, pass);
      },
      pass);
}

OZAKI_CUBLAS_EXPORT cublasStatus_t
cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                    int m, int n, int k, const void* alpha, const void* const Aarray[],
                    cudaDataType Atype, int lda, const void* const Barray[], cudaDataType Btype,
                    int ldb, const void* beta, void* const Carray[], cudaDataType Ctype, int ldc,
                    int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  using RealBatched = cublasStatus_t (*)(
      cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
      const void* const*, cudaDataType, int, const void* const*, cudaDataType, int, const void*,
      void* const*, cudaDataType, int, int, cublasComputeType_t, cublasGemmAlgo_t);
  const RealBatched real_batch = real<RealBatched>("cublasGemmBatchedEx");
  if (real_batch == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  const auto pass = [&] {
    return real_batch(handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype,
                      ldb, beta, Carray, Ctype, ldc, batchCount, computeType, algo);
  };
  return by_ex_type(
      Atype, Btype, Ctype, computeType,
      [&](auto zero) {
        using T = decltype(zero);
        return pointer_batched<T>(
            {"cublasGemmBatchedEx", handle, transa, transb, m, n, k, static_cast<const T*>(alpha),
             nullptr, lda, nullptr, ldb, static_cast<const T*>(beta), nullptr, ldc},
            reinterpret_cast<const T* const*>(Aarray), reinterpret_cast<const T* const*>(Barray),
            reinterpret_cast<T* const*>(Carray), batchCount, pass);
      },
      pass);
}

// A grouped batch: decided group by group (grouped_batched).  (cuBLAS 13 has no complex grouped
// call; cublasGemmGroupedBatchedEx is not taken.)
OZAKI_CUBLAS_EXPORT cublasStatus_t cublasDgemmGroupedBatched(
    cublasHandle_t handle, const cublasOperation_t transa_array[],
    const cublasOperation_t transb_array[], const int m_array[], const int n_array[],
    const int k_array[], const double alpha_array[], const double* const Aarray[],
    const int lda_array[], const double* const Barray[], const int ldb_array[],
    const double beta_array[], double* const Carray[], const int ldc_array[], int group_count,
    const int group_size[]) {
  return grouped_batched<double>(
      {"cublasDgemmGroupedBatched",
       real<decltype(&cublasDgemmGroupedBatched)>("cublasDgemmGroupedBatched"), handle,
       transa_array, transb_array, m_array, n_array, k_array, alpha_array, Aarray, lda_array,
       Barray, ldb_array, beta_array, Carray, ldc_array, group_count, group_size});
}

// cublasLtMatmul: FP64 and FP32 (real or complex; FP32 with OZAKI_CUBLAS_FP32=1) without an
// epilogue or with a bias (real), on single column-major matrices; everything else, and
// cuBLASLt's own calls from inside ozaki, passes to the real cuBLASLt (lt_matmul_plan).  The
// algorithm and workspace serve only the calls that pass through.
OZAKI_CUBLAS_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
    const void* A, cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
    const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream) {
  LtCall call{
      lightHandle, computeDesc,          alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
      workspace,   workspaceSizeInBytes, stream};
  return lt_matmul(call);
}

// Level-3 routines (double and double complex): each by its ozaki routine where the call is
// taken (level3: in OZAKI_CUBLAS=auto syrk and herk from n = k = 8192, symm and hemm where Auto
// takes their GEMM, trsm and ztrmm from m = n = 16384; in force every call ozaki can answer),
// otherwise the caller's own call.
OZAKI_CUBLAS_EXPORT cublasStatus_t cublasDsyrk_v2(cublasHandle_t handle, cublasFillMode_t uplo,
                                                  cublasOperation_t trans, int n, int k,
                                                  const double* alpha, const double* A, int lda,
                                                  const double* beta, double* C, int ldc) {
  const auto real_call = real<decltype(&cublasDsyrk_v2)>("cublasDsyrk_v2");
  if (real_call == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return level3(
      Level3<double>{"cublasDsyrk_v2", Routine::Syrk, handle, CUBLAS_SIDE_LEFT, uplo, trans,
                     CUBLAS_DIAG_NON_UNIT, n, n, k, alpha, A, lda, nullptr, 0, beta, C, ldc},
      [&] { return real_call(handle, uplo, trans, n, k, alpha, A, lda, beta, C, ldc); });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasZsyrk_v2(cublasHandle_t handle, cublasFillMode_t uplo,
                                                  cublasOperation_t trans, int n, int k,
                                                  const cuDoubleComplex* alpha,
                                                  const cuDoubleComplex* A, int lda,
                                                  const cuDoubleComplex* beta, cuDoubleComplex* C,
                                                  int ldc) {
  const auto real_call = real<decltype(&cublasZsyrk_v2)>("cublasZsyrk_v2");
  if (real_call == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return level3(Level3<cuDoubleComplex>{"cublasZsyrk_v2", Routine::Syrk, handle, CUBLAS_SIDE_LEFT,
                                        uplo, trans, CUBLAS_DIAG_NON_UNIT, n, n, k, alpha, A, lda,
                                        nullptr, 0, beta, C, ldc},
                [&] { return real_call(handle, uplo, trans, n, k, alpha, A, lda, beta, C, ldc); });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasZherk_v2(cublasHandle_t handle, cublasFillMode_t uplo,
                                                  cublasOperation_t trans, int n, int k,
                                                  const double* alpha, const cuDoubleComplex* A,
                                                  int lda, const double* beta, cuDoubleComplex* C,
                                                  int ldc) {
  const auto real_call = real<decltype(&cublasZherk_v2)>("cublasZherk_v2");
  if (real_call == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return level3(Level3<cuDoubleComplex, double>{"cublasZherk_v2", Routine::Herk, handle,
                                                CUBLAS_SIDE_LEFT, uplo, trans, CUBLAS_DIAG_NON_UNIT,
                                                n, n, k, alpha, A, lda, nullptr, 0, beta, C, ldc},
                [&] { return real_call(handle, uplo, trans, n, k, alpha, A, lda, beta, C, ldc); });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasDtrsm_v2(cublasHandle_t handle, cublasSideMode_t side,
                                                  cublasFillMode_t uplo, cublasOperation_t trans,
                                                  cublasDiagType_t diag, int m, int n,
                                                  const double* alpha, const double* A, int lda,
                                                  double* B, int ldb) {
  const auto real_call = real<decltype(&cublasDtrsm_v2)>("cublasDtrsm_v2");
  if (real_call == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return level3(
      Level3<double>{"cublasDtrsm_v2", Routine::Trsm, handle, side, uplo, trans, diag, m, n, 0,
                     alpha, A, lda, nullptr, 0, nullptr, B, ldb},
      [&] { return real_call(handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb); });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasZtrsm_v2(cublasHandle_t handle, cublasSideMode_t side,
                                                  cublasFillMode_t uplo, cublasOperation_t trans,
                                                  cublasDiagType_t diag, int m, int n,
                                                  const cuDoubleComplex* alpha,
                                                  const cuDoubleComplex* A, int lda,
                                                  cuDoubleComplex* B, int ldb) {
  const auto real_call = real<decltype(&cublasZtrsm_v2)>("cublasZtrsm_v2");
  if (real_call == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return level3(
      Level3<cuDoubleComplex>{"cublasZtrsm_v2", Routine::Trsm, handle, side, uplo, trans, diag, m,
                              n, 0, alpha, A, lda, nullptr, 0, nullptr, B, ldb},
      [&] { return real_call(handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb); });
}

// trmm_v2 is out of place, C = alpha op(A) B: C gets B's copy first where it is not B, and
// ozaki's trmm runs in place on C (copy_b_into_c).
OZAKI_CUBLAS_EXPORT cublasStatus_t cublasDtrmm_v2(cublasHandle_t handle, cublasSideMode_t side,
                                                  cublasFillMode_t uplo, cublasOperation_t trans,
                                                  cublasDiagType_t diag, int m, int n,
                                                  const double* alpha, const double* A, int lda,
                                                  const double* B, int ldb, double* C, int ldc) {
  const auto real_call = real<decltype(&cublasDtrmm_v2)>("cublasDtrmm_v2");
  if (real_call == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return level3(Level3<double>{"cublasDtrmm_v2", Routine::Trmm, handle, side, uplo, trans, diag, m,
                               n, 0, alpha, A, lda, B, ldb, nullptr, C, ldc},
                [&] {
                  return real_call(handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, C,
                                   ldc);
                });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasZtrmm_v2(
    cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans,
    cublasDiagType_t diag, int m, int n, const cuDoubleComplex* alpha, const cuDoubleComplex* A,
    int lda, const cuDoubleComplex* B, int ldb, cuDoubleComplex* C, int ldc) {
  const auto real_call = real<decltype(&cublasZtrmm_v2)>("cublasZtrmm_v2");
  if (real_call == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return level3(Level3<cuDoubleComplex>{"cublasZtrmm_v2", Routine::Trmm, handle, side, uplo, trans,
                                        diag, m, n, 0, alpha, A, lda, B, ldb, nullptr, C, ldc},
                [&] {
                  return real_call(handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, C,
                                   ldc);
                });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasDsymm_v2(cublasHandle_t handle, cublasSideMode_t side,
                                                  cublasFillMode_t uplo, int m, int n,
                                                  const double* alpha, const double* A, int lda,
                                                  const double* B, int ldb, const double* beta,
                                                  double* C, int ldc) {
  const auto real_call = real<decltype(&cublasDsymm_v2)>("cublasDsymm_v2");
  if (real_call == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return level3(
      Level3<double>{"cublasDsymm_v2", Routine::Symm, handle, side, uplo, CUBLAS_OP_N,
                     CUBLAS_DIAG_NON_UNIT, m, n, 0, alpha, A, lda, B, ldb, beta, C, ldc},
      [&] { return real_call(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc); });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasZsymm_v2(
    cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
    const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda, const cuDoubleComplex* B,
    int ldb, const cuDoubleComplex* beta, cuDoubleComplex* C, int ldc) {
  const auto real_call = real<decltype(&cublasZsymm_v2)>("cublasZsymm_v2");
  if (real_call == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return level3(
      Level3<cuDoubleComplex>{"cublasZsymm_v2", Routine::Symm, handle, side, uplo, CUBLAS_OP_N,
                              CUBLAS_DIAG_NON_UNIT, m, n, 0, alpha, A, lda, B, ldb, beta, C, ldc},
      [&] { return real_call(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc); });
}

OZAKI_CUBLAS_EXPORT cublasStatus_t cublasZhemm_v2(
    cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
    const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda, const cuDoubleComplex* B,
    int ldb, const cuDoubleComplex* beta, cuDoubleComplex* C, int ldc) {
  const auto real_call = real<decltype(&cublasZhemm_v2)>("cublasZhemm_v2");
  if (real_call == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return level3(
      Level3<cuDoubleComplex>{"cublasZhemm_v2", Routine::Hemm, handle, side, uplo, CUBLAS_OP_N,
                              CUBLAS_DIAG_NON_UNIT, m, n, 0, alpha, A, lda, B, ldb, beta, C, ldc},
      [&] { return real_call(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc); });
}
