#pragma once
// Explicit instantiation of the gemm driver for one execution space (see gemm.hpp).
#include <ozaki/gemm.hpp>

#define OZAKI_IMPL_DEFINE_GEMM_INSTANCE(SPACE)                                             \
  namespace ozaki {                                                                        \
  namespace Impl {                                                                         \
  template Report gemm_strided<SPACE>(                                                   \
      const SPACE&, const char[], const char[], double,                                    \
      const ::ozaki::Impl::Views<SPACE>::ConstMatrix&,                                     \
      const ::ozaki::Impl::Views<SPACE>::ConstMatrix&, double,                             \
      const ::ozaki::Impl::Views<SPACE>::Matrix&, const ::ozaki::Options&,                  \
      ::ozaki::Workspace<SPACE>&);                                                          \
  }                                                                                        \
  }
