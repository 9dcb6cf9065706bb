#pragma once
/// \file residue_tiles.hpp
/// Residue tiles: the layout in which a backend that reduces scheme II's INT8 products modulo
/// their moduli itself (CUDA on sm_90: backends/cuda/residue_products_sm90.cu) hands a pass's
/// products to the reconstruction (crt_reconstruct_tiles, residues.hpp).  One byte per entry
/// and modulus, the symmetric residue of P_l = A_l B_l^T: [-128, 127] for 256, [-(m-1)/2,
/// (m-1)/2] for the odd moduli.  Reading 1 byte where the INT32 product took 4 is what makes
/// it worth having: at 14 moduli the reconstruction reads 14 bytes per entry of C instead of
/// 56 (docs/design.md §5.3.1).
///
/// The layout is the GPU kernel's register layout, so that its epilogue writes whole 16-byte
/// vectors.  The products come in tiles of 128 rows (of op(A)) x 256 columns (rows of op(B)^T),
/// tile (tr, tc) at index tr tiles_c + tc of its modulus' plane.  Within a tile, slot s < 256
/// (two warpgroups of 128 threads, each over 64 rows: wgmma's m64n256 accumulator fragment)
/// holds 128 entries, stored as 8 vectors of 16 bytes, vector v of every slot together:
///
///   byte (tile, v, s, b) at  plane l + (tile 8 + v) 4096 + 16 s + b,
///   entry i = 16 v + b of slot s:  row    64 (s / 128) + 16 (s % 128 / 32) + (s % 32) / 4
///                                         + 8 ((i % 4) / 2),
///                                  column 8 (i / 4) + 2 (s % 4) + i % 2.
///
/// So a warp's 32 slots write (and the reconstruction reads) 512 contiguous bytes per vector,
/// and for a fixed byte the 32 slots cover 8 consecutive rows of 4 columns: C's column-major
/// stores stay in whole 32-byte sectors.  Rows and columns past the products' (zeros from the
/// bulk copies of the operands) are stored too: a plane covers whole tiles.

#include <cstdint>

#if defined(__CUDACC__)
#define OZAKI_RESIDUE_TILES_FUNCTION __host__ __device__ inline
#else
#define OZAKI_RESIDUE_TILES_FUNCTION inline
#endif

namespace ozaki {
namespace Impl {

struct ResidueTiles {
  static constexpr int rows = 128;
  static constexpr int columns = 256;
  static constexpr int slots = 256;
  static constexpr int vectors = 8;
  static constexpr int vector_bytes = 16;
  static constexpr std::int64_t tile_bytes = std::int64_t(rows) * columns;

  std::int64_t tiles_r = 0, tiles_c = 0;

  static ResidueTiles of(std::int64_t product_rows, std::int64_t product_columns) {
    return {(product_rows + rows - 1) / rows, (product_columns + columns - 1) / columns};
  }
  /// Bytes of one modulus' residues.
  std::int64_t plane_bytes() const { return tiles_r * tiles_c * tile_bytes; }
  std::int64_t vector_count() const { return tiles_r * tiles_c * vectors * slots; }

  /// Row of entry i of slot s within its tile.
  OZAKI_RESIDUE_TILES_FUNCTION static int row_in_tile(int s, int i) {
    return 64 * (s / 128) + 16 * (s % 128 / 32) + (s % 32) / 4 + 8 * ((i % 4) / 2);
  }
  /// Column of entry i of slot s within its tile.
  OZAKI_RESIDUE_TILES_FUNCTION static int column_in_tile(int s, int i) {
    return 8 * (i / 4) + 2 * (s % 4) + i % 2;
  }
};

}  // namespace Impl
}  // namespace ozaki
