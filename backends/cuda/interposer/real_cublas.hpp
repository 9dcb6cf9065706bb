#pragma once
/// \file real_cublas.hpp
/// The cuBLAS and cuBLASLt functions the interposer stands in front of, found in the cuBLAS
/// the process actually uses.
///
/// `dlsym(RTLD_NEXT, name)` finds the next definition after libozaki_cublas.so in the
/// process's global scope: the libcublas.so.13 (or libcublasLt.so.13, for the cublasLt names)
/// that it (or the program) depends on.  Where that finds nothing (a cuBLAS loaded with
/// RTLD_LOCAL only, as Python wheels do), the libcublas (or libcublasLt) objects mapped into
/// the process are searched (dl_iterate_phdr, then dlopen(path, RTLD_NOLOAD)).  Every function
/// of one caller's handle is taken from the same object as its GEMM, so a handle (or a
/// cuBLASLt descriptor) is never passed to another copy of cuBLAS.

#include <string>

namespace ozaki_cublas {

/// The real definition of `name` (never this library's own), or nullptr.  Cached per name.
void* real_symbol(const char* name);

/// The file the real cuBLAS symbols come from (for the log), "" before the first lookup; with
/// `lt`, the file of the cuBLASLt ones.
std::string real_cublas_path(bool lt = false);

/// Typed access: real<decltype(&cublasDgemm_v2)>("cublasDgemm_v2").
template <class Function>
Function real(const char* name) {
  return reinterpret_cast<Function>(real_symbol(name));
}

}  // namespace ozaki_cublas
