#pragma once
/// \file scratch.hpp
/// The library's own scratch, which the plain call (ozaki::gemm without a Workspace) uses:
/// one buffer per execution space instance, grown once and reused, freed at Kokkos::finalize.
/// Nothing here is needed for correct use; these let a program give the memory back early or
/// see how much is held.
///
///   ozaki::gemm(space, "N", "N", 1.0, A, B, 0.0, C);   // first call: allocates
///   ozaki::gemm(space, "N", "N", 1.0, A, B, 0.0, C);   // allocates nothing
///   ozaki::release_scratch(space);                      // frees it now
///
/// Each Report says whether its call allocated (Report::scratch_allocated).  A call never
/// grows the buffer beyond what its Options::workspace_limit allows (docs/design.md §6), so
/// the bytes held stay below the largest limit the instance's calls used.

#include <ozaki/impl/library_scratch.hpp>

#include <cstddef>

namespace ozaki {

/// Frees the library scratch of `space`'s instance (after a call that holds it, if any).
template <class ExecSpace>
void release_scratch(const ExecSpace& space) {
  Impl::LibraryScratch<ExecSpace>::release(space);
}

/// Bytes of library scratch `space`'s instance holds.
template <class ExecSpace>
std::size_t scratch_bytes(const ExecSpace& space) {
  return Impl::LibraryScratch<ExecSpace>::bytes(space);
}

}  // namespace ozaki
