#pragma once
// The library's compiled instance of the gemm driver for one execution space (declared extern
// in ozaki/impl/instances.hpp).
#include <ozaki/gemm.hpp>

#define OZAKI_IMPL_DEFINE_GEMM_INSTANCE(SPACE) OZAKI_IMPL_GEMM_INSTANCE(OZAKI_IMPL_NO_PREFIX, SPACE)
