#pragma once
/// \file instances.hpp
/// The library's compiled instances.  The gemm driver is compiled into the library for the
/// execution spaces Kokkos was built with (src/eti/, backends/cuda/gemm_cuda.cpp), so that a
/// translation unit including ozaki/gemm.hpp does not compile the kernels again: it sees the
/// `extern template` declarations below.
///
/// The kernels the tests also call directly are listed too.  Each must be compiled in exactly
/// one translation unit: the library's driver calls them, and a mix of two translation units'
/// copies of a template that launches CUDA extended lambdas (the test's, picked by the linker,
/// called from the library's) is not safe without relocatable device code.

#include <ozaki/config.hpp>
#include <ozaki/impl/complex/driver.hpp>
#include <ozaki/impl/dispatch.hpp>

#include <Kokkos_Core.hpp>

// PREFIX is `extern` for the declarations, empty for the definitions.
#define OZAKI_IMPL_KERNEL_INSTANCES(PREFIX, SPACE, V)                                              \
  PREFIX template bool row_scale_exponents<SPACE>(const SPACE&, const V::ConstMatrix&,             \
                                                  const V::Exponents&);                            \
  PREFIX template void copy_to_k_contiguous<SPACE>(const SPACE&, const V::ConstMatrix&,            \
                                                   const V::Rows&, const V::Rows&);                \
  PREFIX template bool exponents_from_tile_max<SPACE>(const SPACE&, const V::Rows&,                \
                                                      const V::Exponents&);                        \
  PREFIX template void split_rows<SPACE>(const SPACE&, const V::ConstMatrix&,                      \
                                         const ::ozaki::Impl::SliceStorage<SPACE>&);               \
  PREFIX template ::ozaki::Impl::SliceCountChoice choose_slice_count<SPACE>(                       \
      const SPACE&, const V::ConstMatrix&, const V::ConstMatrix&, const V::Exponents&,             \
      const V::Exponents&, std::int64_t, const ::ozaki::Impl::EstimateRegion<SPACE>&);             \
  PREFIX template void launch_exponents_and_norms<SPACE>(                                          \
      const SPACE&, bool, const V::ConstMatrix&, const V::Rows&, const V::Rows&, const V::Rows&,   \
      const V::TileCounts&, const V::Exponents&, const V::Norms&, const V::Norms&);                \
  PREFIX template void launch_coverage<SPACE>(                                                     \
      const SPACE&, std::int64_t, const V::Rows&, const V::TileCounts&, const V::Exponents&,       \
      const V::Norms&, const V::Norms&, const ::ozaki::Impl::CoverageViews<SPACE>&,                \
      const V::Rows&, const V::TileCounts&, const V::Exponents&, const V::Norms&, const V::Norms&, \
      const ::ozaki::Impl::CoverageViews<SPACE>&);                                                 \
  PREFIX template int fast_bits<SPACE>(const SPACE&, const V::Norms&, double,                      \
                                       const V::Exponents&);                                       \
  PREFIX template ::ozaki::Impl::RowSummary row_summary<SPACE>(                                    \
      const SPACE&, std::int64_t, const ::ozaki::Impl::SummaryRows<SPACE>&,                        \
      const ::ozaki::Impl::SummaryRows<SPACE>&, const V::Rows&);                                   \
  PREFIX template void magnitudes7<SPACE>(const SPACE&, const V::ConstMatrix&,                     \
                                          const V::Exponents&, const V::Digits&);                  \
  PREFIX template void window_magnitudes7<SPACE>(const SPACE&, const V::ConstMatrix&,              \
                                                 const V::Exponents&, const V::Norms&,             \
                                                 const V::Digits&);                                \
  PREFIX template double counted_ratio<SPACE>(const SPACE&, const V::Products&, std::int64_t,      \
                                              std::int64_t, const V::Norms&, const V::Norms&,      \
                                              const V::Norms&, const V::Norms&);                   \
  PREFIX template double sampled_counted_ratio<SPACE, V::ConstMatrix>(                             \
      const SPACE&, const V::ConstMatrix&, const V::ConstMatrix&, const V::Digits&,                \
      const V::Rows&);                                                                             \
  PREFIX template int accurate_bits<SPACE>(const SPACE&, const V::Products&, std::int64_t, double, \
                                           const V::Exponents&, const V::IntTiles&,                \
                                           const V::Exponents&, const V::Exponents&);              \
  PREFIX template void embed_complex_rows<SPACE>(const SPACE&, const V::ConstComplexMatrix&, bool, \
                                                 bool, const V::Rows&);                            \
  PREFIX template void crt_complex_residues<SPACE>(                                                \
      const SPACE&, const V::ConstMatrix&, const ::ozaki::Impl::CrtRowScaling<SPACE>&,             \
      const ::ozaki::Impl::CrtConstants&, const V::Digits&, bool);                                 \
  PREFIX template void crt_residues<SPACE>(const SPACE&, const V::ConstMatrix&,                    \
                                           const ::ozaki::Impl::CrtRowScaling<SPACE>&,             \
                                           const ::ozaki::Impl::CrtConstants&, const V::Digits&);  \
  PREFIX template void crt_reconstruct<SPACE>(                                                     \
      const SPACE&, const ::ozaki::Impl::CrtPassProducts<SPACE>&,                                  \
      const ::ozaki::Impl::CrtConstants&, const ::ozaki::Impl::CrtRowScaling<SPACE>&,              \
      const ::ozaki::Impl::CrtRowScaling<SPACE>&, double, double, const V::Matrix&);

// Scheme II's kernels compiled per moduli count (residues.hpp's with_moduli_count: L = 2 ..
// 24, 4 kernel templates each, 115 CUDA kernels in all).  On CUDA they are compiled in
// translation units of their own, a few counts each (generated from
// backends/cuda/crt_kernels_cuda.cpp.in by its CMakeLists.txt), beside
// the driver's: a parallel build then compiles them side by side instead of in one unit, the
// longest of the build.  PREFIX as above.
#define OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, L)                                              \
  namespace ozaki {                                                                              \
  namespace Impl {                                                                               \
  PREFIX template void detail::crt_residues_fixed<L, SPACE>(const SPACE&,                        \
                                                            const Views<SPACE>::ConstMatrix&,    \
                                                            const CrtRowScaling<SPACE>&,         \
                                                            const CrtConstants&,                 \
                                                            const Views<SPACE>::Digits&);        \
  PREFIX template void detail::crt_complex_residues_fixed<L, SPACE>(                             \
      const SPACE&, const Views<SPACE>::ConstMatrix&, const CrtRowScaling<SPACE>&,               \
      const CrtConstants&, const Views<SPACE>::Digits&, bool);                                   \
  PREFIX template void detail::crt_reconstruct_fixed<L, SPACE>(                                  \
      const SPACE&, const CrtPassProducts<SPACE>&, const CrtConstants&,                          \
      const CrtRowScaling<SPACE>&, const CrtRowScaling<SPACE>&, double, double,                  \
      const Views<SPACE>::Matrix&);                                                              \
  PREFIX template void detail::crt_complex_reconstruct_fixed<L, SPACE>(                          \
      const SPACE&, const CrtPassProducts<SPACE>&, const CrtConstants&,                          \
      const CrtRowScaling<SPACE>&, const CrtRowScaling<SPACE>&, const CrtComplexTarget<SPACE>&); \
  PREFIX template void detail::crt_reconstruct_tiles_fixed<L, SPACE>(                            \
      const SPACE&, const CrtPassTiles&, const CrtConstants&, const CrtRowScaling<SPACE>&,       \
      const CrtRowScaling<SPACE>&, double, double, const Views<SPACE>::Matrix&);                 \
  }                                                                                              \
  }

/// Every moduli count, for the declarations.
#define OZAKI_IMPL_CRT_KERNELS(PREFIX, SPACE)  \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 2)  \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 3)  \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 4)  \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 5)  \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 6)  \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 7)  \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 8)  \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 9)  \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 10) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 11) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 12) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 13) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 14) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 15) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 16) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 17) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 18) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 19) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 20) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 21) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 22) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 23) \
  OZAKI_IMPL_CRT_KERNELS_AT(PREFIX, SPACE, 24)
static_assert(ozaki::min_moduli == 2 && ozaki::max_moduli == 24,
              "OZAKI_IMPL_CRT_KERNELS lists every moduli count");

#define OZAKI_IMPL_GEMM_INSTANCE(PREFIX, SPACE)                                                  \
  namespace ozaki {                                                                              \
  namespace Impl {                                                                               \
  PREFIX template Report gemm_strided<SPACE>(const SPACE&, const char[], const char[], double,   \
                                             const ::ozaki::Impl::Views<SPACE>::ConstMatrix&,    \
                                             const ::ozaki::Impl::Views<SPACE>::ConstMatrix&,    \
                                             double, const ::ozaki::Impl::Views<SPACE>::Matrix&, \
                                             const ::ozaki::Options&,                            \
                                             ::ozaki::Impl::ScratchBuffer<SPACE>&,               \
                                             const ::ozaki::Impl::SliceStorage<SPACE>*,          \
                                             const ::ozaki::Impl::SliceStorage<SPACE>*, double,  \
                                             ::ozaki::Impl::Triangle);                           \
  PREFIX template Report gemm_complex_strided<SPACE>(                                            \
      const SPACE&, const char[], const char[], Kokkos::complex<double>,                         \
      const ::ozaki::Impl::Views<SPACE>::ConstComplexMatrix&,                                    \
      const ::ozaki::Impl::Views<SPACE>::ConstComplexMatrix&, Kokkos::complex<double>,           \
      const ::ozaki::Impl::Views<SPACE>::ComplexMatrix&, const ::ozaki::Options&,                \
      ::ozaki::Impl::ScratchBuffer<SPACE>&, ::ozaki::Impl::ScratchBuffer<SPACE>&, double,        \
      ::ozaki::Impl::Triangle, bool);                                                            \
  OZAKI_IMPL_KERNEL_INSTANCES(PREFIX, SPACE, ::ozaki::Impl::Views<SPACE>)                        \
  }                                                                                              \
  }

#define OZAKI_IMPL_NO_PREFIX
#if defined(KOKKOS_ENABLE_SERIAL)
OZAKI_IMPL_GEMM_INSTANCE(extern, Kokkos::Serial)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
OZAKI_IMPL_GEMM_INSTANCE(extern, Kokkos::OpenMP)
#endif
// The instances a backend compiles into the library for its own space (generated by CMake).
#include <ozaki/backend_instances.hpp>
