#pragma once
/// \file schedule.hpp
/// Which INT8 GEMMs Ozaki scheme I runs for a slice count, a pair policy and a K block.
///
/// Storage (see SliceStorage in format.hpp): the slices of op(A) are kept as one int8 matrix
/// of M rows and S*kpad columns, slice s in columns [s*kpad, s*kpad + K); the slices of op(B)
/// likewise with N rows, but in reverse order, slice s in columns [(S-1-s)*kpad, ...).
/// Columns [K, kpad) of every slice are zero.
///
/// For a diagonal d = i + j and a run of consecutive i in [i0, i1], the A slices i0..i1 and
/// the B slices d-i0 .. d-i1 are then both contiguous column ranges that line up pair by
/// pair, so sum_i A_i B_{d-i}^T is ONE int8 GEMM of inner length (i1-i0+1)*kpad.  That GEMM is
/// cut into chunks of at most k_block columns so that INT32 cannot overflow.

#include <ozaki/impl/common/plan.hpp>
#include <ozaki/options.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ozaki {
namespace Impl {

/// Bits per slice: slice s has weight 2^(-8s) relative to slice 0 (format.hpp).
constexpr int bits_per_slice = 8;
/// Exponent offset of every product weight: 2 (8S-1) - 8 (2S-2) = 14 (format.hpp).
constexpr int product_weight_offset = 14;

/// One INT8 GEMM: P(m, n) = sum_{l < length} SA(m, a_column + l) * SB(n, b_column + l).
struct Int8Product {
  int diagonal;           // i + j of the slice pairs it sums; weight 2^(-8 diagonal)
  std::int64_t a_column;  // first column in the A slice storage
  std::int64_t b_column;  // first column in the B slice storage
  std::int64_t length;    // inner length, <= k_block
};

struct ProductSchedule {
  std::vector<Int8Product> products;  // most significant first
  int slice_pairs = 0;
  std::int64_t longest = 0;
};

/// Number of pairs the policy selects for S slices.
inline int selected_pair_count(int S, PairPolicy policy, int pair_count) {
  switch (policy) {
    case PairPolicy::Full: return S * S;
    case PairPolicy::Triangular: return S * (S + 1) / 2;
    case PairPolicy::Count: return pair_count;
  }
  return 0;
}

inline ProductSchedule make_schedule(int S, PairPolicy policy, int pair_count, std::int64_t K,
                                     std::int64_t k_block) {
  const std::int64_t kpad = padded_k(K);
  const std::int64_t block = resolved_k_block(k_block);
  // Every policy is "the first n pairs in order of weight": Triangular's S(S+1)/2 pairs are
  // exactly the diagonals 0..S-1, Full's S^2 are all of them.
  int remaining = selected_pair_count(S, policy, pair_count);
  ProductSchedule schedule;
  schedule.slice_pairs = remaining;
  for (int d = 0; d <= 2 * (S - 1) && remaining > 0; ++d) {
    const int i_first = std::max(0, d - (S - 1));
    const int i_last_full = std::min(d, S - 1);
    const int i_last = std::min(i_last_full, i_first + remaining - 1);
    remaining -= i_last - i_first + 1;
    // A slices i_first..i_last; B slices d-i_first down to d-i_last, stored reversed.
    const std::int64_t a_column = i_first * kpad;
    const std::int64_t b_column = (S - 1 - (d - i_first)) * kpad;
    // Whole segments, padding included: every length stays a multiple of 16.
    const std::int64_t length = (i_last - i_first + 1) * kpad;
    for (std::int64_t offset = 0; offset < length; offset += block) {
      const std::int64_t piece = std::min(block, length - offset);
      schedule.products.push_back({d, a_column + offset, b_column + offset, piece});
      schedule.longest = std::max(schedule.longest, piece);
    }
  }
  return schedule;
}

}  // namespace Impl
}  // namespace ozaki
