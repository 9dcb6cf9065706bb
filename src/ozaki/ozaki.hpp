#pragma once
/// \file ozaki.hpp
/// Everything a user of ozaki needs: ozaki::gemm, its Options and Report, its exceptions.
#include <ozaki/errors.hpp>
#include <ozaki/gemm.hpp>
#include <ozaki/options.hpp>
#include <ozaki/prepared.hpp>
#include <ozaki/report.hpp>
#include <ozaki/workspace.hpp>
