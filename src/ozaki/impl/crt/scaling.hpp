#pragma once
/// \file scaling.hpp
/// Portable Kokkos kernels that choose scheme II's integer scaling (the rules are in
/// rules.hpp, the derivations in docs/design.md §5), one header per concept:
///
///   norms.hpp          launch_exponents_and_norms: pass 1 and n_r, l1_r per row, from one
///                      read of every element in norm tiles: exact, order-independent norms
///   row_summary.hpp    row_summary: the one wait after both operands' norms: NaN/Inf, the
///                      peak ratios max_r ||x_r||_2 / ||x_r||_1 (the Auto scaling rule's test),
///                      the largest norms (the fewest fast bits) and the certificate's factors
///   fast_rule.hpp      set_fast_bits: bits per row from the Cauchy-Schwarz rule
///   accurate_rule.hpp  magnitudes7 + INT8 GEMM + accurate_bits: bits from the per-entry bound;
///                      crt_model_error, the accurate rule's error model for an automatic count
///   counted_rule.hpp   window_magnitudes7 + INT8 GEMM + counted_ratio: the counted fast rule's
///                      count (wide exponent ranges)
///   sampling.hpp       sampled_peak_ratios and sampled_counted_ratio: Auto's look at a sample
///                      of rows before pass 1

#include <ozaki/impl/crt/accurate_rule.hpp>
#include <ozaki/impl/crt/counted_rule.hpp>
#include <ozaki/impl/crt/fast_rule.hpp>
#include <ozaki/impl/crt/norms.hpp>
#include <ozaki/impl/crt/row_summary.hpp>
#include <ozaki/impl/crt/sampling.hpp>
