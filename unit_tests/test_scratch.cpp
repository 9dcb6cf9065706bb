// The plain call's scratch (ozaki/scratch.hpp): owned by the library per execution space
// instance, allocated by the first call and reused, never keyed on data, bounded by the
// workspace limit, released on request; its results are the same bits as a Workspace call's.
#include "common.hpp"

#include <ozaki/serial/crt.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace scratch_test {

using ozaki_test::MemSpace;
using ozaki_test::TestSpace;

/// C = alpha A B + beta C by plain dot products on `space`: the "caller's own native GEMM" of
/// the Options::experimental.native_gemm test.
inline void dot_product_gemm(const TestSpace& space, double alpha,
                             const Kokkos::View<double**, Kokkos::LayoutStride, MemSpace>& A,
                             const Kokkos::View<double**, Kokkos::LayoutStride, MemSpace>& B,
                             double beta,
                             const Kokkos::View<double**, Kokkos::LayoutStride, MemSpace>& C) {
  const std::int64_t M = C.extent(0), K = A.extent(1);
  Kokkos::parallel_for(
      "test::dot_product_gemm",
      Kokkos::RangePolicy<TestSpace, Kokkos::IndexType<std::int64_t>>(space, 0, M * C.extent(1)),
      KOKKOS_LAMBDA(const std::int64_t idx) {
        const std::int64_t i = idx % M, j = idx / M;
        double sum = 0;
        for (std::int64_t k = 0; k < K; ++k) sum += A(i, k) * B(k, j);
        C(i, j) = alpha * sum + beta * C(i, j);
      });
}

}  // namespace scratch_test

namespace {

using namespace ozaki_test;
using ozaki::Options;
using ozaki::Report;

struct Problem {
  HostMatrix A, B, C0;
  DeviceMatrix dA, dB, dC;
};

Problem make_problem(std::int64_t M, std::int64_t N, std::int64_t K, double phi,
                     std::uint64_t seed) {
  Random rng(seed);
  Problem p;
  p.A = random_host(M, K, phi, rng);
  p.B = random_host(K, N, phi, rng);
  p.C0 = random_host(M, N, 0.5, rng);
  p.dA = device_copy(p.A, Layout::Left);
  p.dB = device_copy(p.B, Layout::Right);
  p.dC = device_copy(p.C0, Layout::Left);
  return p;
}

/// The plain call (no Workspace), on `space`, from C0.
Report plain_call(const TestSpace& space, Problem& p, const Options& o) {
  from_host(p.C0, p.dC.view);
  return ozaki::gemm(space, "N", "N", 1.5, p.dA.left, p.dB.right, 0.25, p.dC.left, o);
}

Options crt(std::optional<int> moduli) {
  Options o;
  o.algorithm = ozaki::Algorithm::Int8Crt;
  o.moduli = moduli;
  return o;
}

TEST(LibraryScratch, FirstCallAllocatesLaterCallsReuseAndGiveWorkspaceBits) {
  const TestSpace space;
  ozaki::release_scratch(space);
  Problem p = make_problem(70, 45, 130, 1.0, 1);
  Options slices;  // scheme I with an automatic S (its estimate's scratch, then its slices)
  slices.algorithm = ozaki::Algorithm::Int8Slices;
  for (const Options& o : {crt(16), slices}) {
    ozaki::release_scratch(space);
    const Report first = plain_call(space, p, o);
    EXPECT_TRUE(first.scratch_allocated) << ozaki::to_string(first.algorithm);
    EXPECT_LE(first.workspace_bytes, ozaki::scratch_bytes(space));
    EXPECT_GT(first.workspace_bytes, 0u);
    const HostMatrix first_c = to_host(p.dC.view);
    const Report second = plain_call(space, p, o);
    EXPECT_FALSE(second.scratch_allocated);
    EXPECT_EQ(to_host(p.dC.view).values, first_c.values);
    // The same options with a caller-owned Workspace give the same bits.
    ozaki::Workspace<TestSpace> ws(space);
    from_host(p.C0, p.dC.view);
    const Report tuned =
        ozaki::gemm(space, "N", "N", 1.5, p.dA.left, p.dB.right, 0.25, p.dC.left, o, ws);
    EXPECT_TRUE(tuned.scratch_allocated);
    EXPECT_EQ(to_host(p.dC.view).values, first_c.values);
    EXPECT_EQ(tuned.moduli, first.moduli);
    EXPECT_EQ(tuned.slices, first.slices);
  }
  // Native FP64 GEMM takes no scratch.
  Options native;
  native.algorithm = ozaki::Algorithm::Native;
  ozaki::release_scratch(space);
  const Report r = plain_call(space, p, native);
  EXPECT_FALSE(r.scratch_allocated);
  EXPECT_EQ(r.workspace_bytes, 0u);
  EXPECT_EQ(ozaki::scratch_bytes(space), 0u);
}

TEST(LibraryScratch, NewContentsAtTheSamePointersGiveTheNewProduct) {
  const TestSpace space;
  Problem p = make_problem(40, 30, 90, 0.5, 2);
  const Options o = crt(15);
  plain_call(space, p, o);
  Random rng(3);
  for (int call = 0; call < 2; ++call) {
    for (double& a : p.A.values) a = rng.spread(2.0);
    from_host(p.A, p.dA.view);
    const Report r = plain_call(space, p, o);
    EXPECT_FALSE(r.scratch_allocated);
    // Against a fresh Workspace on the new contents: bitwise the same.
    const HostMatrix got = to_host(p.dC.view);
    ozaki::Workspace<TestSpace> ws(space);
    from_host(p.C0, p.dC.view);
    ozaki::gemm(space, "N", "N", 1.5, p.dA.left, p.dB.right, 0.25, p.dC.left, o, ws);
    EXPECT_EQ(got.values, to_host(p.dC.view).values) << "call " << call;
    // And within scheme II's documented bound of the double-double reference.
    HostMatrix ref = p.C0, oracle = p.C0;
    ozaki::serial::dd_gemm('N', 'N', 1.5, p.A.cref(), p.B.cref(), 0.25, ref.ref());
    const ozaki::serial::CrtScale scale = ozaki::serial::crt_gemm(
        'N', 'N', 1.5, p.A.cref(), p.B.cref(), 0.25, oracle.ref(), r.moduli, r.crt_scaling);
    const std::vector<double> bound = ozaki::serial::crt_error_bound(
        'N', 'N', 1.5, p.A.cref(), p.B.cref(), 0.25, p.C0.cref(), scale, 0);
    for (std::size_t i = 0; i < ref.values.size(); ++i) {
      ASSERT_LE(std::fabs(got.values[i] - ref.values[i]),
                bound[i] + 0x1p-53 * std::fabs(ref.values[i]))
          << i;
    }
  }
}

TEST(LibraryScratch, GrowsOnlyForLargerCallsAndReleaseFreesIt) {
  const TestSpace space;
  ozaki::release_scratch(space);
  EXPECT_EQ(ozaki::scratch_bytes(space), 0u);
  Problem small = make_problem(20, 20, 40, 0.5, 4), large = make_problem(90, 60, 200, 0.5, 5);
  const Options o = crt(14);
  EXPECT_TRUE(plain_call(space, large, o).scratch_allocated);
  const std::size_t held = ozaki::scratch_bytes(space);
  EXPECT_FALSE(plain_call(space, small, o).scratch_allocated);  // fits what is held
  EXPECT_EQ(ozaki::scratch_bytes(space), held);
  ozaki::release_scratch(space);
  EXPECT_EQ(ozaki::scratch_bytes(space), 0u);
  EXPECT_TRUE(plain_call(space, small, o).scratch_allocated);
  EXPECT_LT(ozaki::scratch_bytes(space), held);
}

// Every scratch buffer starts at a 256-byte boundary, whatever the allocator's own alignment
// (a Kokkos View's data follows a 128-byte header): Carver's pieces are then 256-aligned in
// absolute terms, which cuBLASLt's Hopper INT8 kernels require (scratch.hpp).  The buffer
// reports the bytes asked for, and growing keeps both promises.
TEST(Scratch, BuffersStartAt256ByteBoundariesAndReportTheBytesAskedFor) {
  ozaki::Impl::ScratchBuffer<TestSpace> buffer;
  EXPECT_EQ(buffer.bytes(), 0u);
  for (const std::size_t bytes : {std::size_t(1), std::size_t(255), std::size_t(4096),
                                  std::size_t(100000), std::size_t(1) << 22}) {
    unsigned char* base = buffer.reserve(bytes);
    EXPECT_EQ(base, buffer.data());
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(base) % 256, 0u) << bytes;
    EXPECT_EQ(buffer.bytes(), bytes);
    // The last byte asked for is inside the allocation: writing it must not fault, and a
    // later read gives it back.
    Kokkos::View<unsigned char*, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> tail(
        base + bytes - 1, 1);
    Kokkos::deep_copy(tail, static_cast<unsigned char>(0x3c));
    unsigned char back = 0;
    Kokkos::deep_copy(back, Kokkos::subview(tail, 0));
    EXPECT_EQ(back, 0x3c) << bytes;
  }
  EXPECT_EQ(buffer.reserve(10), buffer.data());  // fits: no new allocation
  EXPECT_EQ(buffer.bytes(), std::size_t(1) << 22);
  buffer.release();
  EXPECT_EQ(buffer.bytes(), 0u);
}

TEST(LibraryScratch, StaysWithinTheWorkspaceLimit) {
  const TestSpace space;
  ozaki::release_scratch(space);
  Problem p = make_problem(64, 3000, 64, 0.5, 6);
  Options o = crt(14);
  // Room for op(A)'s residues and about 1100 columns per pass: 3 passes (M and K padded as
  // the backend pads them: 16 portable, 128 cuBLAS), besides the norm tiles (3 doubles per row
  // and 32 columns) and 200 kB for the other per-row data.
  const std::int64_t pad = ozaki::Impl::Int8Gemm<TestSpace>::padding;
  const std::int64_t padded = (64 + pad - 1) / pad * pad;
  const std::int64_t norm_tiles = 3 * 8 * (64 + 3000) * 2;
  o.workspace_limit =
      padded * 14 * padded + 1100 * (4 * 14 * padded + 14 * padded) + norm_tiles + 200000;
  const Report r = plain_call(space, p, o);
  EXPECT_GE(r.recombine_passes, 2);
  EXPECT_LE(ozaki::scratch_bytes(space), static_cast<std::size_t>(*o.workspace_limit));
}

TEST(LibraryScratch, ReportsTheDecisionsCost) {
  const TestSpace space;
  Problem p = make_problem(50, 50, 50, 0.5, 7);
  const Report automatic = plain_call(space, p, Options{});
  EXPECT_GT(automatic.seconds_decision, 0.0);
  EXPECT_LT(automatic.seconds_decision, 60.0);
  Options given = crt(15);
  given.crt_scaling = ozaki::CrtScaling::Fast;
  EXPECT_EQ(plain_call(space, p, given).seconds_decision, 0.0);  // nothing was decided
}

}  // namespace

namespace {

// A call whose automatic count needs more scratch than its first reservation grows the buffer
// mid-call and redoes what it had stored (exponents, copies, pass 1).  Regression: the redo
// once carved from the freed buffer, so the first such call of a process gave a wrong C
// (found by test_exit).  Under OZAKI_POISON_SCRATCH (set for every test) the freed buffer
// holds 0xA5 bytes, so the stale views give a wrong C every time.
TEST(Scratch, GrowingMidCallGivesTheBitsOfACallThatFits) {
  const TestSpace space;
  Problem p = make_problem(37, 53, 300, 2.0, 8);  // automatic S = 9, above the assumed 8
  Options automatic;
  automatic.algorithm = ozaki::Algorithm::Int8Slices;
  Options crt_auto = crt(ozaki::auto_moduli);
  crt_auto.crt_scaling = ozaki::CrtScaling::Accurate;
  for (const Options& o : {automatic, crt_auto}) {
    ozaki::Workspace<TestSpace> grows(space);  // empty: the first reservation is a guess
    from_host(p.C0, p.dC.view);
    const Report first =
        ozaki::gemm(space, "N", "N", 1.5, p.dA.left, p.dB.right, 0.25, p.dC.left, o, grows);
    const HostMatrix got = to_host(p.dC.view);
    // The same counts given explicitly, in a Workspace sized for them up front.
    Options fixed = first.options;
    ozaki::Workspace<TestSpace> fits(space, 37, 53, 300, fixed);
    from_host(p.C0, p.dC.view);
    const Report second =
        ozaki::gemm(space, "N", "N", 1.5, p.dA.left, p.dB.right, 0.25, p.dC.left, fixed, fits);
    EXPECT_FALSE(second.scratch_allocated);
    EXPECT_EQ(to_host(p.dC.view).values, got.values) << ozaki::to_string(first.algorithm);
    HostMatrix ref = p.C0;
    ozaki::serial::dd_gemm('N', 'N', 1.5, p.A.cref(), p.B.cref(), 0.25, ref.ref());
    const auto errors = normwise_error(got, ref, abs_product('N', 'N', p.A, p.B));
    EXPECT_LT(errors, 1e-15) << ozaki::to_string(first.algorithm);
  }
}

TEST(Scratch, OutOfMemoryThrowsForAnExplicitAlgorithmAndAutoFallsBackWithCUntouched) {
  const TestSpace space;
  Problem p = make_problem(64, 48, 200, 0.5, 9);
  Options slices;
  slices.algorithm = ozaki::Algorithm::Int8Slices;
  slices.slices = 7;
  for (const Options& o : {crt(14), slices}) {
    ozaki::release_scratch(space);
    from_host(p.C0, p.dC.view);
    const FailScratchAbove fail(1000);
    try {
      plain_call(space, p, o);
      ADD_FAILURE() << "no exception for " << ozaki::to_string(o.algorithm);
    } catch (const ozaki::BackendError& e) {
      EXPECT_NE(std::string(e.what()).find("could not allocate"), std::string::npos) << e.what();
    }
    EXPECT_EQ(to_host(p.dC.view).values, p.C0.values) << "C changed";
  }
  // Auto never throws for want of scratch: native FP64 GEMM, which needs none, with the
  // reason (the allocation's where Auto had chosen INT8 products, else the cost model's: this
  // small a product runs native on every space).
  ozaki::release_scratch(space);
  const FailScratchAbove fail(1000);
  const Report r = plain_call(space, p, Options{});
  EXPECT_EQ(r.algorithm, ozaki::Algorithm::Native);
  EXPECT_TRUE(!r.fallback || r.reason.find("could not allocate") != std::string::npos) << r.reason;
  EXPECT_FALSE(r.reason.empty());
  HostMatrix ref = p.C0;
  ozaki::serial::dd_gemm('N', 'N', 1.5, p.A.cref(), p.B.cref(), 0.25, ref.ref());
  EXPECT_LT(normwise_error(to_host(p.dC.view), ref, abs_product('N', 'N', p.A, p.B)), 1e-14);
}

TEST(Concurrency, FourHostThreadsOnOneSpaceGetTheBitsOfCallsRunAlone) {
  // Four host threads calling at once on default-constructed instances of the space, each a
  // different algorithm, two with the library's scratch and two with their own Workspace:
  // the bits of the same calls run one after the other.  (Kokkos keeps per-instance buffers,
  // and 3.4's host spaces one set for all threads: ozaki's calls on one instance take turns.)
  constexpr int threads = 4;
  std::vector<Problem> problems;
  Options options[threads];
  options[0] = crt(15);
  options[1].algorithm = ozaki::Algorithm::Int8Crt;     // automatic count, Auto scaling
  options[2].algorithm = ozaki::Algorithm::Int8Slices;  // automatic S
  options[3] = crt(16);
  options[3].crt_scaling = ozaki::CrtScaling::Accurate;
  for (int i = 0; i < threads; ++i)
    problems.push_back(
        make_problem(90 + 17 * i, 70 - 9 * i, 300 + 55 * i, i < 2 ? 0.5 : 2.5, 60 + i));
  // beta = 0, so that repeated rounds give the same C; the harness's copies (Views it
  // initialises) stay on this thread: Kokkos 3.4's OpenMP space is not initialised on others.
  auto call = [&](const TestSpace& space, int i, ozaki::Workspace<TestSpace>* ws) {
    Problem& p = problems[i];
    return ws ? ozaki::gemm(space, "N", "N", 1.5, p.dA.left, p.dB.right, 0.0, p.dC.left, options[i],
                            *ws)
              : ozaki::gemm(space, "N", "N", 1.5, p.dA.left, p.dB.right, 0.0, p.dC.left,
                            options[i]);
  };
  std::vector<HostMatrix> alone(threads);
  std::vector<std::unique_ptr<ozaki::Workspace<TestSpace>>> workspaces;
  for (int i = 0; i < threads; ++i) {
    workspaces.push_back(std::make_unique<ozaki::Workspace<TestSpace>>(TestSpace()));
    const Report r = call(TestSpace(), i, nullptr);
    EXPECT_NE(r.algorithm, ozaki::Algorithm::Native) << i << ": " << r.reason;
    alone[i] = to_host(problems[i].dC.view);
    from_host(problems[i].C0, problems[i].dC.view);
  }
  // Kokkos 3.x's OpenMP space runs only on the thread that initialised Kokkos: there every
  // call from another thread is refused before it starts, C untouched.
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  const bool refused_elsewhere = std::is_same<TestSpace, Kokkos::OpenMP>::value;
#else
  const bool refused_elsewhere = false;
#endif
  std::vector<int> refusals(threads, 0);
  auto work = [&](int i) {
    const TestSpace space;
    for (int round = 0; round < 3; ++round) {
      try {
        call(space, i, i % 2 ? workspaces[i].get() : nullptr);
      } catch (const ozaki::BackendError& e) {
        EXPECT_NE(std::string(e.what()).find("initialised Kokkos"), std::string::npos) << e.what();
        ++refusals[i];
      }
    }
    space.fence();
  };
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(work, i);
  for (std::thread& t : pool) t.join();
  for (int i = 0; i < threads; ++i) {
    EXPECT_EQ(refusals[i], refused_elsewhere ? 3 : 0) << "thread " << i;
    EXPECT_EQ(to_host(problems[i].dC.view).values,
              refused_elsewhere ? problems[i].C0.values : alone[i].values)
        << "thread " << i;
  }
}

TEST(NativeCallback, RunsInPlaceOfKokkosBlasWheneverTheCallRunsNative) {
  // Options::experimental.native_gemm (what the cuBLAS interposer passes: the caller's own DGEMM)
  // runs whenever a call runs native FP64 GEMM: Algorithm::Native, Auto's choice, the NaN/Inf
  // fallback; never where INT8 products run; and it is not kept in Report::options.
  const TestSpace space;
  Problem p = make_problem(33, 29, 200, 0.5, 21);
  int calls = 0;
  Options o;
  o.experimental.native_gemm = [&] {
    ++calls;
    scratch_test::dot_product_gemm(space, 1.5, p.dA.view, p.dB.view, 0.25, p.dC.view);
  };
  // Plain dot products of K terms: |c - ref| <= (K + 2) u (|alpha||A||B| + |beta C0|).
  auto expect_dot_product_result = [&](const char* what) {
    HostMatrix ref = p.C0;
    ozaki::serial::dd_gemm('N', 'N', 1.5, p.A.cref(), p.B.cref(), 0.25, ref.ref());
    const std::vector<double> abs_ab = abs_product('N', 'N', p.A, p.B);
    const HostMatrix got = to_host(p.dC.view);
    for (std::size_t idx = 0; idx < got.values.size(); ++idx) {
      const double scale = 1.5 * abs_ab[idx] + 0.25 * std::fabs(p.C0.values[idx]);
      ASSERT_LE(std::fabs(got.values[idx] - ref.values[idx]), 202 * 0x1p-53 * scale)
          << what << ": entry " << idx;
    }
  };
  o.algorithm = ozaki::Algorithm::Native;
  Report r = plain_call(space, p, o);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(r.algorithm, ozaki::Algorithm::Native);
  EXPECT_EQ(r.backend, "the caller's native GEMM");
  EXPECT_FALSE(static_cast<bool>(r.options.experimental.native_gemm));
  expect_dot_product_result("Algorithm::Native");
  o.algorithm = ozaki::Algorithm::Auto;  // this small a product runs native on every space
  r = plain_call(space, p, o);
  EXPECT_EQ(r.algorithm, ozaki::Algorithm::Native) << r.reason;
  EXPECT_EQ(calls, 2);
  expect_dot_product_result("Auto");
  o.algorithm = ozaki::Algorithm::Int8Crt;
  r = plain_call(space, p, o);
  EXPECT_EQ(r.algorithm, ozaki::Algorithm::Int8Crt);
  EXPECT_EQ(calls, 2) << "INT8 products ran, not the callback";
  // NaN in A: the IEEE result through native FP64 GEMM, which is the callback.
  p.A.values[5] = std::numeric_limits<double>::quiet_NaN();
  p.dA = device_copy(p.A, Layout::Left);
  r = plain_call(space, p, o);
  EXPECT_TRUE(r.fallback);
  EXPECT_EQ(calls, 3);
  const HostMatrix got = to_host(p.dC.view);
  EXPECT_TRUE(std::isnan(got(5, 0)));  // row 5 of A (column-major: entry (5, 0)) meets B
  EXPECT_FALSE(std::isnan(got(4, 0)));
}

}  // namespace
