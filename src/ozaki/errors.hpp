#pragma once
/// \file errors.hpp
/// Exceptions thrown by ozaki.  Every check on the caller's arguments runs before C is
/// written, so when one of these escapes from ozaki::gemm, C holds what it held before.

#include <stdexcept>
#include <string>

namespace ozaki {

/// The arguments are wrong: shapes, aliasing, transpose characters or options.
class InvalidArgument : public std::invalid_argument {
 public:
  explicit InvalidArgument(const std::string& what) : std::invalid_argument("ozaki: " + what) {}
};

/// A backend call failed at run time (a CUDA or cuBLAS status, an allocation).  The message
/// names the call and the reason.
class BackendError : public std::runtime_error {
 public:
  explicit BackendError(const std::string& what) : std::runtime_error("ozaki: " + what) {}
};

}  // namespace ozaki
