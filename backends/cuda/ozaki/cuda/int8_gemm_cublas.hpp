#pragma once
/// \file int8_gemm_cublas.hpp
/// The CUDA backend's declarations (definitions in backends/cuda/*.cpp, compiled into the
/// library): INT8 products through cublasGemmEx, native FP64 GEMM through cublasDgemm and
/// cuBLAS's FP64 emulation, each on the caller's stream.

#include <ozaki/impl/backend.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>

namespace ozaki {
namespace Impl {

template <>
struct Int8GemmBackendAvail<Kokkos::Cuda> : std::true_type {};

/// A Kokkos::Cuda instance is a stream on a device: its library scratch is keyed on both, and
/// the stream orders every use of it.
template <>
struct ScratchKey<Kokkos::Cuda> {
  static constexpr bool stream_ordered = true;
  static ScratchKeyValue of(const Kokkos::Cuda& space) {
    return {space.cuda_device(), reinterpret_cast<std::uintptr_t>(space.cuda_stream()),
            std::thread::id()};
  }
};

/// INT8 x INT8 -> INT32 in TN form through cublasGemmEx (CUDA_R_8I, CUBLAS_COMPUTE_32I) on
/// the stream of `space`, with the cuBLAS handle bound to that stream.
template <>
struct Int8Gemm<Kokkos::Cuda, true> {
  static const char* name() { return "cuBLAS"; }
  /// Scheme II pads M, N and K of its products to 128: cuBLAS's INT8 kernels run markedly
  /// faster with K and the leading dimensions multiples of 128 rather than 16, and no slower
  /// where they already were (docs/benchmarks.md, "Rates the cost model uses").
  static constexpr std::int64_t padding = 128;
  static void run(const Kokkos::Cuda& space, const Int8GemmProblem& p);
  /// A batch of products (scheme II's moduli of one pass) is one cuBLAS call.
  static constexpr bool batched = true;
  /// Whether this device runs INT8 tensor-core GEMMs (compute capability >= 7.5), and why not.
  static bool supported(const Kokkos::Cuda& space, std::string& why_not);
  /// True (with why) once the process is exiting after cuBLAS was used: cuBLAS's state is then
  /// being torn down, and a call is refused with a BackendError instead of crashing in it.
  static bool torn_down(std::string& why);
  /// Measured INT8 (TN) over FP64 GEMM throughput of this device's architecture, 0 if unknown.
  static double int8_over_fp64_throughput(const Kokkos::Cuda& space);
  /// FP64 GEMM flops per byte of achievable memory bandwidth (machine balance), 0 if unknown.
  static double fp64_flops_per_byte(const Kokkos::Cuda& space);
};

/// FP8 e4m3 GEMM with DeepGEMM's block scales through cuBLASLt (ozaki/fp8.hpp): the weights as
/// cuBLASLt's A with BLK128x128 scales, the activations as its B with VEC128 scales (both
/// K-contiguous, TN), FP32 accumulation and scales, D in bfloat16 or float, on the caller's
/// stream.  Those scale modes exist on compute capability 9.0 alone (cuBLAS 12.9 and later).
template <>
struct Fp8GemmBackend<Kokkos::Cuda> {
  static constexpr bool available = true;
  static const char* name() { return "cuBLASLt"; }
  /// Compute capability 9.0 and a cuBLASLt that offers one of the two forms.
  static bool supported(const Kokkos::Cuda& space, std::string& why_not);
  /// Which orientations of D cuBLASLt offers kernels for on this device (asked once).
  static Fp8Forms forms(const Kokkos::Cuda& space);
  /// Whether the forms are known and this stream's cuBLAS and cuBLASLt handles exist: a call on
  /// a stream being captured into a graph cannot make them (an earlier call, eager, does).
  static bool ready(const Kokkos::Cuda& space);
  static void run(const Kokkos::Cuda& space, const Fp8GemmProblem& p);
};

/// A stream of the library's own per caller's stream (and device), with events: scheme II
/// runs its residues and reconstruction there while the caller's stream runs the INT8
/// products (crt/driver.hpp).  Created on first use and kept; the Kokkos instance on it is
/// released at Kokkos::finalize.
template <>
struct SideInstance<Kokkos::Cuda> {
  static constexpr bool available = true;
  static constexpr int slots = 8;
  struct Lane;
  /// The side stream of one caller's stream, held for one call (concurrent calls on the same
  /// caller's stream take turns).
  class Lease {
   public:
    explicit Lease(Lane& lane);
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    const Kokkos::Cuda& side() const;
    void record(int slot, const Kokkos::Cuda& on);
    void wait(const Kokkos::Cuda& waiter, int slot);

   private:
    Lane& lane_;
  };
  static Lease lease(const Kokkos::Cuda& main);
};

/// Scheme II's pass products reduced in the GEMM's epilogue by a kernel of the library's own
/// (backends/cuda/residue_products_sm90.cu: wgmma and bulk tensor copies, compute capability
/// 9.0 only): residue tiles of 1 byte per entry and modulus instead of INT32 products.
template <>
struct ResidueGemmBackend<Kokkos::Cuda> {
  static constexpr bool available = true;
  /// Whether `p` runs on this device (compute capability 9.0, the kernel's limits) and the
  /// kernel is not turned off (Experimental::TestHooks::residue_products_off: the CUDA tests
  /// turn it off and on to compare both paths bit for bit, benchmarks to compare their times),
  /// and why not.
  static bool supported(const Kokkos::Cuda& space, const Int8GemmProblem& p, std::string& why_not);
  static void run(const Kokkos::Cuda& space, const Int8GemmProblem& p, std::int8_t* tiles);
};

/// W8A8's products with the scales, bias and rounding applied in the same kernel (the kernel of
/// ResidueGemmBackend with another epilogue): the INT32 products never reach memory.
template <>
struct FusedQuantizedGemmBackend<Kokkos::Cuda> {
  static constexpr bool available = true;
  static const char* name() { return "ozaki sm_90a (fused epilogue)"; }
  /// Whether `p` runs on this device (compute capability 9.0, the kernel's limits, at least as
  /// many 128 x 256 tiles of C as multiprocessors) and the kernel is not turned off
  /// (Experimental::TestHooks::fused_quantized_off), and why not.
  static bool supported(const Kokkos::Cuda& space, const QuantizedGemmProblem& p,
                        std::string& why_not);
  static void run(const Kokkos::Cuda& space, const QuantizedGemmProblem& p);
};

/// Native FP64 and complex FP64 GEMM: cublasDgemm_64 / cublasZgemm_64 on the handle bound
/// to the instance's stream (native_cublas.cpp), enqueued without a fence.
template <>
struct NativeBackend<Kokkos::Cuda> {
  static constexpr bool available = true;
  static const char* name() { return "cuBLAS"; }
  static void run(const Kokkos::Cuda& space, const ColumnMajorProduct<double>& g, double alpha,
                  double beta);
  static void run(const Kokkos::Cuda& space, const ColumnMajorProduct<Kokkos::complex<double>>& g,
                  Kokkos::complex<double> alpha, Kokkos::complex<double> beta);
  static void run(const Kokkos::Cuda& space, const ColumnMajorProduct<float>& g, float alpha,
                  float beta);
  static void run(const Kokkos::Cuda& space, const ColumnMajorProduct<Kokkos::complex<float>>& g,
                  Kokkos::complex<float> alpha, Kokkos::complex<float> beta);
  /// `count` products of g's form, product i's X, Y and C at i stride_x, i stride_y and
  /// i stride_c elements past g's: one cublas<t>gemmStridedBatched call.
  static constexpr bool strided_batches = true;
  static void run_strided_batch(const Kokkos::Cuda& space, const ColumnMajorProduct<double>& g,
                                double alpha, double beta, const StridedBatch& batch);
  static void run_strided_batch(const Kokkos::Cuda& space,
                                const ColumnMajorProduct<Kokkos::complex<double>>& g,
                                Kokkos::complex<double> alpha, Kokkos::complex<double> beta,
                                const StridedBatch& batch);
  static void run_strided_batch(const Kokkos::Cuda& space, const ColumnMajorProduct<float>& g,
                                float alpha, float beta, const StridedBatch& batch);
  static void run_strided_batch(const Kokkos::Cuda& space,
                                const ColumnMajorProduct<Kokkos::complex<float>>& g,
                                Kokkos::complex<float> alpha, Kokkos::complex<float> beta,
                                const StridedBatch& batch);
};

template <>
struct StreamCapture<Kokkos::Cuda> {
  /// cudaStreamIsCapturing on the instance's stream: active or invalidated capture.
  static bool active(const Kokkos::Cuda& space);
};

/// A branch decided on the device inside a CUDA graph (backend.hpp, crt/captured.hpp;
/// device_branch.cpp): the call's scratch from cudaMallocAsync on the captured stream (the
/// graph owns it), the two branches captured beforehand on a stream of the library's own into
/// graphs of their own (checked to hold only what a conditional node's body may hold), the
/// work before the verdict forked onto a second such stream, the verdict one thread on the
/// device that sets a conditional handle, and an if/else conditional node with the branches as
/// its bodies, joined back into the caller's stream.  The library's two streams per device,
/// their Kokkos instances and cuBLAS handles are made by the first eager INT8 call that allows
/// graph products (prepare), outside any capture.
template <>
class DeviceBranch<Kokkos::Cuda> {
 public:
  /// Makes the device's lane (its two streams, Kokkos instances and cuBLAS handles) if it is
  /// not yet; called by every eager INT8 call with Options::experimental.graph_products
  /// (cuBLAS cannot make a handle while a stream is being captured, so a captured call finds
  /// the lane made or runs native FP64 GEMM).
  static void prepare(const Kokkos::Cuda& space);
  explicit DeviceBranch(const Kokkos::Cuda& space);
  DeviceBranch(const DeviceBranch&) = delete;
  DeviceBranch& operator=(const DeviceBranch&) = delete;
  ~DeviceBranch();
  bool open(std::size_t bytes, std::string& why);
  unsigned char* scratch() const { return scratch_; }
  template <class F>
  bool make(int which, const F& work, std::string& why) {
    if (!begin_branch(why)) return false;
    bool enqueued = true;
    try {
      work(branch_space());
    } catch (const std::exception& e) {
      why = e.what();
      enqueued = false;
    }
    return end_branch(which, enqueued, why);
  }
  void abandon();
  Kokkos::Cuda fork();
  void decide(const CrtCaptureConstants& c, const double* partials, int teams);
  void close();
  struct Lane;

 private:
  const Kokkos::Cuda& branch_space() const;
  bool begin_branch(std::string& why);
  bool end_branch(int which, bool enqueued, std::string& why);
  void release_branches();

  Kokkos::Cuda space_;
  Lane* lane_ = nullptr;
  bool locked_ = false;
  unsigned char* scratch_ = nullptr;
  cudaGraph_t branches_[2] = {nullptr, nullptr};
};

template <>
struct EmulationBackend<Kokkos::Cuda> {
  static constexpr bool available = true;
  /// Workspace bytes cuBLAS's FP64 emulation needs for this call (see emulation_cublas.cpp).
  static std::size_t workspace_bytes(std::int64_t m, std::int64_t n, std::int64_t k,
                                     int mantissa_bits);
  /// C = alpha op(A) op(B) + beta C with cublasDgemm in CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH,
  /// eager strategy; mantissa_bits > 0 fixes the mantissa, 0 lets cuBLAS choose (dynamic).
  /// A, B, C column-major.  Returns false (with `why_not`) where emulation is unavailable.
  static bool run(const Kokkos::Cuda& space, bool trans_a, bool trans_b, std::int64_t m,
                  std::int64_t n, std::int64_t k, double alpha, const double* A, std::int64_t lda,
                  const double* B, std::int64_t ldb, double beta, double* C, std::int64_t ldc,
                  int mantissa_bits, void* workspace, std::size_t workspace_bytes,
                  std::string& why_not);
};

}  // namespace Impl
}  // namespace ozaki
