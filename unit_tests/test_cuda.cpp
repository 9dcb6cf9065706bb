// What only the CUDA backend has: streams, cuBLAS handles, cuBLAS's FP64 emulation.
// Compiled for Kokkos::Cuda only; every result is compared with the serial oracle.
#include "captured_common.hpp"
#include "common.hpp"

#include <ozaki/impl/crt/captured.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace ozaki_test;
using ozaki::Options;
using ozaki::Report;
using V = ozaki::Impl::Views<TestSpace>;

static_assert(std::is_same<TestSpace, Kokkos::Cuda>::value, "test_cuda.cpp is for Kokkos::Cuda");

struct Operands {
  HostMatrix A, B, C0;
  DeviceMatrix dA, dB, dC;
};

Operands make_operands(std::int64_t M, std::int64_t N, std::int64_t K, double phi,
                       std::uint64_t seed) {
  Random rng(seed);
  Operands o;
  o.A = random_host(M, K, phi, rng);
  o.B = random_host(K, N, phi, rng);
  o.C0 = random_host(M, N, 0.5, rng);
  o.dA = make_matrix(M, K, Layout::Left);
  o.dB = make_matrix(K, N, Layout::Left);
  o.dC = make_matrix(M, N, Layout::Left);
  from_host(o.A, o.dA.view);
  from_host(o.B, o.dB.view);
  from_host(o.C0, o.dC.view);
  return o;
}

/// max |C - oracle(S)| relative to |A||B|, and the oracle's own error bound as a ratio.
void expect_matches_oracle(const Operands& o, const Report& r, int S) {
  HostMatrix oracle = o.C0;
  ozaki::serial::gemm('N', 'N', 1.0, o.A.cref(), o.B.cref(), 0.0, oracle.ref(), S,
                      ozaki::PairPolicy::Triangular);
  const auto abs_ab = abs_product('N', 'N', o.A, o.B);
  const HostMatrix C = to_host(o.dC.view);
  const double rounding = 4 * (r.int8_gemms + 2) * 0x1p-53;
  for (std::size_t i = 0; i < C.values.size(); ++i) {
    ASSERT_LE(std::fabs(C.values[i] - oracle.values[i]), rounding * abs_ab[i]) << "element " << i;
  }
}

TEST(Cuda, TwoStreamsAtOnceDoNotRace) {
  cudaStream_t streams[2];
  ASSERT_EQ(cudaStreamCreate(&streams[0]), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&streams[1]), cudaSuccess);
  {
    Kokkos::Cuda spaces[2] = {Kokkos::Cuda(streams[0]), Kokkos::Cuda(streams[1])};
    Operands ops[2] = {make_operands(300, 200, 700, 0.5, 1), make_operands(250, 310, 500, 2.0, 2)};
    Options o;
    o.slices = 6;
    ozaki::Workspace<Kokkos::Cuda> ws[2] = {ozaki::Workspace<Kokkos::Cuda>(spaces[0]),
                                            ozaki::Workspace<Kokkos::Cuda>(spaces[1])};
    Report reports[2];
    for (int round = 0; round < 3; ++round) {
      // Both calls are enqueued before either is waited for.
      for (int i = 0; i < 2; ++i) {
        reports[i] = ozaki::gemm(spaces[i], "N", "N", 1.0, ops[i].dA.left, ops[i].dB.left, 0.0,
                                 ops[i].dC.left, o, ws[i]);
      }
      spaces[0].fence();
      spaces[1].fence();
      for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(reports[i].backend, "cuBLAS");
        expect_matches_oracle(ops[i], reports[i], 6);
      }
    }
  }
  cudaStreamDestroy(streams[0]);
  cudaStreamDestroy(streams[1]);
}

TEST(Cuda, PlainCallsOnTwoStreamsFromTwoThreadsUseTheirOwnScratch) {
  cudaStream_t streams[2];
  ASSERT_EQ(cudaStreamCreate(&streams[0]), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&streams[1]), cudaSuccess);
  {
    Kokkos::Cuda spaces[2] = {Kokkos::Cuda(streams[0]), Kokkos::Cuda(streams[1])};
    Operands ops[2] = {make_operands(300, 200, 700, 0.5, 3), make_operands(250, 310, 500, 2.0, 4)};
    Options o;
    o.slices = 6;
    Report reports[2][3];
    // Each thread: three plain calls (no Workspace) on its own stream, all enqueued at once.
    auto work = [&](int i) {
      for (int round = 0; round < 3; ++round) {
        reports[i][round] = ozaki::gemm(spaces[i], "N", "N", 1.0, ops[i].dA.left, ops[i].dB.left,
                                        0.0, ops[i].dC.left, o);
      }
      spaces[i].fence();
    };
    std::thread first(work, 0), second(work, 1);
    first.join();
    second.join();
    for (int i = 0; i < 2; ++i) {
      EXPECT_TRUE(reports[i][0].scratch_allocated);  // each stream has its own buffer
      EXPECT_FALSE(reports[i][1].scratch_allocated);
      EXPECT_FALSE(reports[i][2].scratch_allocated);
      EXPECT_GT(ozaki::scratch_bytes(spaces[i]), 0u);
      expect_matches_oracle(ops[i], reports[i][2], 6);
      ozaki::release_scratch(spaces[i]);
      EXPECT_EQ(ozaki::scratch_bytes(spaces[i]), 0u);
    }
  }
  cudaStreamDestroy(streams[0]);
  cudaStreamDestroy(streams[1]);
}

TEST(Cuda, NativeIsCublasDgemmOnTheCallersStream) {
  // Algorithm::Native runs cublasDgemm on the caller's stream, ordered after the work already
  // enqueued there: on a non-blocking stream (no implicit ordering with the default stream)
  // the operands are copied in asynchronously right before the call, and C must be, to the
  // bit, what cublasDgemm gives on the same stream.  Row-major operands reach cuBLAS
  // re-expressed in column-major form (C^T = B^T A^T), which is the same product.  (The
  // operands are staged by hand: from_host copies on the default instance, not the caller's.)
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cublasHandle_t handle;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  {
    const Kokkos::Cuda space(stream);
    const std::int64_t M = 333, N = 129, K = 1000;
    Random rng(41);
    const HostMatrix A = random_host(M, K, 1.0, rng), B = random_host(K, N, 1.0, rng);
    const HostMatrix C0 = random_host(M, N, 0.5, rng);
    const double alpha = 1.25, beta = -0.5;
    // The reference: column-major operands, cublasDgemm on the same stream.
    DeviceMatrix rA = make_matrix(M, K, Layout::Left), rB = make_matrix(K, N, Layout::Left);
    DeviceMatrix rC = make_matrix(M, N, Layout::Left);
    from_host(A, rA.view);
    from_host(B, rB.view);
    from_host(C0, rC.view);
    ASSERT_EQ(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, rA.left.data(), M,
                          rB.left.data(), K, &beta, rC.left.data(), M),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const HostMatrix reference = to_host(rC.view);
    for (const Layout layout : {Layout::Left, Layout::Right}) {
      DeviceMatrix dA = make_matrix(M, K, layout), dB = make_matrix(K, N, layout);
      DeviceMatrix dC = make_matrix(M, N, layout);
      // Staged on the host, copied in on the caller's stream only: nothing else orders them.
      auto stage = [&](const HostMatrix& h, const DeviceMatrix& d) {
        d.visit([&](const auto& v) {
          auto mirror = Kokkos::create_mirror_view(v);  // the same layout: one contiguous copy
          for (std::int64_t i = 0; i < h.rows; ++i)
            for (std::int64_t j = 0; j < h.cols; ++j) mirror(i, j) = h(i, j);
          Kokkos::deep_copy(space, v, mirror);
          return 0;
        });
      };
      stage(A, dA);
      stage(B, dB);
      stage(C0, dC);
      Options native;
      native.algorithm = ozaki::Algorithm::Native;
      const Report r = ozaki::gemm(space, "N", "N", alpha, dA.view, dB.view, beta, dC.view, native);
      space.fence();
      EXPECT_EQ(r.algorithm, ozaki::Algorithm::Native);
      EXPECT_EQ(r.backend, "cuBLAS");
      const HostMatrix C = to_host(dC.view);
      for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j)
          ASSERT_EQ(C(i, j), reference(i, j))
              << "layout " << int(layout) << " at " << i << ", " << j;
    }
  }
  cublasDestroy(handle);
  cudaStreamDestroy(stream);
}

TEST(Cuda, CallsInsideAGraphCaptureReplayWithNewData) {
  // A stream captured into a CUDA graph (docs/design.md §7, "Scheme II inside a graph").  Auto
  // at this small shape, and Int8Crt with Options::experimental.graph_products off, run native
  // FP64 GEMM on the stream.  By default Int8Crt runs scheme II with the count from the shape,
  // and at every launch the device decides from the data whether that count keeps the
  // promise.  Each launch gets new data: C is then the eager call's bits on that data, of the
  // captured count under the fast rule, where the verdict keeps it (iid data), and native FP64
  // GEMM's result where it does not (operands scaled against each other along k), so one graph
  // takes both branches.  Native results are checked against cublasDgemm within twice native's
  // bound (inside a graph cuBLAS may pick another kernel).  Eager calls before the capture make
  // the stream's cuBLAS handles and the library's streams for graphs.
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cublasHandle_t handle;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  {
    const Kokkos::Cuda space(stream);
    const std::int64_t M = 256, N = 192, K = 1024;
    DeviceMatrix dA = make_matrix(M, K, Layout::Left), dB = make_matrix(K, N, Layout::Left);
    DeviceMatrix dC = make_matrix(M, N, Layout::Left), rC = make_matrix(M, N, Layout::Left);
    Random rng(43);
    warm_up(space);
    Options crt;
    crt.algorithm = ozaki::Algorithm::Int8Crt;
    Options off = crt;
    off.experimental.graph_products = false;
    Options eager;
    eager.algorithm = ozaki::Algorithm::Int8Crt;
    eager.moduli = ozaki::Impl::crt_capture_moduli(K);
    eager.crt_scaling = ozaki::CrtScaling::Fast;
    for (const Options& o : {Options{}, off, crt}) {
      const bool products =
          o.algorithm == ozaki::Algorithm::Int8Crt && o.experimental.graph_products;
      HostMatrix A, B;
      const auto before = [&](int launch) {
        A = random_host(M, K, 0.5, rng);
        B = random_host(K, N, 0.5, rng);
        if (launch == 1) scale_against_each_other(A, B, 25, rng);  // no count is certified
        from_host(A, dA.view);
        from_host(B, dB.view);
        Kokkos::fence();
      };
      const auto after = [&](int launch) {
        const bool exact = products && launch != 1;
        if (exact) {
          ozaki::gemm(space, "N", "N", 1.0, dA.left, dB.left, 0.0, rC.left, eager);
        } else {
          const double one = 1, zero = 0;
          ASSERT_EQ(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA.left.data(), M,
                                dB.left.data(), K, &zero, rC.left.data(), M),
                    CUBLAS_STATUS_SUCCESS);
        }
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        const HostMatrix C = to_host(dC.view), R = to_host(rC.view);
        if (exact) {
          EXPECT_EQ(C.values, R.values) << "launch " << launch;
          return;
        }
        EXPECT_TRUE(agrees_with_native(C, R, A, B)) << "launch " << launch;
      };
      const Report r = capture_and_launch(
          stream,
          [&] { return ozaki::gemm(space, "N", "N", 1.0, dA.left, dB.left, 0.0, dC.left, o); }, 3,
          before, after);
      // Auto declines this shape from the shape alone, as it would uncaptured (dispatch.hpp,
      // capture_matters): its Report is the eager call's.
      const bool auto_declines = o.algorithm == ozaki::Algorithm::Auto;
      EXPECT_NE(r.reason.find(auto_declines ? "native FP64 GEMM is faster here"
                                            : "captured into a graph"),
                std::string::npos)
          << r.reason;
      EXPECT_EQ(r.algorithm, products ? ozaki::Algorithm::Int8Crt : ozaki::Algorithm::Native)
          << r.reason;
      // An explicit Int8Crt that ran native FP64 GEMM is a fallback, reported.
      EXPECT_EQ(r.fallback, o.algorithm == ozaki::Algorithm::Int8Crt && !products) << r.reason;
    }
  }
  cublasDestroy(handle);
  cudaStreamDestroy(stream);
}

TEST(Cuda, LibraryAndCublasCallsInOneProcess) {
  // ozaki::gemm on this program's Kokkos and cublasDgemm on the same stream, interleaved.
  // Run plain, cublasDgemm is cuBLAS's; run under LD_PRELOAD=libozaki_cublas.so with
  // OZAKI_CUBLAS=force (ctest interposer_beside_library), it goes through the interposer's own
  // ozaki and Kokkos, hidden from this program's: every C stays within 2^-50 of
  // (|A||B|)_mn against double-double, both paths on one stream in order.
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cublasHandle_t handle;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  {
    const Kokkos::Cuda space(stream);
    const std::int64_t M = 640, N = 576, K = 1024;
    Options crt;
    crt.algorithm = ozaki::Algorithm::Int8Crt;
    for (int round = 0; round < 2; ++round) {
      Operands lib = make_operands(M, N, K, 0.5, 60 + round);
      Operands blas = make_operands(M, N, K, 0.5, 70 + round);
      const Report r =
          ozaki::gemm(space, "N", "N", 1.0, lib.dA.left, lib.dB.left, 0.0, lib.dC.left, crt);
      const double one = 1, zero = 0;
      ASSERT_EQ(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, blas.dA.left.data(), M,
                            blas.dB.left.data(), K, &zero, blas.dC.left.data(), M),
                CUBLAS_STATUS_SUCCESS);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      EXPECT_EQ(r.algorithm, ozaki::Algorithm::Int8Crt) << r.reason;
      for (const Operands* o : {&lib, &blas}) {
        HostMatrix ref = o->C0;
        ozaki::serial::dd_gemm('N', 'N', 1.0, o->A.cref(), o->B.cref(), 0.0, ref.ref());
        const auto abs_ab = abs_product('N', 'N', o->A, o->B);
        const HostMatrix C = to_host(o->dC.view);
        for (std::size_t i = 0; i < C.values.size(); ++i) {
          ASSERT_LE(std::fabs(C.values[i] - ref.values[i]), 0x1p-50 * abs_ab[i])
              << (o == &lib ? "ozaki::gemm" : "cublasDgemm") << ", element " << i;
        }
      }
    }
  }
  cublasDestroy(handle);
  cudaStreamDestroy(stream);
}

TEST(Cuda, FourThreadsOnTheirOwnInstancesGetTheBitsOfCallsRunAlone) {
  // Four host threads, each with its own stream and execution-space instance, each a
  // different algorithm (the library's scratch, cuBLAS handles and side streams are per
  // instance), all calling at once; then every call again alone on the default instance with
  // the options its Report gives, and on Kokkos::Serial: bitwise the same C.
  constexpr int threads = 4;
  cudaStream_t streams[threads];
  for (cudaStream_t& s : streams) ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  {
    std::vector<Kokkos::Cuda> spaces;
    std::vector<Operands> ops;
    for (int i = 0; i < threads; ++i) {
      spaces.emplace_back(streams[i]);
      ops.push_back(
          make_operands(200 + 37 * i, 300 - 29 * i, 900 + 111 * i, i < 2 ? 0.5 : 3.0, 40 + i));
    }
    Options options[threads];
    options[0].algorithm = ozaki::Algorithm::Int8Crt;  // automatic count, Auto scaling
    options[1].algorithm = ozaki::Algorithm::Int8Crt;
    options[1].experimental.crt_pass_columns = 64;  // several passes, overlapped
    options[1].experimental.overlap = true;
    options[2].algorithm = ozaki::Algorithm::Int8Crt;
    options[2].crt_scaling = ozaki::CrtScaling::Accurate;
    options[3].algorithm = ozaki::Algorithm::Int8Slices;  // automatic S
    Report reports[threads];
    std::vector<HostMatrix> together(threads);
    auto work = [&](int i) {
      for (int round = 0; round < 3; ++round) {
        reports[i] = ozaki::gemm(spaces[i], "N", "N", 1.0, ops[i].dA.left, ops[i].dB.left, 0.0,
                                 ops[i].dC.left, options[i]);
      }
      spaces[i].fence();
    };
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) pool.emplace_back(work, i);
    for (std::thread& t : pool) t.join();
    for (int i = 0; i < threads; ++i) together[i] = to_host(ops[i].dC.view);
    for (int i = 0; i < threads; ++i) {
      ASSERT_NE(reports[i].algorithm, ozaki::Algorithm::Native) << i << ": " << reports[i].reason;
      from_host(ops[i].C0, ops[i].dC.view);
      ozaki::gemm("N", "N", 1.0, ops[i].dA.left, ops[i].dB.left, 0.0, ops[i].dC.left,
                  reports[i].options);
      EXPECT_EQ(to_host(ops[i].dC.view).values, together[i].values) << "thread " << i;
      // And on the host: CPU checking by equality.
      Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> A("A", ops[i].A.rows,
                                                                      ops[i].A.cols),
          B("B", ops[i].B.rows, ops[i].B.cols), C("C", ops[i].C0.rows, ops[i].C0.cols);
      std::copy(ops[i].A.values.begin(), ops[i].A.values.end(), A.data());
      std::copy(ops[i].B.values.begin(), ops[i].B.values.end(), B.data());
      const Report host =
          ozaki::gemm(Kokkos::Serial(), "N", "N", 1.0, A, B, 0.0, C, reports[i].options);
      EXPECT_EQ(host.algorithm, reports[i].algorithm);
      EXPECT_TRUE(std::equal(together[i].values.begin(), together[i].values.end(), C.data()))
          << "thread " << i << ": Serial differs";
      ozaki::release_scratch(spaces[i]);
    }
  }
  for (cudaStream_t s : streams) cudaStreamDestroy(s);
}

/// Turns scheme II's residue products (ResidueGemmBackend) off for one scope.
struct WithoutResidueProducts : ScopedHooks {
  WithoutResidueProducts()
      : ScopedHooks([](ozaki::Experimental::TestHooks& h) { h.residue_products_off = true; }) {}
};

/// Runs the product kernel's CTAs one per tile (no clusters sharing B) for one scope.
struct WithoutProductPairs : ScopedHooks {
  WithoutProductPairs()
      : ScopedHooks([](ozaki::Experimental::TestHooks& h) { h.product_pairs_off = true; }) {}
};

TEST(Cuda, ResidueProductsGiveTheBitsOfInt32Products) {
  // On compute capability 9.0 the pass products are reduced modulo the moduli in the GEMM
  // (residue_products_sm90.cu) and the reconstruction reads residue tiles: C must be the bits
  // of cublasGemmEx's INT32 products reduced in the reconstruction, and of Kokkos::Serial.
  // Shapes cut tiles (128 x 256) and K steps (128) anywhere, with several passes (the last
  // narrower), overlap, transposes, alpha and beta, counts from 6 to 24 (fewer leave too few bits
  // at these K), exponent spreads; odd and even counts of row tiles, whose CTAs run in pairs
  // sharing B's tiles (a last row tile without a partner), and the same with one CTA a tile.
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, TestSpace().cuda_device()), cudaSuccess);
  const bool hopper = prop.major == 9 && prop.minor == 0;
  struct Case {
    std::int64_t M, N, K;
    int moduli;
    double phi;
    const char* ta;
    const char* tb;
    std::int64_t pass_columns;
    bool overlap;
  };
  const Case cases[] = {
      {300, 200, 1000, 14, 0.5, "N", "N", 0, false},
      {129, 257, 130, 7, 0.5, "T", "N", 0, false},
      {1000, 900, 2500, 14, 1.0, "N", "T", 384, false},
      {513, 700, 1408, 19, 2.0, "T", "T", 256, true},
      {260, 1030, 4100, 24, 0.5, "N", "N", 512, false},
      {64, 33, 16, 6, 0.5, "N", "N", 0, false},
  };
  const TestSpace space;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.M) + "x" + std::to_string(c.N) + "x" + std::to_string(c.K) +
                 " L=" + std::to_string(c.moduli) + " " + c.ta + c.tb);
    Random rng(1000 + c.M + c.N + c.K);
    const bool ta = *c.ta == 'T', tb = *c.tb == 'T';
    const HostMatrix A = random_host(ta ? c.K : c.M, ta ? c.M : c.K, c.phi, rng);
    const HostMatrix B = random_host(tb ? c.N : c.K, tb ? c.K : c.N, c.phi, rng);
    const HostMatrix C0 = random_host(c.M, c.N, 0.5, rng);
    DeviceMatrix dA = make_matrix(A.rows, A.cols, Layout::Left);
    DeviceMatrix dB = make_matrix(B.rows, B.cols, Layout::Left);
    DeviceMatrix dC = make_matrix(c.M, c.N, Layout::Left);
    from_host(A, dA.view);
    from_host(B, dB.view);
    Options o;
    o.algorithm = ozaki::Algorithm::Int8Crt;
    o.moduli = c.moduli;
    o.crt_scaling = ozaki::CrtScaling::Fast;
    if (c.pass_columns != 0) o.experimental.crt_pass_columns = c.pass_columns;
    o.experimental.overlap = c.overlap;
    auto call = [&] {
      from_host(C0, dC.view);
      const Report r = ozaki::gemm(space, c.ta, c.tb, -0.75, dA.left, dB.left, 1.25, dC.left, o);
      return std::make_pair(r, to_host(dC.view));
    };
    const auto tiles = call();
    std::pair<Report, HostMatrix> int32, unpaired;
    {
      const WithoutResidueProducts off;
      int32 = call();
    }
    {
      const WithoutProductPairs off;
      unpaired = call();
    }
    ASSERT_EQ(tiles.first.algorithm, ozaki::Algorithm::Int8Crt) << tiles.first.reason;
    EXPECT_EQ(tiles.first.residue_products, hopper);
    EXPECT_FALSE(int32.first.residue_products);
    EXPECT_EQ(tiles.first.moduli, c.moduli);
    if (c.pass_columns != 0) EXPECT_GE(tiles.first.recombine_passes, 2);
    EXPECT_EQ(tiles.second.values, int32.second.values);
    EXPECT_EQ(unpaired.second.values, int32.second.values) << "one CTA a tile";
    // And the host's bits.
    Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> hA("A", A.rows, A.cols),
        hB("B", B.rows, B.cols), hC("C", c.M, c.N);
    std::copy(A.values.begin(), A.values.end(), hA.data());
    std::copy(B.values.begin(), B.values.end(), hB.data());
    std::copy(C0.values.begin(), C0.values.end(), hC.data());
    ozaki::gemm(Kokkos::Serial(), c.ta, c.tb, -0.75, hA, hB, 1.25, hC, o);
    EXPECT_TRUE(std::equal(tiles.second.values.begin(), tiles.second.values.end(), hC.data()))
        << "Serial differs";
  }
}

TEST(Cuda, LibraryLimitTakesTheNarrowestPassesWhereItsWidePassesCannotBeAllocated) {
  // M = K = 8192: under the library's limit Int8Crt takes 2048-column passes, 2 for N = 4096.
  // With every allocation above the midpoint between that need and the need of 1024-column
  // passes failing, the call runs again with those (4 passes), says so, and gives the bits of
  // the call whose explicit limit asks for them, and of the unhindered call (pass widths
  // change no bits: Crt.PassWidthsChangeNoBits).
  const std::int64_t M = 8192, N = 4096, K = 8192;
  const Operands ops = make_operands(M, N, K, 0.5, 8);
  const TestSpace space;
  Options library;
  library.algorithm = ozaki::Algorithm::Int8Crt;
  library.moduli = 14;
  library.crt_scaling = ozaki::CrtScaling::Fast;
  Options narrowest = library;
  narrowest.workspace_limit = 1;
  auto call = [&](const Options& o) {
    from_host(ops.C0, ops.dC.view);
    const Report r =
        ozaki::gemm(space, "N", "N", 1.0, ops.dA.left, ops.dB.left, 0.0, ops.dC.left, o);
    return std::make_pair(r, to_host(ops.dC.view));
  };
  const auto unhindered = call(library);
  EXPECT_EQ(unhindered.first.recombine_passes, 2);
  EXPECT_TRUE(unhindered.first.reason.empty()) << unhindered.first.reason;
  const auto asked = call(narrowest);
  EXPECT_EQ(asked.first.recombine_passes, 4);
  const std::size_t wide_bytes = ozaki::Workspace<TestSpace>::required_bytes(M, N, K, library);
  const std::size_t narrow_bytes = ozaki::Workspace<TestSpace>::required_bytes(M, N, K, narrowest);
  ASSERT_GT(wide_bytes, narrow_bytes + (std::size_t(256) << 20));
  ozaki::release_scratch(space);
  std::pair<Report, HostMatrix> retried;
  {
    const FailScratchAbove fail((wide_bytes + narrow_bytes) / 2);
    retried = call(library);
  }
  ozaki::release_scratch(space);
  const Report& r = retried.first;
  EXPECT_EQ(r.algorithm, ozaki::Algorithm::Int8Crt);
  EXPECT_FALSE(r.fallback);
  EXPECT_EQ(r.recombine_passes, 4);
  EXPECT_LE(r.workspace_bytes, (wide_bytes + narrow_bytes) / 2);
  EXPECT_NE(r.reason.find("could not allocate"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("1024 columns"), std::string::npos) << r.reason;
  EXPECT_FALSE(r.options.workspace_limit.has_value());  // the caller's options, as replayed
  EXPECT_EQ(retried.second.values, asked.second.values);
  EXPECT_EQ(retried.second.values, unhindered.second.values);
}

TEST(Cuda, EmulationWorkspaceBeyondTheLimitFallsBackToInt8Slices) {
  const Operands ops = make_operands(64, 48, 256, 0.5, 3);
  Options o;
  o.algorithm = ozaki::Algorithm::CublasEmulation;
  o.slices = 7;
  o.workspace_limit = 1 << 20;  // cuBLAS's documented bound is at least 128 MiB
  const Report r =
      ozaki::gemm(TestSpace(), "N", "N", 1.0, ops.dA.left, ops.dB.left, 0.0, ops.dC.left, o);
  EXPECT_TRUE(r.fallback);
  EXPECT_EQ(r.algorithm, ozaki::Algorithm::Int8Slices);
  EXPECT_NE(r.reason.find("workspace"), std::string::npos) << r.reason;
  expect_matches_oracle(ops, r, 7);
}

TEST(Cuda, EmulationIsAccurateWhereItRuns) {
  const Operands ops = make_operands(128, 96, 512, 0.5, 4);
  Options o;
  o.algorithm = ozaki::Algorithm::CublasEmulation;
  o.workspace_limit = std::int64_t(4) << 30;
  for (std::optional<int> S : {std::optional<int>(ozaki::auto_slices), std::optional<int>(7)}) {
    o.slices = S;
    from_host(ops.C0, ops.dC.view);
    const Report r =
        ozaki::gemm(TestSpace(), "N", "N", 1.0, ops.dA.left, ops.dB.left, 0.0, ops.dC.left, o);
    ASSERT_EQ(r.algorithm, ozaki::Algorithm::CublasEmulation) << r.reason;
    EXPECT_FALSE(r.fallback);
    HostMatrix ref = ops.C0;
    ozaki::serial::dd_gemm('N', 'N', 1.0, ops.A.cref(), ops.B.cref(), 0.0, ref.ref());
    const double err =
        normwise_error(to_host(ops.dC.view), ref, abs_product('N', 'N', ops.A, ops.B));
    // 55 bits (or cuBLAS's FP64-equivalent choice): the error is at FP64 level, far below the
    // 2^-40 that a missing or wrong emulation setting would leave (native DGEMM is ~1e-16).
    EXPECT_LT(err, 0x1p-48) << "S = " << (S ? std::to_string(*S) : std::string("auto"));
  }
}

TEST(Cuda, AutoFollowsTheDeviceThroughput) {
  const Operands ops = make_operands(256, 256, 4096, 0.5, 5);
  int device = 0;
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaGetDeviceProperties(&prop, device), cudaSuccess);
  const double ratio = ozaki::Impl::Int8Gemm<Kokkos::Cuda>::int8_over_fp64_throughput(TestSpace());
  Options fp64;  // Auto, automatic S and moduli: FP64-equivalent accuracy
  const Report full =
      ozaki::gemm(TestSpace(), "N", "N", 1.0, ops.dA.left, ops.dB.left, 0.0, ops.dC.left, fp64);
  Options fewer_bits;
  fewer_bits.slices = 3;  // 6 triangular products
  const Report cheap = ozaki::gemm(TestSpace(), "N", "N", 1.0, ops.dA.left, ops.dB.left, 0.0,
                                   ops.dC.left, fewer_bits);
  Options scheme_one;  // Auto with a slice count: scheme I at FP64 accuracy
  scheme_one.algorithm = ozaki::Algorithm::Auto;
  scheme_one.slices = 7;  // 28 triangular products
  const Report slices7 = ozaki::gemm(TestSpace(), "N", "N", 1.0, ops.dA.left, ops.dB.left, 0.0,
                                     ops.dC.left, scheme_one);
  if (prop.major == 9 && prop.minor == 0) {
    // H100/H200: at FP64 accuracy scheme II's ~14 moduli would beat DGEMM on large squares,
    // but not on 256 x 256 outputs, where residues and reconstruction cost more than the
    // products save; scheme I's 28 products at S = 7 cost more anyway, 6 at S = 3 do not.
    EXPECT_EQ(full.algorithm, ozaki::Algorithm::Native) << full.reason;
    EXPECT_NE(full.reason.find("Int8Crt"), std::string::npos) << full.reason;
    EXPECT_EQ(slices7.algorithm, ozaki::Algorithm::Native) << slices7.reason;
    EXPECT_NE(slices7.reason.find("Auto"), std::string::npos);
    EXPECT_FALSE(slices7.fallback);
  }
  EXPECT_EQ(cheap.algorithm, ozaki::Algorithm::Int8Slices) << "throughput ratio " << ratio;
  EXPECT_EQ(cheap.backend, "cuBLAS");
}

TEST(Cuda, AutoTakesNativeOnWideRangesFromASampleOfRows) {
  // 8192 x 8192 x 4096 at phi = 4: Auto's first guess is scheme II (it wins at phi = 0.5), but
  // the accurate rule such a range needs makes native faster on the H200; a sample of rows
  // shows it before any pass over A and B.  C is then native FP64 GEMM's, to the bit.
  int device = 0;
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaGetDeviceProperties(&prop, device), cudaSuccess);
  const Operands ops = make_operands(8192, 8192, 4096, 4.0, 6);
  ozaki::release_scratch(TestSpace());
  const Report automatic =
      ozaki::gemm(TestSpace(), "N", "N", 1.0, ops.dA.left, ops.dB.left, 0.0, ops.dC.left);
  if (prop.major == 9 && prop.minor == 0) {  // the cost model's rates are sm_90's
    EXPECT_EQ(automatic.algorithm, ozaki::Algorithm::Native) << automatic.reason;
    EXPECT_NE(automatic.reason.find("a sample of rows"), std::string::npos) << automatic.reason;
    // At most the sample's codes (2 x 64 rows of K bytes) and statistics: not the call's scratch.
    EXPECT_LE(ozaki::scratch_bytes(TestSpace()), std::size_t(2 * 64 * 4096 + 4096));
  }
  ASSERT_TRUE(automatic.algorithm == ozaki::Algorithm::Native ||
              automatic.algorithm == ozaki::Algorithm::Int8Crt);
  if (automatic.algorithm == ozaki::Algorithm::Native) {
    const HostMatrix auto_c = to_host(ops.dC.view);
    Options native;
    native.algorithm = ozaki::Algorithm::Native;
    ozaki::gemm(TestSpace(), "N", "N", 1.0, ops.dA.left, ops.dB.left, 0.0, ops.dC.left, native);
    EXPECT_EQ(to_host(ops.dC.view).values, auto_c.values);
  }
}

TEST(Cuda, AutoRunsTheCountedRuleOnWideRangesWhereItPays) {
  // 8192^3 at phi = 2: rows too peaked for the fast model (K q_A q_B in the hundreds), so
  // Auto takes the counted fast rule with the count from 64 x 64 sampled entries; on
  // compute capability 9.0 (the cost model's rates are the H200's) that count makes scheme II
  // faster than native.  The count must be the sample's (sampled_counted_ratio on the same
  // operands); on every device the error on sampled entries is no worse than native FP64
  // GEMM's, both against double-double, whatever Auto ran.
  int device = 0;
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaGetDeviceProperties(&prop, device), cudaSuccess);
  const bool hopper = prop.major == 9 && prop.minor == 0;
  const std::int64_t n = 8192;
  const Operands ops = make_operands(n, n, n, 2.0, 21);
  const Report automatic =
      ozaki::gemm(TestSpace(), "N", "N", 1.0, ops.dA.left, ops.dB.left, 0.0, ops.dC.left);
  ASSERT_TRUE(automatic.algorithm == ozaki::Algorithm::Int8Crt ||
              automatic.algorithm == ozaki::Algorithm::Native)
      << automatic.reason;
  if (hopper) {
    ASSERT_EQ(automatic.algorithm, ozaki::Algorithm::Int8Crt) << automatic.reason;
    EXPECT_EQ(automatic.crt_scaling, ozaki::CrtScaling::Fast);
    EXPECT_NE(automatic.reason.find("sampled entries"), std::string::npos) << automatic.reason;
    // The count comes from the sample, without an INT8 product; certifying its componentwise
    // bound takes the window product over every entry (one per K chunk, here one) where the
    // coverage certificate alone does not hold it (docs/design.md §5.7).
    EXPECT_LE(automatic.estimate_int8_gemms, 1);
    EXPECT_GT(automatic.error_bound, 0.0);
    EXPECT_LE(automatic.error_bound, ozaki::Impl::native_componentwise_bound(n));
    // The sample's G on the same operands: op(A) = A, op(B)^T = B^T (B's columns as rows).
    const V::ConstMatrix opA = ops.dA.view;
    const V::ConstMatrix opBt(ops.dB.left.data(), Kokkos::LayoutStride(n, n, n, 1));
    V::Digits codes("codes", 2 * ozaki::Impl::counted_sample_rows, n);
    V::Rows stats("stats", 2 * ozaki::Impl::counted_sample_rows, 2);
    const double G = ozaki::Impl::sampled_counted_ratio(TestSpace(), opA, opBt, codes, stats);
    EXPECT_EQ(automatic.moduli,
              ozaki::Impl::crt_counted_moduli(n, G, ozaki::Impl::fp64_unit_roundoff))
        << "G = " << G;
  }
  const HostMatrix C_auto = to_host(ops.dC.view);
  Options native;
  native.algorithm = ozaki::Algorithm::Native;
  ozaki::gemm(TestSpace(), "N", "N", 1.0, ops.dA.left, ops.dB.left, 0.0, ops.dC.left, native);
  const HostMatrix C_native = to_host(ops.dC.view);
  double err = 0, err_native = 0;
  Random pick(5);
  for (int i = 0; i < 256; ++i) {
    const std::int64_t m = static_cast<std::int64_t>(pick.uniform() * n);
    const std::int64_t c = static_cast<std::int64_t>(pick.uniform() * n);
    const ozaki::serial::DoubleDouble ref = ozaki::serial::dd_dot(ops.A.cref(), ops.B.cref(), m, c);
    double abs_ab = 0;
    for (std::int64_t k = 0; k < n; ++k) abs_ab += std::fabs(ops.A(m, k) * ops.B(k, c));
    err = std::max(err, std::fabs((C_auto(m, c) - ref.hi) - ref.lo) / abs_ab);
    err_native = std::max(err_native, std::fabs((C_native(m, c) - ref.hi) - ref.lo) / abs_ab);
  }
  EXPECT_GT(err_native, 0.0);
  EXPECT_LE(err, err_native) << automatic.moduli << " moduli";
}

}  // namespace
