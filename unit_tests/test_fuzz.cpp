// Fuzzing against the serial oracle (issue 10): a deterministic stream of random cases, each
// a whole ozaki::gemm call with random shape (0..300, odd ones included, and a few with K
// above 2^17), storage (column-major, padded column-major, row-major, every other row and
// column of a larger matrix), transposes N/T/C, alpha and beta (0 included), algorithm and
// options, and data (exponent spreads, rows scaled by up to 2^+-60, zero rows and columns,
// subnormals, magnitudes near 1e+-300, injected NaN and Inf, NaN in C under beta = 0).
//
// Every case is checked against what the documentation promises:
//   - Int8Crt: bits equal to the oracle's scaling rule, and every element within
//     serial::crt_error_bound of a double-double reference;
//   - Int8Slices: every element within serial::error_bound;
//   - native FP64 (chosen or a fallback): within gamma_(K+2) of the reference, and NaN or Inf
//     exactly where the IEEE result has them;
//   - no product (alpha = 0, K = 0): C = beta C0 bit for bit;
//   - an exception only where the oracle also refuses (too few moduli), with C untouched, and
//     whatever the storage, the elements of C's allocation outside C untouched.
// Then each INT8 case is replayed with Report::options on a second space (Serial for a device
// or OpenMP binary) and must give bitwise the same C: CPU checking by equality.
//
// Across binaries (a CUDA build of Kokkos 3.4 has no OpenMP space beside Cuda): with
// OZAKI_FUZZ_RECORD=FILE the fuzz test writes one line per INT8 case, the case's index, the
// concrete options of Report::options and a hash of C's bits; another binary (fuzz_openmp, on
// the same machine) given OZAKI_FUZZ_REPLAY=FILE regenerates each case from its index, runs
// it with those options and compares the hash.  The device script does that for Cuda against
// OpenMP; CI does it for OpenMP against Serial (unit_tests/CMakeLists.txt).
#include "common.hpp"

#include <ozaki/serial/crt.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

namespace {

using namespace ozaki_test;
using ozaki::Algorithm;
using ozaki::CrtScaling;
using ozaki::Options;
using ozaki::PairPolicy;

constexpr double u = 0x1p-53;

// ---- storage on any space ------------------------------------------------------------------

enum class Storage { Left, PaddedLeft, Right, EveryOther };
const char* name(Storage s) {
  static const char* const names[] = {"Left", "PaddedLeft", "Right", "EveryOther"};
  return names[static_cast<int>(s)];
}

/// A rows x cols matrix in one allocation of `Space`'s memory: element (i, j) at
/// offset + i s0 + j s1; the rest of the allocation holds a sentinel that must survive.
template <class Space>
struct SpaceMatrix {
  using Memory = typename Space::memory_space;
  Kokkos::View<double*, Memory> storage;
  Kokkos::View<double**, Kokkos::LayoutStride, Memory> view;
  std::int64_t rows = 0, cols = 0, offset = 0, s0 = 1, s1 = 1;
};

constexpr double sentinel = -7.25;

template <class Space>
SpaceMatrix<Space> upload(const HostMatrix& h, Storage s) {
  SpaceMatrix<Space> d;
  d.rows = h.rows;
  d.cols = h.cols;
  const std::int64_t r = h.rows, c = h.cols;
  std::int64_t size = 0;
  switch (s) {
    case Storage::Left: d.s1 = std::max<std::int64_t>(r, 1), size = r * c; break;
    case Storage::PaddedLeft: d.offset = 1, d.s1 = r + 3, size = (r + 3) * c + 1; break;
    case Storage::Right: d.s0 = std::max<std::int64_t>(c, 1), size = r * c; break;
    case Storage::EveryOther:
      d.s0 = 2 * (2 * c + 1), d.s1 = 2, d.offset = 2 * c + 1, size = (2 * r + 1) * (2 * c + 1);
      break;
  }
  d.storage = Kokkos::View<double*, typename Space::memory_space>("fuzz", size);
  auto mirror = Kokkos::create_mirror_view(d.storage);
  for (std::int64_t i = 0; i < size; ++i) mirror(i) = sentinel;
  for (std::int64_t j = 0; j < c; ++j)
    for (std::int64_t i = 0; i < r; ++i) mirror(d.offset + i * d.s0 + j * d.s1) = h(i, j);
  Kokkos::deep_copy(d.storage, mirror);
  d.view = decltype(d.view)(d.storage.data() + d.offset, Kokkos::LayoutStride(r, d.s0, c, d.s1));
  return d;
}

/// The matrix back on the host; false when an element outside it changed.
template <class Space>
bool download(const SpaceMatrix<Space>& d, HostMatrix& h) {
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d.storage);
  h.rows = d.rows;
  h.cols = d.cols;
  h.values.assign(static_cast<std::size_t>(d.rows * d.cols), 0.0);
  std::vector<char> inside(mirror.extent(0), 0);
  for (std::int64_t j = 0; j < d.cols; ++j) {
    for (std::int64_t i = 0; i < d.rows; ++i) {
      const std::int64_t at = d.offset + i * d.s0 + j * d.s1;
      h.values[i + j * d.rows] = mirror(at);
      inside[at] = 1;
    }
  }
  for (std::size_t i = 0; i < inside.size(); ++i)
    if (!inside[i] && !(mirror(i) == sentinel)) return false;
  return true;
}

// ---- cases ---------------------------------------------------------------------------------

struct Case {
  std::uint64_t index = 0;
  std::int64_t M = 0, N = 0, K = 0;
  char ta = 'N', tb = 'N';
  Storage sa = Storage::Left, sb = Storage::Left, sc = Storage::Left;
  double alpha = 1, beta = 0;
  Options options;
  HostMatrix A, B, C0;
  std::string data;  // what was done to the data, for the failure message

  std::string describe() const {
    const ozaki::Experimental::Tuning& t = options.experimental;
    auto shown = [](const auto& v) { return v ? std::to_string(*v) : std::string("auto"); };
    std::ostringstream s;
    s << "case " << index << ": " << M << "x" << N << "x" << K << " " << ta << tb << " A "
      << name(sa) << " B " << name(sb) << " C " << name(sc) << " alpha " << alpha << " beta "
      << beta << " " << ozaki::to_string(options.algorithm) << " S=" << shown(options.slices)
      << " pairs=" << ozaki::to_string(options.pairs) << ":" << shown(options.pair_count)
      << " L=" << shown(options.moduli) << " " << ozaki::to_string(options.crt_scaling)
      << " k_block=" << shown(t.k_block) << " limit=" << shown(options.workspace_limit)
      << " pass=" << shown(t.crt_pass_columns) << (t.overlap ? " overlap" : "") << " data[" << data
      << "]";
    return s.str();
  }
};

std::int64_t dimension(Random& rng) {
  const double p = rng.uniform();
  if (p < 0.04) return 0;
  if (p < 0.55) return 1 + static_cast<std::int64_t>(rng.uniform() * 40);
  if (p < 0.88) return 1 + static_cast<std::int64_t>(rng.uniform() * 150);
  return 1 + static_cast<std::int64_t>(rng.uniform() * 300);
}

template <class T, std::size_t N>
T pick(Random& rng, const T (&values)[N]) {
  return values[static_cast<std::size_t>(rng.uniform() * N)];
}

Options random_options(Random& rng, bool allow_emulation) {
  Options o;
  const double p = rng.uniform();
  if (p < 0.10) {
    o.algorithm = Algorithm::Native;
  } else if (p < 0.20) {
    o.algorithm = Algorithm::Auto;
  } else if (p < 0.58) {
    o.algorithm = Algorithm::Int8Crt;
    if (rng.uniform() >= 0.4) o.moduli = 2 + static_cast<int>(rng.uniform() * 23);  // else auto
    o.crt_scaling = pick(rng, {CrtScaling::Auto, CrtScaling::Fast, CrtScaling::Accurate});
  } else if (p < 0.93 || !allow_emulation) {
    o.algorithm = Algorithm::Int8Slices;
    if (rng.uniform() >= 0.3)  // else automatic
      o.slices = pick(rng, {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, ozaki::max_slices});
    o.pairs = pick(rng, {PairPolicy::Triangular, PairPolicy::Full, PairPolicy::Count});
    if (o.pairs == PairPolicy::Count) {
      if (!o.slices) o.slices = 1 + static_cast<int>(rng.uniform() * 9);
      o.pair_count = 1 + static_cast<int>(rng.uniform() * *o.slices * *o.slices);
    }
  } else {
    o.algorithm = Algorithm::CublasEmulation;
    if (rng.uniform() >= 0.5) o.slices = 1 + static_cast<int>(rng.uniform() * 7);  // else auto
  }
  if (rng.uniform() < 0.3)
    o.experimental.k_block =
        pick(rng, {std::int64_t(16), std::int64_t(48), std::int64_t(100), std::int64_t(1000)});
  if (rng.uniform() < 0.2)
    o.workspace_limit = pick(rng, {std::int64_t(1) << 16, std::int64_t(1) << 20});
  if (rng.uniform() < 0.2)
    o.experimental.crt_pass_columns = pick(rng, {std::int64_t(16), std::int64_t(50)});
  o.experimental.overlap = rng.uniform() < 0.3;
  return o;
}

/// Fills op(A) (M x K) and op(B) (K x N) through their stored forms.
struct Operands {
  HostMatrix& X;
  char trans;
  double& at(std::int64_t op_row, std::int64_t op_col) {
    return trans == 'N' ? X.values[op_row + op_col * X.rows] : X.values[op_col + op_row * X.rows];
  }
};

void shape_data(Case& c, Random& rng) {
  const double phi = pick(rng, {0.0, 0.5, 1.0, 2.0, 4.0});
  const std::int64_t M = c.M, N = c.N, K = c.K;
  c.A = c.ta == 'N' ? random_host(M, K, phi, rng) : random_host(K, M, phi, rng);
  c.B = c.tb == 'N' ? random_host(K, N, phi, rng) : random_host(N, K, phi, rng);
  c.C0 = random_host(M, N, 0.5, rng);
  Operands a{c.A, c.ta}, b{c.B, c.tb};
  std::ostringstream what;
  what << "phi " << phi;
  const double kind = rng.uniform();
  if (kind < 0.25 && M > 0 && N > 0 && K > 0) {  // rows of op(A), columns of op(B) 2^+-60
    what << ", lines scaled by 2^+-60";
    for (std::int64_t m = 0; m < M; ++m) {
      const int shift = static_cast<int>(rng.uniform() * 121) - 60;
      for (std::int64_t k = 0; k < K; ++k) a.at(m, k) = std::ldexp(a.at(m, k), shift);
    }
    for (std::int64_t n = 0; n < N; ++n) {
      const int shift = static_cast<int>(rng.uniform() * 121) - 60;
      for (std::int64_t k = 0; k < K; ++k) b.at(k, n) = std::ldexp(b.at(k, n), shift);
    }
  } else if (kind < 0.37) {  // magnitudes near 1e+-300 whose products stay finite
    const bool big_a = rng.uniform() < 0.5;
    what << (big_a ? ", A ~ 1e300, B ~ 1e-300" : ", A ~ 1e-300, B ~ 1e-8");
    for (double& x : c.A.values) x *= big_a ? 1e300 : 1e-300;
    for (double& x : c.B.values) x *= big_a ? 1e-300 : 1e-8;
  } else if (kind < 0.47) {  // subnormals among normal numbers
    what << ", subnormals";
    for (double& x : c.A.values)
      if (rng.uniform() < 0.2) x = std::ldexp(x, -1060);
    for (double& x : c.B.values)
      if (rng.uniform() < 0.2) x = std::ldexp(x, -1065);
  }
  if (rng.uniform() < 0.2 && M > 0 && N > 0 && K > 0) {  // a zero row, column and k
    what << ", zero lines";
    const std::int64_t m = static_cast<std::int64_t>(rng.uniform() * M);
    const std::int64_t n = static_cast<std::int64_t>(rng.uniform() * N);
    const std::int64_t k = static_cast<std::int64_t>(rng.uniform() * K);
    for (std::int64_t j = 0; j < K; ++j) a.at(m, j) = 0, b.at(j, n) = 0;
    for (std::int64_t i = 0; i < M; ++i) a.at(i, k) = 0;
  }
  if (rng.uniform() < 0.08 && M > 0 && N > 0 && K > 0) {
    const double bad = pick(rng, {std::numeric_limits<double>::quiet_NaN(), HUGE_VAL, -HUGE_VAL});
    HostMatrix& X = rng.uniform() < 0.5 ? c.A : c.B;
    X.values[static_cast<std::size_t>(rng.uniform() * X.values.size())] = bad;
    what << ", " << bad << " injected";
  }
  if (c.beta == 0 && !c.C0.values.empty() && rng.uniform() < 0.3) {
    c.C0.values[0] = std::numeric_limits<double>::quiet_NaN();  // beta = 0: never read
    what << ", NaN in C0";
  }
  c.data = what.str();
}

Case make_case(std::uint64_t index, bool allow_emulation) {
  Random rng(0x9e3779b97f4a7c15ULL * (index + 1));
  Case c;
  c.index = index;
  if (index % 667 == 5) {  // K beyond 2^17: several INT32 blocks
    c.M = 1 + static_cast<std::int64_t>(rng.uniform() * 3);
    c.N = 1 + static_cast<std::int64_t>(rng.uniform() * 3);
    c.K = (std::int64_t(1) << 17) + 1 + 2 * static_cast<std::int64_t>(rng.uniform() * 500);
  } else {
    c.M = dimension(rng), c.N = dimension(rng), c.K = dimension(rng);
  }
  c.ta = pick(rng, {'N', 'T', 'C'});
  c.tb = pick(rng, {'N', 'T', 'C'});
  const Storage storages[] = {Storage::Left, Storage::PaddedLeft, Storage::Right,
                              Storage::EveryOther};
  c.sa = pick(rng, storages), c.sb = pick(rng, storages), c.sc = pick(rng, storages);
  c.alpha = rng.uniform() < 0.05 ? 0.0 : pick(rng, {1.0, -1.0, 0.75, 3.0e-3});
  c.beta = pick(rng, {0.0, 0.0, 1.0, -0.5, 2.5});
  c.options = random_options(rng, allow_emulation);
  shape_data(c, rng);
  return c;
}

// ---- running and checking ------------------------------------------------------------------

struct Outcome {
  bool threw = false;
  std::string what;
  ozaki::Report report;
  HostMatrix C;
  bool outside_intact = true;
};

template <class Space>
Outcome run_case(const Case& c, const Options& options) {
  const auto A = upload<Space>(c.A, c.sa), B = upload<Space>(c.B, c.sb);
  const auto C = upload<Space>(c.C0, c.sc);
  const std::string ta(1, c.ta), tb(1, c.tb);
  Outcome out;
  try {
    out.report = ozaki::gemm(Space(), ta.c_str(), tb.c_str(), c.alpha, A.view, B.view, c.beta,
                             C.view, options);
  } catch (const ozaki::InvalidArgument& e) {
    out.threw = true;
    out.what = e.what();
  }
  out.outside_intact = download(C, out.C);
  return out;
}

bool same_bits(const HostMatrix& x, const HostMatrix& y) {
  return x.values.size() == y.values.size() &&
         (x.values.empty() ||
          std::memcmp(x.values.data(), y.values.data(), x.values.size() * sizeof(double)) == 0);
}

bool nonfinite(const HostMatrix& X) {
  for (double x : X.values)
    if (!std::isfinite(x)) return true;
  return false;
}

/// |got - ref| <= bound + u |ref| + (K + 2) 2^-1074 for every element (the last two terms:
/// the double-double reference's own rounding, which loses the low parts of products below
/// the subnormal range); the first violation as text.
std::string within(const Case& c, const HostMatrix& got, const HostMatrix& ref,
                   const std::vector<double>& bound) {
  const double floor = static_cast<double>(c.K + 2) * std::numeric_limits<double>::denorm_min();
  for (std::size_t i = 0; i < got.values.size(); ++i) {
    const double g = got.values[i], r = ref.values[i];
    if (!(std::fabs(g - r) <= bound[i] + u * std::fabs(r) + floor)) {
      std::ostringstream s;
      s << "element " << i << ": got " << g << ", reference " << r << ", bound " << bound[i];
      return s.str();
    }
  }
  return "";
}

/// Native FP64 GEMM: NaN and Inf where IEEE arithmetic puts them, elsewhere within
/// gamma_(K+2) (|alpha| (|A||B|) + |beta C0|) of the reference (any order of summation).
std::string check_native(const Case& c, const HostMatrix& got) {
  HostMatrix ieee = c.C0, ref = c.C0;
  ozaki::serial::dgemm(c.ta, c.tb, c.alpha, c.A.cref(), c.B.cref(), c.beta, ieee.ref());
  const bool finite = !nonfinite(c.A) && !nonfinite(c.B);
  if (finite)
    ozaki::serial::dd_gemm(c.ta, c.tb, c.alpha, c.A.cref(), c.B.cref(), c.beta, ref.ref());
  const std::vector<double> abs_ab =
      finite ? abs_product(c.ta, c.tb, c.A, c.B) : std::vector<double>(got.values.size(), 0.0);
  const double n = static_cast<double>(c.K + 2);
  const double gamma = n * u / (1 - n * u);
  for (std::size_t i = 0; i < got.values.size(); ++i) {
    const double g = got.values[i], want = ieee.values[i];
    std::ostringstream s;
    s << "element " << i << ": got " << g << ", IEEE " << want;
    if (std::isnan(want) != std::isnan(g)) return s.str() + " (NaN differs)";
    if (std::isinf(want) && g != want) return s.str() + " (Inf differs)";
    if (!std::isfinite(want) || !finite) continue;
    const double c0 = c.beta == 0 ? 0.0 : std::fabs(c.beta * c.C0.values[i]);
    const double bound = gamma * (std::fabs(c.alpha) * abs_ab[i] + c0) +
                         u * std::fabs(ref.values[i]) +
                         n * std::numeric_limits<double>::denorm_min();
    if (!(std::fabs(g - ref.values[i]) <= bound)) return s.str() + ", beyond gamma_(K+2)";
  }
  return "";
}

/// The oracle's scaling of this call.  A row-major C is computed as C^T = op(B)^T op(A)^T
/// (dispatch.hpp), where the accurate rule's asymmetric choice runs the other way round.
ozaki::serial::CrtScale oracle_scale(const Case& c, int L, CrtScaling scaling) {
  const auto opA = ozaki::serial::op(c.A.cref(), c.ta), opB = ozaki::serial::op(c.B.cref(), c.tb);
  const bool c_row_major = c.sc == Storage::Right && c.M > 1 && c.N > 1;
  if (!c_row_major) return ozaki::serial::crt_scale(opA, opB, L, scaling);
  ozaki::serial::CrtScale t =
      ozaki::serial::crt_scale(opB.transposed(), opA.transposed(), L, scaling);
  std::swap(t.a, t.b);
  return t;
}

/// The bound the Report states, where it states one (Report::error_bound > 0, finite data):
/// |got - ref| <= error_bound |alpha| (|A||B|) + gamma_2 |beta C0| for every element, with the
/// reference's own rounding and the subnormal floor as in `within`.
std::string check_report_bound(const Case& c, const Outcome& run) {
  const double bound = run.report.error_bound;
  if (!(bound > 0) || nonfinite(c.A) || nonfinite(c.B)) return "";
  HostMatrix ref = c.C0;
  ozaki::serial::dd_gemm(c.ta, c.tb, c.alpha, c.A.cref(), c.B.cref(), c.beta, ref.ref());
  const std::vector<double> abs_ab = abs_product(c.ta, c.tb, c.A, c.B);
  const double gamma2 = 2 * u / (1 - 2 * u);
  const double floor = static_cast<double>(c.K + 4) * std::numeric_limits<double>::denorm_min();
  for (std::size_t i = 0; i < run.C.values.size(); ++i) {
    const double c0 = c.beta == 0 ? 0.0 : std::fabs(c.beta * c.C0.values[i]);
    const double product = abs_ab[i] > 0 ? bound * std::fabs(c.alpha) * abs_ab[i] : 0.0;
    const double allowed = product + gamma2 * c0 + u * std::fabs(ref.values[i]) + floor;
    if (!(std::fabs(run.C.values[i] - ref.values[i]) <= allowed)) {
      std::ostringstream s;
      s << "element " << i << ": got " << run.C.values[i] << ", reference " << ref.values[i]
        << ", beyond the Report's bound " << bound;
      return s.str();
    }
  }
  return "";
}

std::string check_crt(const Case& c, const Outcome& run) {
  const ozaki::Report& r = run.report;
  const ozaki::serial::CrtScale scale = oracle_scale(c, r.moduli, r.crt_scaling);
  int fewest = ozaki::Impl::crt_max_bits;
  for (int b : scale.a) fewest = std::min(fewest, b);
  for (int b : scale.b) fewest = std::min(fewest, b);
  if (r.crt_bits != fewest) {
    return "bits " + std::to_string(r.crt_bits) + ", the oracle's " + std::to_string(fewest);
  }
  HostMatrix ref = c.C0;
  ozaki::serial::dd_gemm(c.ta, c.tb, c.alpha, c.A.cref(), c.B.cref(), c.beta, ref.ref());
  return within(c, run.C, ref,
                ozaki::serial::crt_error_bound(c.ta, c.tb, c.alpha, c.A.cref(), c.B.cref(), c.beta,
                                               c.C0.cref(), scale, 0));
}

std::string check_slices(const Case& c, const Outcome& run) {
  const ozaki::Report& r = run.report;
  HostMatrix ref = c.C0;
  ozaki::serial::dd_gemm(c.ta, c.tb, c.alpha, c.A.cref(), c.B.cref(), c.beta, ref.ref());
  return within(c, run.C, ref,
                ozaki::serial::error_bound(c.ta, c.tb, c.alpha, c.A.cref(), c.B.cref(), c.beta,
                                           c.C0.cref(), r.slices, r.options.pairs,
                                           r.options.pair_count.value_or(0), r.int8_gemms));
}

/// An exception is right only where the oracle refuses too: too few moduli for this K.
std::string check_refusal(const Case& c, const Outcome& run) {
  const Options& o = c.options;
  if (o.algorithm != Algorithm::Int8Crt || o.moduli == ozaki::auto_moduli) {
    return "unexpected exception: " + run.what;
  }
  if (!same_bits(run.C, c.C0)) return "C changed before the exception";
  for (CrtScaling rule : {CrtScaling::Fast, CrtScaling::Accurate}) {
    if (o.crt_scaling != CrtScaling::Auto && o.crt_scaling != rule) continue;
    try {
      oracle_scale(c, *o.moduli, rule);
    } catch (const std::invalid_argument&) {
      return "";  // the oracle refuses as well
    }
  }
  return "ozaki refused (" + run.what + ") where the oracle does not";
}

std::string check(const Case& c, const Outcome& run) {
  if (!run.outside_intact) return "an element of C's allocation outside C changed";
  if (run.threw) return check_refusal(c, run);
  switch (run.report.algorithm) {
    case Algorithm::None: {
      for (std::size_t i = 0; i < run.C.values.size(); ++i) {
        const double want = c.beta == 0 ? 0.0 : c.beta * c.C0.values[i];
        if (!(run.C.values[i] == want || (std::isnan(want) && std::isnan(run.C.values[i]))))
          return "C != beta C0 at element " + std::to_string(i);
      }
      return "";
    }
    case Algorithm::Native: return check_native(c, run.C);
    case Algorithm::Int8Crt: {
      const std::string oracle = check_crt(c, run);
      return oracle.empty() ? check_report_bound(c, run) : oracle;
    }
    case Algorithm::Int8Slices: {
      const std::string oracle = check_slices(c, run);
      return oracle.empty() ? check_report_bound(c, run) : oracle;
    }
    case Algorithm::CublasEmulation: return "";  // cuBLAS's own guarantee (test_cuda)
    default: return "unexpected algorithm";
  }
}

/// The space that replays each case with Report::options for a bitwise comparison: Serial
/// where the space under test is another one and Serial is built.
#if defined(KOKKOS_ENABLE_SERIAL)
using ReplaySpace = Kokkos::Serial;
constexpr bool replay = !std::is_same<TestSpace, Kokkos::Serial>::value;
#else
using ReplaySpace = TestSpace;
constexpr bool replay = false;
#endif

/// Cases per run: 2000 on host spaces (CI), 500 on a device; OZAKI_FUZZ_CASES overrides it
/// (the device script's sanitizer runs take the first cases of the same stream only).
constexpr bool on_host = std::is_same<MemSpace, Kokkos::HostSpace>::value;
std::uint64_t fuzz_case_count() {
  const char* env = std::getenv("OZAKI_FUZZ_CASES");
  if (env && *env) return std::strtoull(env, nullptr, 10);
  return on_host ? 2000 : 500;
}

// ---- records of calls, for a replay in another binary ---------------------------------------

/// FNV-1a over the bytes of C's elements (column by column).
std::uint64_t bits_hash(const HostMatrix& C) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(C.values.data());
  for (std::size_t i = 0; i < C.values.size() * sizeof(double); ++i) {
    h ^= bytes[i];
    h *= 1099511628211ull;
  }
  return h;
}

/// An optional count or size as a record field: 0 where empty (no valid value is 0).
template <class T>
long long record_field(const std::optional<T>& v) {
  return v ? static_cast<long long>(*v) : 0;
}

/// One line: case index, every field of Options that a call reads, the hash of C.
std::string call_record(std::uint64_t index, const Options& o, std::uint64_t hash) {
  const ozaki::Experimental::Tuning& t = o.experimental;
  std::ostringstream s;
  s << index << ' ' << static_cast<int>(o.algorithm) << ' ' << record_field(o.slices) << ' '
    << static_cast<int>(o.pairs) << ' ' << record_field(o.pair_count) << ' '
    << record_field(o.moduli) << ' ' << static_cast<int>(o.crt_scaling) << ' '
    << record_field(t.k_block) << ' ' << record_field(t.crt_pass_columns) << ' ' << int(t.overlap)
    << ' ' << static_cast<int>(t.complex_products) << ' ' << record_field(o.workspace_limit) << ' '
    << hash;
  return s.str();
}

struct CallRecord {
  std::uint64_t index = 0, hash = 0;
  Options options;
};

bool parse_call_record(const std::string& line, CallRecord& r) {
  std::istringstream s(line);
  int algorithm = 0, pairs = 0, scaling = 0, overlap = 0, complex_products = 0;
  long long slices = 0, pair_count = 0, moduli = 0, k_block = 0, pass_columns = 0, limit = 0;
  Options& o = r.options;
  s >> r.index >> algorithm >> slices >> pairs >> pair_count >> moduli >> scaling >> k_block >>
      pass_columns >> overlap >> complex_products >> limit >> r.hash;
  o.algorithm = static_cast<Algorithm>(algorithm);
  if (slices != 0) o.slices = static_cast<int>(slices);
  o.pairs = static_cast<PairPolicy>(pairs);
  if (pair_count != 0) o.pair_count = static_cast<int>(pair_count);
  if (moduli != 0) o.moduli = static_cast<int>(moduli);
  o.crt_scaling = static_cast<CrtScaling>(scaling);
  if (k_block != 0) o.experimental.k_block = k_block;
  if (pass_columns != 0) o.experimental.crt_pass_columns = pass_columns;
  o.experimental.overlap = overlap != 0;
  o.experimental.complex_products =
      static_cast<ozaki::Experimental::ComplexProducts>(complex_products);
  if (limit != 0) o.workspace_limit = limit;
  return !s.fail();
}

/// Replays records on TestSpace: the number replayed and the first mismatch, if any.
struct ReplayResult {
  int replayed = 0, equal = 0;
  std::string first_problem;
};

ReplayResult replay_records(std::istream& in) {
  ReplayResult result;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    CallRecord r;
    if (!parse_call_record(line, r)) {
      if (result.first_problem.empty()) result.first_problem = "unreadable record: " + line;
      continue;
    }
    const Case c = make_case(r.index, true);
    const Outcome again = run_case<TestSpace>(c, r.options);
    ++result.replayed;
    if (!again.threw && again.report.algorithm == r.options.algorithm &&
        bits_hash(again.C) == r.hash) {
      ++result.equal;
    } else if (result.first_problem.empty()) {
      result.first_problem = c.describe() + "\n  -> replayed with the recorded options on " +
                             std::string(TestSpace::name()) + ": other bits (" +
                             ozaki::to_string(again.report.algorithm) + ")";
    }
  }
  return result;
}

TEST(Fuzz, EveryCaseWithinTheOraclesBoundAndReplayedBitwise) {
  std::map<std::string, int> counts;
  int failures = 0, replayed = 0, recorded = 0;
  const std::uint64_t case_count = fuzz_case_count();
  const char* record_path = std::getenv("OZAKI_FUZZ_RECORD");
  std::ofstream record;
  if (record_path && *record_path) {
    record.open(record_path);
    ASSERT_TRUE(record.good()) << "cannot write " << record_path;
  }
  for (std::uint64_t i = 0; i < case_count && failures < 5; ++i) {
    const Case c = make_case(i, true);  // CublasEmulation falls back to Int8Slices off CUDA
    const Outcome run = run_case<TestSpace>(c, c.options);
    ++counts[run.threw ? "refused" : ozaki::to_string(run.report.algorithm)];
    std::string problem = check(c, run);
    const Algorithm a = run.report.algorithm;
    if (problem.empty() && replay && !run.threw &&
        (a == Algorithm::Int8Crt || a == Algorithm::Int8Slices)) {
      const Outcome again = run_case<ReplaySpace>(c, run.report.options);
      ++replayed;
      if (again.threw || again.report.algorithm != a || !same_bits(again.C, run.C)) {
        problem = std::string("the replay on ") + ReplaySpace::name() + " gave other bits (" +
                  ozaki::to_string(again.report.algorithm) + ")";
      }
    }
    if (problem.empty() && record.is_open() && !run.threw &&
        (a == Algorithm::Int8Crt || a == Algorithm::Int8Slices)) {
      record << call_record(i, run.report.options, bits_hash(run.C)) << '\n';
      ++recorded;
    }
    if (!problem.empty()) {
      ++failures;
      ADD_FAILURE() << c.describe() << "\n  -> " << problem
                    << "\n  report: " << ozaki::to_string(run.report.algorithm)
                    << " S=" << run.report.slices << " L=" << run.report.moduli << " "
                    << ozaki::to_string(run.report.crt_scaling) << " reason: " << run.report.reason;
    }
  }
  std::printf("fuzz on %s: %llu cases,", TestSpace::name(),
              static_cast<unsigned long long>(case_count));
  for (const auto& kv : counts) std::printf(" %s %d,", kv.first.c_str(), kv.second);
  std::printf(" %d replayed bitwise on %s, %d failures\n", replayed,
              replay ? ReplaySpace::name() : "(none)", failures);
  if (record.is_open()) std::printf("fuzz: %d INT8 calls recorded to %s\n", recorded, record_path);
  EXPECT_EQ(failures, 0);
}

TEST(Fuzz, CallsRecordedElsewhereReplayBitwise) {
  // With OZAKI_FUZZ_REPLAY=FILE: every call another binary recorded (OZAKI_FUZZ_RECORD), run
  // here with its options, gives its bits.  Without: the first 60 cases recorded and replayed
  // on this space through the same text records, so the records carry every option a call
  // depends on.
  const char* path = std::getenv("OZAKI_FUZZ_REPLAY");
  ReplayResult result;
  if (path && *path) {
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << "cannot read " << path;
    result = replay_records(in);
    EXPECT_GT(result.replayed, 0) << path << " holds no records";
    std::printf("fuzz: %d recorded calls from %s replayed on %s, %d bitwise equal\n",
                result.replayed, path, TestSpace::name(), result.equal);
  } else {
    std::stringstream records;
    int int8_calls = 0;
    for (std::uint64_t i = 0; i < 60; ++i) {
      const Case c = make_case(i, true);
      const Outcome run = run_case<TestSpace>(c, c.options);
      const Algorithm a = run.report.algorithm;
      if (run.threw || (a != Algorithm::Int8Crt && a != Algorithm::Int8Slices)) continue;
      records << call_record(i, run.report.options, bits_hash(run.C)) << '\n';
      ++int8_calls;
    }
    result = replay_records(records);
    EXPECT_GT(int8_calls, 10);
    EXPECT_EQ(result.replayed, int8_calls);
  }
  EXPECT_EQ(result.equal, result.replayed) << result.first_problem;
}

}  // namespace
