#pragma once
/// \file ozaki.hpp
/// Everything a user of ozaki needs: ozaki::gemm, its Options and Report, its exceptions, the
/// caller-owned Workspace, prepared operands and the library scratch's controls.
#include <ozaki/batched.hpp>
#include <ozaki/errors.hpp>
#include <ozaki/fp8.hpp>
#include <ozaki/gemm.hpp>
#include <ozaki/half_precision.hpp>
#include <ozaki/options.hpp>
#include <ozaki/prepared.hpp>
#include <ozaki/quantized.hpp>
#include <ozaki/report.hpp>
#include <ozaki/scratch.hpp>
#include <ozaki/symm.hpp>
#include <ozaki/syrk.hpp>
#include <ozaki/trmm.hpp>
#include <ozaki/trsm.hpp>
#include <ozaki/workspace.hpp>
