// INT8 products with their epilogue in the GEMM, for compute capability 9.0 (see
// residue_products_sm90.hpp; compiled for sm_90a only, by CMake's CUDA language, without
// Kokkos): scheme II's pass products reduced modulo their moduli, and W8A8's product scaled
// into C.
//
// Why a kernel of our own: cublasGemmEx writes each INT32 product (4 bytes per entry and
// modulus) and the reconstruction reads it back; at 16384^3 with 14 moduli that is 15 GB each
// way, a memory-bound stage of the call.  Reduced to its residue in the epilogue an entry
// takes 1 byte.  The INT8 products themselves are power-bound (the card runs them at its
// power cap whichever kernel runs them), so the kernel only has to match cuBLAS there, and on
// a 16384^3 call's pass (16384 x 2048 x 16384, 14 products) this kernel writing INT32 does
// (the benchmarks diary in docs/history/, "scheme II's products reduced in the GEMM (residue
// tiles)").
//
// The kernel: persistent, one CTA per SM, each over 128 x 256 tiles of P (ResidueTiles) in
// turn, three warpgroups.  Warpgroup 0 (one thread) streams K in 128-byte steps with bulk
// tensor copies of A's 128 x 128 and B's 256 x 128 int8 boxes into a ring of 4 stages (48 KB
// each) in shared memory, 128-byte swizzled, each completing on the stage's "full" mbarrier,
// from one tile to the next without a pause.  Warpgroups 1 and 2 each multiply 64 rows of A by
// the 256 rows of B with wgmma.m64n256k32.s32.s8.s8 (4 per stage, both operands from shared
// memory, the accumulators 128 INT32 registers per thread), release a stage (its "empty"
// mbarrier) once the products that read it are done, and at the end of a tile write its
// residues, 16 bytes per store, while the next tile's first stages load.  One launch per pass
// (all L moduli).
//
// W8A8 (ozaki/quantized.hpp) is the same loop over one product (a "modulus" count of 1) with
// another epilogue: each INT32 accumulator scaled, biased and rounded into C, so that the
// INT32 products never reach memory (the unfused path writes them, 4 bytes an entry, and a
// second kernel reads them back).
//
// Exactness: INT32 sums of at most max_k_block products of two int8 residues (|x| <= 128)
// cannot overflow (2^14 * 131071 < 2^31), so the accumulators hold P_l exactly, and each
// residue is computed exactly (symmetric_residue below).  The same bits as cublasGemmEx's
// products reduced by the reconstruction (the CUDA tests compare the two paths' C bit for bit).
#include "residue_products_sm90.hpp"

#include "cublas_handles.hpp"

#include <ozaki/errors.hpp>
#include <ozaki/impl/common/narrow_bits.hpp>
#include <ozaki/impl/crt/residue_tiles.hpp>
#include <ozaki/options.hpp>

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

namespace ozaki {
namespace Impl {
namespace cuda {

namespace {

constexpr int tile_rows = ResidueTiles::rows;     // two consumer warpgroups of 64 rows
constexpr int tile_cols = ResidueTiles::columns;  // wgmma's N
constexpr int tile_k = 128;                       // bytes of K per stage: one swizzle row
constexpr int stage_a_bytes = tile_rows * tile_k;
constexpr int stage_b_bytes = tile_cols * tile_k;
constexpr int stage_bytes = stage_a_bytes + stage_b_bytes;
constexpr int threads = 384;

/// Shared memory of a CTA: the epilogue's stages of operands, its C buffer (1024-byte aligned,
/// as the stages are), the stages' mbarriers, the epilogue's staging.
template <class Epilogue>
constexpr int shared_bytes() {
  return Epilogue::stages * stage_bytes + Epilogue::c_buffer_bytes +
         1024 /* 1024-byte alignment */ + 2 * Epilogue::stages * 8 + Epilogue::staging_bytes;
}

static_assert(ResidueTiles::slots == 2 * 128, "one slot per consumer thread");
static_assert(ResidueTiles::vectors * ResidueTiles::vector_bytes == 128,
              "a slot holds its thread's 128 accumulators");

/// The moduli and their float reciprocals, by value in the launch.
struct Moduli {
  int m[max_moduli];
  float inverse[max_moduli];
};

/// Scheme II's epilogue: each tile's products reduced modulo the tile's modulus into its
/// residue tile.  It reads nothing but the accumulators.
struct ResidueEpilogue {
  static constexpr int stages = 4;
  static constexpr int c_buffer_bytes = 0;
  static constexpr int staging_bytes = 0;
  std::int8_t* tiles;
  std::int64_t plane_bytes;
  Moduli moduli;
};

/// How W8A8's epilogue writes C.  Direct: each thread stores its entries to C, two at a time
/// where C's rows take pairs.  Bulk (16-bit C whose rows are 16-byte aligned and contiguous):
/// the consumers write the tile's entries into a C buffer in shared memory, in the 128-byte
/// swizzle of bulk tensor copies, and one thread per warpgroup stores its 64 rows with bulk
/// tensor stores, which need no registers and clip at C's edges; the consumers go on to the
/// next tile's products while the copies read the buffer, and wait for them only at the next
/// epilogue.  Direct stores fill half of each 32-byte sector per instruction and hold the
/// consumers until each store has read its registers; a 128 x 256 tile's 64 KB of 16-bit C
/// leaves room for three stages of operands (three stages: 144 KB, of the 227 KB a block gets).
enum class CStore { Direct, Bulk };

/// C's entries: float, or the 16-bit pattern of bfloat16 or binary16.
template <QuantizedOutput output>
using OutOf = std::conditional_t<output == QuantizedOutput::Float, float, std::uint16_t>;

/// W8A8's epilogue (QuantizedGemmProblem): Out is float, or the 16-bit pattern of bfloat16 or
/// binary16.  `pairs`: C's two entries (r, c) and (r, c + 1) of an even c are adjacent and
/// aligned, stored at once.  `c_map` (Bulk): C as a 2-D tensor (columns, rows) of 16-bit
/// entries in boxes of 64 x 64, 128-byte swizzle.
///
/// Each consumer warpgroup stages its tile's 256 column scales and column biases in shared
/// memory (staging_bytes): read from global memory inside the store loop, every pair of
/// columns waited on its own load (C's stores may alias the scales, so the loads cannot move
/// ahead of them), one memory latency for each of a thread's 32 pairs.
template <QuantizedOutput output, CStore store>
struct ScaledEpilogue {
  static_assert(store == CStore::Direct || output != QuantizedOutput::Float,
                "a float tile (128 KB) leaves no room for the stages of operands");
  static constexpr int stages = store == CStore::Bulk ? 3 : 4;
  static constexpr int c_buffer_bytes = store == CStore::Bulk ? tile_rows * tile_cols * 2 : 0;
  static constexpr int staging_bytes = 2 * 2 * ResidueTiles::columns * sizeof(float);
  using Out = OutOf<output>;
  CUtensorMap c_map;
  const float* row_scales;
  const float* column_scales;
  const float* bias_rows;
  const float* bias_columns;
  Out* c;
  std::int64_t c_row_stride, c_column_stride;
  std::int64_t rows, columns;
  int tiles_c;
  bool pairs;
};

/// The epilogue's shared memory besides the stages: the staged tile inputs, the C buffer.
struct EpilogueSmem {
  float* staging;
  unsigned char* c_buffer;
};

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(std::uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, int parity) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
/// One box (128 bytes of K x 1 modulus x rows) of a 3-D map (K, modulus, row) into shared
/// memory, completing on `bar`.
__device__ __forceinline__ void bulk_copy(std::uint32_t dst, const CUtensorMap* map,
                                          std::uint32_t bar, int k, int modulus, int row) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(k), "r"(modulus), "r"(row), "r"(bar)
      : "memory");
}
/// bulk_copy's box into the same offset of the shared memory of every CTA of the cluster in
/// `ctas` (a bit per rank), completing on the mbarrier at `bar`'s offset in each.
__device__ __forceinline__ void bulk_copy_multicast(std::uint32_t dst, const CUtensorMap* map,
                                                    std::uint32_t bar, int k, int modulus, int row,
                                                    std::uint16_t ctas) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(k), "r"(modulus), "r"(row), "r"(bar), "h"(ctas)
      : "memory");
}
/// One arrival on the mbarrier at `bar`'s offset in the shared memory of cluster rank `cta`.
/// Release at the CTA's scope (the default): the arrival only says that the stage's wgmma reads
/// are complete, which wgmma.wait_group has ensured, and the stage's next writer is a bulk copy
/// issued after its producer's wait.  A cluster-scope release would also hold the arrival until
/// the thread's outstanding global accesses are performed cluster-wide (design.md §5.3.1).
__device__ __forceinline__ void mbar_arrive_in(std::uint32_t bar, std::uint32_t cta) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}
__device__ __forceinline__ std::uint32_t cluster_rank() {
  std::uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}
/// Every thread of every CTA of the cluster meets (release and acquire across the cluster).
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}

/// The CTA's walk over the tiles.  A unit is `cluster` tiles: the row tiles cluster p + rank of
/// one column tile, which read the same box of B; unit u is column tile u % tiles_c of row
/// pair u / tiles_c of plane u / units_per_plane (column tile fastest, the order of a plain
/// grid, so the CTAs at work at once share their rows of A and the pass's B in L2).  The
/// cluster's CTAs walk the same units; a row tile past the last (tiles_r odd) still loads and
/// multiplies, for its partner's half of B, and stores nothing.
struct TileWalk {
  int tiles_r, tiles_c, units_per_plane, units, rank, cluster;
};
struct WalkedTile {
  int modulus, in_plane, row0, column0;
  bool inside;
};
__device__ __forceinline__ WalkedTile walked_tile(const TileWalk& w, int unit) {
  const int in = unit % w.units_per_plane;
  const int row_tile = in / w.tiles_c * w.cluster + w.rank, column_tile = in % w.tiles_c;
  return {unit / w.units_per_plane, row_tile * w.tiles_c + column_tile, row_tile * tile_rows,
          column_tile * tile_cols, row_tile < w.tiles_r};
}

/// wgmma's descriptor of a K-major operand in 128-byte swizzle: rows of 128 bytes in 8-row
/// atoms of 1024 bytes (stride byte offset), layout type 1.  Adding 2 moves 32 bytes along K.
__device__ __forceinline__ std::uint64_t smem_descriptor(std::uint32_t address) {
  return static_cast<std::uint64_t>((address & 0x3FFFF) >> 4) |
         (static_cast<std::uint64_t>(1) << 16) |          // leading byte offset: unused
         (static_cast<std::uint64_t>(1024 >> 4) << 32) |  // stride byte offset
         (static_cast<std::uint64_t>(1) << 62);           // 128-byte swizzle
}

/// Keeps the compiler from moving other definitions or uses of the accumulators into the
/// wgmma pipeline (ptxas then serialises the wgmmas: warning C7515).
__device__ __forceinline__ void fence_accumulators(std::int32_t (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

#define OZAKI_R8(i)                                                                               \
  "+r"(d[i + 0]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3]), "+r"(d[i + 4]), "+r"(d[i + 5]), \
      "+r"(d[i + 6]), "+r"(d[i + 7])
/// D (+)= A B for 64 rows of A, 256 of B and 32 of K, both from shared memory.
__device__ __forceinline__ void wgmma_m64n256k32(std::int32_t (&d)[128], std::uint64_t da,
                                                 std::uint64_t db, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "
      "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, "
      "%125, %126, %127}, %128, %129, p;\n"
      "}\n"
      : OZAKI_R8(0), OZAKI_R8(8), OZAKI_R8(16), OZAKI_R8(24), OZAKI_R8(32), OZAKI_R8(40),
        OZAKI_R8(48), OZAKI_R8(56), OZAKI_R8(64), OZAKI_R8(72), OZAKI_R8(80), OZAKI_R8(88),
        OZAKI_R8(96), OZAKI_R8(104), OZAKI_R8(112), OZAKI_R8(120)
      : "l"(da), "l"(db), "r"(accumulate));
}
#undef OZAKI_R8

/// The symmetric residue of p modulo m (the reconstruction's convention, crt_high/crt_low):
/// p's low byte for 256; for odd m, p - m q with q the float quotient rounded, then one
/// correction: |p| < 2^31 puts float(p) within 2^7 of p and p / m within 2^7 / 129 < 1 of
/// the float product, so p - m q lies within m/2 + m of 0, and one step of m brings it in.
__device__ __forceinline__ std::uint32_t residue_byte(std::int32_t p, int m, float inverse) {
  if (m == 256) return static_cast<std::uint32_t>(p) & 0xFFu;
  const std::int32_t q = __float2int_rn(__int2float_rn(p) * inverse);
  std::int32_t r = p - q * m;
  const int high = (m - 1) / 2;
  r = r > high ? r - m : r;
  r = r < -high ? r + m : r;
  return static_cast<std::uint32_t>(r) & 0xFFu;
}

/// The producer (thread 0 of warpgroup 0): streams one k-step after another across the CTA's
/// tiles into the `stages` stages, each stage refilled once the consumers that read it (both of
/// each CTA of the cluster) have released it.  With a cluster of 2, each CTA loads its own A
/// box and half of B's, multicast into both CTAs: a stage's bytes arrive from both.
template <int stages, int cluster>
__device__ __forceinline__ void load_stages(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                            unsigned char* smem, std::uint32_t full0,
                                            std::uint32_t empty0, int k_steps,
                                            const TileWalk& walk) {
  constexpr int b_part_rows = tile_cols / cluster;
  int it = 0;  // k-steps issued by this CTA: stage it % stages, its round it / stages
  for (int unit = blockIdx.x / cluster; unit < walk.units; unit += gridDim.x / cluster) {
    const WalkedTile tile = walked_tile(walk, unit);
    for (int kt = 0; kt < k_steps; ++kt, ++it) {
      const int s = it % stages, round = it / stages;
      if (round > 0) mbar_wait(empty0 + 8 * s, (round - 1) & 1);
      const std::uint32_t full = full0 + 8 * s;
      mbar_expect_tx(full, stage_bytes);  // boxes past K or the rows count, zero-filled
      const std::uint32_t a = smem_u32(smem + s * stage_bytes);
      bulk_copy(a, map_a, full, kt * tile_k, tile.modulus, tile.row0);
      const std::uint32_t b = a + stage_a_bytes + walk.rank * b_part_rows * tile_k;
      const int b_row = tile.column0 + walk.rank * b_part_rows;
      if constexpr (cluster == 1) {
        bulk_copy(b, map_b, full, kt * tile_k, tile.modulus, b_row);
      } else {
        bulk_copy_multicast(b, map_b, full, kt * tile_k, tile.modulus, b_row,
                            static_cast<std::uint16_t>((1u << cluster) - 1));
      }
    }
  }
}

/// A consumer's 64 x 256 products of one tile, reduced modulo m, stored as its residue-tile
/// slot: d[4 j + h] is entry i = 4 j + h of slot `slot` (residue_tiles.hpp), vector v holds
/// d[16 v .. 16 v + 15].
__device__ __forceinline__ void store_residues(const std::int32_t (&d)[128], int m, float inverse,
                                               std::int8_t* out) {
#pragma unroll
  for (int v = 0; v < ResidueTiles::vectors; ++v) {
    std::uint32_t w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int i = 16 * v + 4 * q;
      w[q] = residue_byte(d[i], m, inverse) | residue_byte(d[i + 1], m, inverse) << 8 |
             residue_byte(d[i + 2], m, inverse) << 16 | residue_byte(d[i + 3], m, inverse) << 24;
    }
    *reinterpret_cast<uint4*>(out + static_cast<std::int64_t>(v) * ResidueTiles::slots *
                                        ResidueTiles::vector_bytes) =
        make_uint4(w[0], w[1], w[2], w[3]);
  }
}

/// What a tile's epilogue reads besides the accumulators, loaded as the tile starts so that the
/// loads complete behind its products, then staged for the warpgroup.  Scheme II's: nothing.
struct NoTileInputs {};
__device__ __forceinline__ NoTileInputs load_tile_inputs(const ResidueEpilogue&, const WalkedTile&,
                                                         int) {
  return {};
}
__device__ __forceinline__ void stage_tile_inputs(const ResidueEpilogue&, const NoTileInputs&,
                                                  const EpilogueSmem&, int) {}

/// A tile's products as scheme II wants them: slot `slot`'s residues modulo the tile's modulus.
__device__ __forceinline__ void store_tile(const ResidueEpilogue& e, const std::int32_t (&d)[128],
                                           const WalkedTile& tile, int slot, const NoTileInputs&,
                                           const EpilogueSmem&) {
  std::int8_t* out =
      e.tiles + tile.modulus * e.plane_bytes +
      (static_cast<std::int64_t>(tile.in_plane) * ResidueTiles::vectors * ResidueTiles::slots +
       slot) *
          ResidueTiles::vector_bytes;
  store_residues(d, e.moduli.m[tile.modulus], e.moduli.inverse[tile.modulus], out);
}

/// float rounded to C's type (narrow_bits.hpp: the bits of ozaki::bfloat16 and float16).
template <QuantizedOutput output>
__device__ __forceinline__ OutOf<output> rounded(float v) {
  if constexpr (output == QuantizedOutput::Float) {
    return v;
  } else if constexpr (output == QuantizedOutput::BFloat16) {
    return bfloat16_bits(__float_as_uint(v));
  } else {
    return float16_bits(__float_as_uint(v));
  }
}

/// Two floats rounded to C's 16-bit type, x in the low half, by one conversion instruction:
/// round to nearest even, as narrow_bits.hpp rounds by integer arithmetic (a carry into the
/// exponent up to infinity, binary16's subnormals), so the same bits for every number.  A NaN
/// stays NaN, in the instruction's pattern (NaN patterns are the platform's, design.md §14).
template <QuantizedOutput output>
__device__ __forceinline__ std::uint32_t rounded_pair(float x, float y) {
  static_assert(output != QuantizedOutput::Float, "pairs of 16-bit entries");
  std::uint32_t r;
  if constexpr (output == QuantizedOutput::BFloat16) {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(y), "f"(x));
  } else {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(y), "f"(x));
  }
  return r;
}

/// Two adjacent entries of C in one store (`at` aligned to both).
__device__ __forceinline__ void store_pair(float* at, float x, float y) {
  *reinterpret_cast<float2*>(at) = make_float2(x, y);
}
__device__ __forceinline__ void store_pair(std::uint16_t* at, std::uint16_t x, std::uint16_t y) {
  *reinterpret_cast<std::uint32_t*>(at) =
      static_cast<std::uint32_t>(x) | static_cast<std::uint32_t>(y) << 16;
}

/// W8A8's tile inputs: the scale and bias of the thread's two rows, and those of columns t and
/// t + 128 of the tile (t: the thread within its warpgroup) for the warpgroup's staging; zero
/// outside C.
struct ScaledTileInputs {
  float row_scale[2], row_bias[2];
  float column_scale[2], column_bias[2];
};

template <QuantizedOutput output, CStore store>
__device__ __forceinline__ ScaledTileInputs load_tile_inputs(const ScaledEpilogue<output, store>& e,
                                                             const WalkedTile& tile, int slot) {
  const std::int64_t r0 = tile.row0, c0 = tile.column0;
  ScaledTileInputs in;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const std::int64_t r = r0 + ResidueTiles::row_in_tile(slot, 2 * h);
    const bool inside = r < e.rows;
    in.row_scale[h] = inside ? e.row_scales[r] : 0.0f;
    in.row_bias[h] = inside && e.bias_rows ? e.bias_rows[r] : 0.0f;
    const std::int64_t c = c0 + slot % 128 + 128 * h;
    const bool column_inside = c < e.columns;
    in.column_scale[h] = column_inside ? e.column_scales[c] : 0.0f;
    in.column_bias[h] = column_inside && e.bias_columns ? e.bias_columns[c] : 0.0f;
  }
  return in;
}

/// The 128 threads of consumer warpgroup `consumer` meet (named barrier 1 + consumer; 0 is
/// __syncthreads').
__device__ __forceinline__ void warpgroup_barrier(int consumer) {
  asm volatile("bar.sync %0, 128;" ::"r"(1 + consumer) : "memory");
}

/// Two staged floats.  An asm load, so that the compiler keeps it where the store loop reads
/// it: plain loads from shared memory, which C's stores cannot alias, were hoisted out of the
/// unrolled loop all at once, 64 more live registers beside the 128 accumulators (spilled).
__device__ __forceinline__ float2 shared_pair(const float* p) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(smem_u32(p)));
  return v;
}

/// The warpgroup's staging: the tile's 256 column scales, then its 256 column biases.
template <class Float>
__device__ __forceinline__ Float* warpgroup_staging(Float* staging, int consumer) {
  return staging + consumer * 2 * tile_cols;
}

/// The tile's column inputs into the warpgroup's staging, once every thread is done with the
/// previous tile's; with bulk stores, once the previous tile's copies have read the C buffer
/// (the issuing thread waits for them before it meets the others).
template <QuantizedOutput output, CStore store>
__device__ __forceinline__ void stage_tile_inputs(const ScaledEpilogue<output, store>&,
                                                  const ScaledTileInputs& in,
                                                  const EpilogueSmem& smem, int slot) {
  const int consumer = slot / 128, t = slot % 128;
  float* scales = warpgroup_staging(smem.staging, consumer);
  if (store == CStore::Bulk && t == 0) {
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
  warpgroup_barrier(consumer);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    scales[t + 128 * h] = in.column_scale[h];
    scales[tile_cols + t + 128 * h] = in.column_bias[h];
  }
  warpgroup_barrier(consumer);
}

/// One entry of C from its INT32 product before its rounding to C's type: fma(float(P),
/// s_r s_c, bias), the steps of the portable epilogue (ozaki/impl/quantized/w8a8.hpp) with the
/// same roundings (float(P) exact below 2^24 and rounded to nearest above, one product, one
/// fused multiply-add), so the same bits.
__device__ __forceinline__ float scaled_value(std::int32_t p, float row_scale, float column_scale,
                                              float bias) {
  return __fmaf_rn(__int2float_rn(p), __fmul_rn(row_scale, column_scale), bias);
}

/// The thread's pair j of row h (columns 8 j + first and + 1) before the rounding to C's type:
/// scaled_value with the staged column scales `s` and the bias of the column (`b`) or the row.
__device__ __forceinline__ float2 scaled_pair(const std::int32_t (&d)[128], int j, int h,
                                              const ScaledTileInputs& in, float2 s, float2 b,
                                              bool column_bias) {
  return make_float2(
      scaled_value(d[4 * j + 2 * h], in.row_scale[h], s.x, column_bias ? b.x : in.row_bias[h]),
      scaled_value(d[4 * j + 2 * h + 1], in.row_scale[h], s.y, column_bias ? b.y : in.row_bias[h]));
}

/// store(j, h, v) for each of the thread's 64 pairs (scaled_pair; j's column scales and biases
/// read from the staging once for both rows), in the unrolled order.
template <class Store>
__device__ __forceinline__ void for_each_scaled_pair(const std::int32_t (&d)[128],
                                                     const ScaledTileInputs& in,
                                                     const float* scales, const float* biases,
                                                     bool column_bias, Store&& store) {
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const float2 s = shared_pair(scales + 8 * j);
    const float2 b = column_bias ? shared_pair(biases + 8 * j) : make_float2(0.0f, 0.0f);
#pragma unroll
    for (int h = 0; h < 2; ++h) store(j, h, scaled_pair(d, j, h, in, s, b, column_bias));
  }
}

/// A tile's products as W8A8 wants them, stored directly.  The thread's entries lie in 2 rows
/// (i % 4 / 2) and 32 pairs of adjacent columns (i / 4), residue_tiles.hpp's mapping of wgmma's
/// fragment: column first + 8 (i / 4) + i % 2 of row h.  Where both rows and all 256 columns
/// lie in C and its rows are contiguous and aligned for pairs, each pair is one store at an
/// offset the unrolled loop knows; elsewhere each entry is checked.
template <QuantizedOutput output>
__device__ __forceinline__ void store_tile(const ScaledEpilogue<output, CStore::Direct>& e,
                                           const std::int32_t (&d)[128], const WalkedTile& tile,
                                           int slot, const ScaledTileInputs& in,
                                           const EpilogueSmem& smem) {
  using Out = OutOf<output>;
  const int first = ResidueTiles::column_in_tile(slot, 0);
  const std::int64_t r0 = tile.row0;
  const std::int64_t c_first = static_cast<std::int64_t>(tile.column0) + first;
  const std::int64_t columns_left = e.columns - c_first;  // C's columns from the thread's first
  const float* scales = warpgroup_staging(smem.staging, slot / 128) + first;
  const float* biases = scales + tile_cols;
  const bool column_bias = e.bias_columns != nullptr;
  Out* row_c[2];
  bool row_inside[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const std::int64_t r = r0 + ResidueTiles::row_in_tile(slot, 2 * h);
    row_inside[h] = r < e.rows;
    row_c[h] = e.c + r * e.c_row_stride + c_first * e.c_column_stride;
  }
  if (e.pairs && row_inside[0] && row_inside[1] && columns_left >= tile_cols - first) {
    for_each_scaled_pair(d, in, scales, biases, column_bias, [&](int j, int h, float2 v) {
      store_pair(row_c[h] + 8 * j, rounded<output>(v.x), rounded<output>(v.y));
    });
    return;
  }
  for_each_scaled_pair(d, in, scales, biases, column_bias, [&](int j, int h, float2 v) {
    const bool in0 = 8 * j < columns_left, in1 = 8 * j + 1 < columns_left;
    if (!row_inside[h] || !in0) return;
    const Out v0 = rounded<output>(v.x), v1 = rounded<output>(v.y);
    Out* at = row_c[h] + 8 * j * e.c_column_stride;
    if (e.pairs && in1) {
      store_pair(at, v0, v1);
    } else {
      at[0] = v0;
      if (in1) at[e.c_column_stride] = v1;
    }
  });
}

/// The bulk tensor store of one box of C (`map`'s 64 x 64 entries at column, row) from shared
/// memory, in the issuing thread's bulk group.
__device__ __forceinline__ void bulk_store(const CUtensorMap* map, std::uint32_t source, int column,
                                           int row) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(column), "r"(row), "r"(source)
               : "memory");
}

/// A tile's products as W8A8 wants them, through the C buffer (CStore::Bulk).  Warpgroup w's
/// 64 rows are 4 boxes of 64 rows x 64 columns (128 bytes a row, 8 KB a box); row r's 16-byte
/// chunk q of a box lies at chunk q ^ (r % 8), the swizzle the bulk copy undoes.  The thread's
/// pair of columns j (8 j + first, + 1, first = 2 (t % 4)) is 4 bytes of chunk j % 8 of box
/// j / 8, in rows r and r + 8 of the same r % 8 = (t % 32) / 4: the 8 rows a warp's lanes write
/// at once fall in 8 different chunks, every bank once.  Its 8 chunk offsets are the thread's;
/// boxes and the second row are constant offsets from them.
template <QuantizedOutput output>
__device__ __forceinline__ void store_tile(const ScaledEpilogue<output, CStore::Bulk>& e,
                                           const std::int32_t (&d)[128], const WalkedTile& tile,
                                           int slot, const ScaledTileInputs& in,
                                           const EpilogueSmem& smem) {
  constexpr int box_columns = 64, box_bytes = 64 * 128;
  const int consumer = slot / 128, t = slot % 128;
  const int first = ResidueTiles::column_in_tile(slot, 0);
  const float* scales = warpgroup_staging(smem.staging, consumer) + first;
  const float* biases = scales + tile_cols;
  const std::uint32_t region =
      smem_u32(smem.c_buffer) +
      consumer * (ScaledEpilogue<output, CStore::Bulk>::c_buffer_bytes / 2);
  const int row = ResidueTiles::row_in_tile(slot, 0) - 64 * consumer;
  std::uint32_t chunk[8];
#pragma unroll
  for (int q = 0; q < 8; ++q) chunk[q] = region + 128 * row + 16 * (q ^ row % 8) + 2 * first;
  // One loop for each place of the bias, so that no entry selects between them.
  const auto convert_and_write = [&](auto bias_along_columns) {
    for_each_scaled_pair(
        d, in, scales, biases, decltype(bias_along_columns)::value, [&](int j, int h, float2 v) {
          asm volatile(
              "st.shared.u32 [%0], %1;" ::"r"(chunk[j % 8] + j / 8 * box_bytes + h * 8 * 128),
              "r"(rounded_pair<output>(v.x, v.y))
              : "memory");
        });
  };
  if (e.bias_columns != nullptr) {
    convert_and_write(std::true_type{});
  } else {
    convert_and_write(std::false_type{});
  }
  // The buffer's generic writes made visible to the bulk copies (the async proxy), then every
  // thread's done before one issues the copies; the boxes outside C are left out, the copies
  // clip those that cross its edges.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  warpgroup_barrier(consumer);
  if (t == 0) {
    const int row0 = tile.row0 + 64 * consumer;
    const int column0 = tile.column0;
    if (row0 < e.rows) {
#pragma unroll
      for (int box = 0; box < tile_cols / box_columns; ++box) {
        if (column0 + box * box_columns < e.columns) {
          bulk_store(&e.c_map, region + box * box_bytes, column0 + box * box_columns, row0);
        }
      }
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
  }
}

/// Before the CTA ends: its bulk stores complete (the C buffer read, C written).
template <class Epilogue>
__device__ __forceinline__ void finish_stores(const Epilogue&, int slot) {
  if constexpr (Epilogue::c_buffer_bytes > 0) {
    if (slot % 128 == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

/// A consumer warpgroup (64 rows of each tile): per tile, the wgmma products of every k-step
/// as the stages fill, each stage released (in every CTA of the cluster, whose producers wrote
/// it) once its products are done, then the epilogue's stores.
template <int cluster, class Epilogue>
__device__ __forceinline__ void multiply_tiles(unsigned char* smem, std::uint32_t full0,
                                               std::uint32_t empty0,
                                               const EpilogueSmem& epilogue_smem, int consumer,
                                               int k_steps, const TileWalk& walk,
                                               const Epilogue& epilogue) {
  constexpr int stages = Epilogue::stages;
  const int slot = consumer * 128 + threadIdx.x % 128;
  const auto release = [&](int stage) {
    if (threadIdx.x % 128 != 0) return;
    if constexpr (cluster == 1) {
      mbar_arrive(empty0 + 8 * stage);
    } else {
#pragma unroll
      for (int cta = 0; cta < cluster; ++cta) mbar_arrive_in(empty0 + 8 * stage, cta);
    }
  };
  std::int32_t d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0;
  int it = 0;
  for (int unit = blockIdx.x / cluster; unit < walk.units; unit += gridDim.x / cluster) {
    const WalkedTile tile = walked_tile(walk, unit);
    // Issued before the products (their asm's memory clobbers keep the loads here); waited on
    // only when staged.
    const auto inputs = load_tile_inputs(epilogue, tile, slot);
    fence_accumulators(d);
    for (int kt = 0; kt < k_steps; ++kt, ++it) {
      const int s = it % stages;
      mbar_wait(full0 + 8 * s, (it / stages) & 1);
      const std::uint32_t a = smem_u32(smem + s * stage_bytes) + consumer * 64 * tile_k;
      const std::uint32_t b = smem_u32(smem + s * stage_bytes + stage_a_bytes);
      const std::uint64_t da = smem_descriptor(a), db = smem_descriptor(b);
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < tile_k / 32; ++kk)  // the tile's first product overwrites d
        wgmma_m64n256k32(d, da + 2 * kk, db + 2 * kk, (kt > 0 || kk > 0) ? 1 : 0);
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      // The previous k-step's products are done: its stage may be refilled.
      asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
      if (kt > 0) release((it - 1) % stages);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    release((it - 1) % stages);
    fence_accumulators(d);
    if (tile.inside) {  // the same for the whole CTA
      stage_tile_inputs(epilogue, inputs, epilogue_smem, slot);
      store_tile(epilogue, d, tile, slot, inputs, epilogue_smem);
    }
  }
  finish_stores(epilogue, slot);
}
#endif

/// The products of `moduli_count` planes of tiles_r x tiles_c tiles over K = kpad, each tile's
/// stored by `epilogue`, by CTAs in clusters of `cluster` (1 or 2; map_b's boxes are
/// 256 / cluster rows).
template <class Epilogue, int cluster>
__global__ void __launch_bounds__(threads, 1)
    products_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, int kpad, int tiles_r, int tiles_c,
                    int moduli_count, const __grid_constant__ Epilogue epilogue) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int stages = Epilogue::stages;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~static_cast<std::uintptr_t>(1023));
  unsigned char* c_buffer = smem + stages * stage_bytes;
  std::uint64_t* bars = reinterpret_cast<std::uint64_t*>(c_buffer + Epilogue::c_buffer_bytes);
  const std::uint32_t full0 = smem_u32(bars), empty0 = smem_u32(bars + stages);
  const EpilogueSmem epilogue_smem{reinterpret_cast<float*>(bars + 2 * stages), c_buffer};
  const int warpgroup = threadIdx.x / 128;
  const int k_steps = (kpad + tile_k - 1) / tile_k;
  // Persistent: the cluster takes units c, c + clusters, ... (TileWalk).  Its producers stream
  // one k-step after another across units: while the consumers store a tile, the next tile's
  // first stages are already loading.
  const int units_per_plane = (tiles_r + cluster - 1) / cluster * tiles_c;
  const TileWalk walk{tiles_r,
                      tiles_c,
                      units_per_plane,
                      units_per_plane * moduli_count,
                      cluster == 1 ? 0 : static_cast<int>(cluster_rank()),
                      cluster};

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(full0 + 8 * s, 1);             // the producer's arrival, plus the copies' bytes
      mbar_init(empty0 + 8 * s, 2 * cluster);  // each consumer warpgroup of the cluster
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  // The barriers initialised before any CTA of the cluster copies into or arrives on them.
  if constexpr (cluster == 1) {
    __syncthreads();
  } else {
    cluster_sync();
  }

  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (threadIdx.x == 0) {
      load_stages<stages, cluster>(&map_a, &map_b, smem, full0, empty0, k_steps, walk);
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    multiply_tiles<cluster>(smem, full0, empty0, epilogue_smem, warpgroup - 1, k_steps, walk,
                            epilogue);
  }
  // No CTA leaves while its partner may still copy into its stages or arrive on its barriers.
  if constexpr (cluster > 1) cluster_sync();
#else
  // Built for another architecture: the *_supported functions refuse every device there.
  (void)kpad, (void)tiles_r, (void)tiles_c, (void)moduli_count, (void)epilogue;
#endif
}

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                           cudaEnableDefault, &found);
    return e == cudaSuccess && found == cudaDriverEntryPointSuccess
               ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn)
               : nullptr;
  }();
  return encode;
}

/// A 3-D map (K, modulus, row) over `rows` rows of `moduli` blocks of kpad bytes each, rows
/// `row_bytes` apart: boxes of 128 bytes x 1 x box_rows, 128-byte swizzle (wgmma's), zeros past
/// K and past the rows.
CUtensorMap operand_map(const std::int8_t* base, std::int64_t kpad, int moduli, std::int64_t rows,
                        std::int64_t row_bytes, int box_rows) {
  CUtensorMap map;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(kpad), static_cast<cuuint64_t>(moduli),
                              static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(kpad), static_cast<cuuint64_t>(row_bytes)};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(tile_k), 1u,
                             static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r = tensor_map_encoder()(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, const_cast<std::int8_t*>(base), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    throw BackendError("cuTensorMapEncodeTiled failed (CUresult " +
                       std::to_string(static_cast<int>(r)) + ")");
  }
  return map;
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

/// What both forms need: compute capability 9.0, K a multiple of 16 within one INT32-exact
/// block, `planes` planes of rows_a x rows_b products within the bulk copies' and the tile
/// counters' 32-bit coordinates, a driver that encodes tensor maps, and the kernel's sm_90a
/// code in the library.
template <class Epilogue>
bool kernel_runs(int device, std::int64_t k, std::int64_t rows_a, std::int64_t rows_b, int planes,
                 std::string& why_not) {
  const cudaDeviceProp& prop = device_properties(device);
  if (prop.major != 9 || prop.minor != 0) {
    why_not = "the library's INT8 product kernel runs on compute capability 9.0 only";
    return false;
  }
  if (k < 16 || k % 16 != 0 || k > max_k_block) {
    why_not = "inner length not a multiple of 16 within one INT32-exact block";
    return false;
  }
  const ResidueTiles t = ResidueTiles::of(rows_a, rows_b);
  if (rows_a < 1 || rows_b < 1 || t.tiles_r * t.tiles_c * planes > 2147483647 ||
      k * planes >= (std::int64_t(1) << 40) || rows_a >= (std::int64_t(1) << 31) - 256 ||
      rows_b >= (std::int64_t(1) << 31) - 256) {
    why_not = "sizes beyond the kernel's grid or bulk-copy limits";
    return false;
  }
  if (tensor_map_encoder() == nullptr) {
    why_not = "the driver has no cuTensorMapEncodeTiled";
    return false;
  }
  static const bool has_code = [] {
    cudaFuncAttributes attributes{};
    return cudaFuncGetAttributes(&attributes, products_kernel<Epilogue, 1>) == cudaSuccess &&
           attributes.ptxVersion >= 90;
  }();
  if (!has_code) {
    (void)cudaGetLastError();
    why_not = "the library was built without sm_90a code for its INT8 product kernel";
    return false;
  }
  return true;
}

/// An operand of the kernel: `rows` rows of `moduli` blocks of kpad bytes, rows `row_bytes`
/// apart (operand_map).
struct OperandRows {
  const std::int8_t* base;
  std::int64_t kpad;
  int moduli;
  std::int64_t rows, row_bytes;
};

/// A launch of `ctas` CTAs of the product kernel in clusters of 2 on `stream`; `attribute`
/// (the cluster's shape) is the config's and must outlive it.
cudaLaunchConfig_t paired_launch(int ctas, int shared, cudaStream_t stream,
                                 cudaLaunchAttribute& attribute) {
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = 2;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(ctas);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

/// How many clusters of products_kernel<Epilogue, 2> the current device holds at once (asked
/// once per device).
template <class Epilogue>
int resident_pairs(int device) {
  static std::mutex mutex;
  static std::map<int, int> known;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto found = known.find(device);
  if (found != known.end()) return found->second;
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t config = paired_launch(2 * device_properties(device).multiProcessorCount,
                                                  shared_bytes<Epilogue>(), nullptr, attribute);
  int clusters = 0;
  check(cudaOccupancyMaxActiveClusters(&clusters, products_kernel<Epilogue, 2>, &config),
        "cudaOccupancyMaxActiveClusters(products_kernel)");
  if (clusters < 1) throw BackendError("products_kernel: no cluster of 2 CTAs fits the device");
  known.emplace(device, clusters);
  return clusters;
}

/// One launch over `planes` planes of tiles: persistent CTAs, one per multiprocessor and at
/// most one per tile.  With `pairs_share_b` and at least two row tiles, the CTAs run in
/// clusters of 2 that take two row tiles of one column tile at a time and load B's box once
/// for both (multicast): a third less of the operands' traffic from L2 to shared memory.
template <class Epilogue>
void launch(const OperandRows& a, const OperandRows& b, const ResidueTiles& t, int planes,
            const Epilogue& epilogue, bool pairs_share_b, cudaStream_t stream) {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const CUtensorMap map_a = operand_map(a.base, a.kpad, a.moduli, a.rows, a.row_bytes, tile_rows);
  const int k = static_cast<int>(a.kpad), tiles_r = static_cast<int>(t.tiles_r),
            tiles_c = static_cast<int>(t.tiles_c);
  if (!pairs_share_b || t.tiles_r < 2) {
    // Per launch (the attribute is the current device's; the call costs well under a
    // microsecond against a launch of milliseconds).
    check(
        cudaFuncSetAttribute(products_kernel<Epilogue, 1>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes<Epilogue>()),
        "cudaFuncSetAttribute(products_kernel)");
    const std::int64_t total = t.tiles_r * t.tiles_c * planes;
    const int ctas = static_cast<int>(
        std::min<std::int64_t>(total, device_properties(device).multiProcessorCount));
    products_kernel<Epilogue, 1><<<ctas, threads, shared_bytes<Epilogue>(), stream>>>(
        map_a, operand_map(b.base, b.kpad, b.moduli, b.rows, b.row_bytes, tile_cols), k, tiles_r,
        tiles_c, planes, epilogue);
    check(cudaGetLastError(), "products_kernel launch");
    return;
  }
  check(cudaFuncSetAttribute(products_kernel<Epilogue, 2>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes<Epilogue>()),
        "cudaFuncSetAttribute(products_kernel)");
  const std::int64_t units = (t.tiles_r + 1) / 2 * t.tiles_c * planes;
  const int clusters =
      static_cast<int>(std::min<std::int64_t>(units, resident_pairs<Epilogue>(device)));
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t config =
      paired_launch(2 * clusters, shared_bytes<Epilogue>(), stream, attribute);
  check(
      cudaLaunchKernelEx(&config, products_kernel<Epilogue, 2>, map_a,
                         operand_map(b.base, b.kpad, b.moduli, b.rows, b.row_bytes, tile_cols / 2),
                         k, tiles_r, tiles_c, planes, epilogue),
      "products_kernel launch");
}

/// C (rows x columns of 16-bit entries, rows `row_stride` entries apart) as the bulk stores'
/// 2-D tensor: boxes of 64 x 64 entries (128-byte rows), 128-byte swizzle.
CUtensorMap c_map(void* c, std::int64_t rows, std::int64_t columns, std::int64_t row_stride) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_stride) * 2};
  const cuuint32_t box[2] = {64u, 64u};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = tensor_map_encoder()(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, c, dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    throw BackendError("cuTensorMapEncodeTiled failed for C (CUresult " +
                       std::to_string(static_cast<int>(r)) + ")");
  }
  return map;
}

/// Whether C takes bulk stores (CStore::Bulk): 16-bit entries, the kernel's columns C's
/// contiguous index, and the address and the row stride multiples of 16 bytes (the tensor
/// map's rules).
bool bulk_stores_fit(const QuantizedGemmProblem& p) {
  return p.output != QuantizedOutput::Float && p.c_column_stride == 1 && aligned16(p.c) &&
         p.c_row_stride % 8 == 0 && p.c_row_stride >= p.columns &&
         p.c_row_stride < (std::int64_t(1) << 39);
}

template <QuantizedOutput output, CStore store>
void launch_scaled(const QuantizedGemmProblem& p, bool pairs_share_b, cudaStream_t stream) {
  using Epilogue = ScaledEpilogue<output, store>;
  using Out = typename Epilogue::Out;
  const ResidueTiles t = ResidueTiles::of(p.rows, p.columns);
  Epilogue e{};
  if constexpr (store == CStore::Bulk) e.c_map = c_map(p.c, p.rows, p.columns, p.c_row_stride);
  e.row_scales = p.row_scales;
  e.column_scales = p.column_scales;
  e.bias_rows = p.bias_rows;
  e.bias_columns = p.bias_columns;
  e.c = static_cast<Out*>(p.c);
  e.c_row_stride = p.c_row_stride;
  e.c_column_stride = p.c_column_stride;
  e.rows = p.rows;
  e.columns = p.columns;
  e.tiles_c = static_cast<int>(t.tiles_c);
  e.pairs = p.c_column_stride == 1 && p.c_row_stride % 2 == 0 &&
            reinterpret_cast<std::uintptr_t>(p.c) % (2 * sizeof(Out)) == 0;
  launch(OperandRows{p.a, p.k, 1, p.rows, p.lda}, OperandRows{p.b, p.k, 1, p.columns, p.ldb}, t, 1,
         e, pairs_share_b, stream);
}

template <QuantizedOutput output>
void launch_scaled(const QuantizedGemmProblem& p, bool pairs_share_b, cudaStream_t stream) {
  if (bulk_stores_fit(p)) {
    launch_scaled<output, CStore::Bulk>(p, pairs_share_b, stream);
  } else {
    launch_scaled<output, CStore::Direct>(p, pairs_share_b, stream);
  }
}

}  // namespace

bool residue_products_supported(int device, const ResidueProducts& p, std::string& why_not) {
  if (p.moduli < 1 || p.moduli > max_moduli) {
    why_not = "moduli count out of range";
    return false;
  }
  if (!aligned16(p.a) || !aligned16(p.b) || !aligned16(p.tiles)) {
    why_not = "operands not 16-byte aligned";
    return false;
  }
  return kernel_runs<ResidueEpilogue>(device, p.kpad, p.rows_a, p.rows_b, p.moduli, why_not);
}

void residue_products(const ResidueProducts& p, bool pairs_share_b, cudaStream_t stream) {
  ResidueEpilogue e{};
  e.tiles = p.tiles;
  const ResidueTiles t = ResidueTiles::of(p.rows_a, p.rows_b);
  e.plane_bytes = t.plane_bytes();
  for (int l = 0; l < p.moduli; ++l) {
    e.moduli.m[l] = crt_moduli[l];
    e.moduli.inverse[l] = 1.0f / static_cast<float>(crt_moduli[l]);
  }
  const std::int64_t row_bytes = p.kpad * p.moduli;
  launch(OperandRows{p.a, p.kpad, p.moduli, p.rows_a, row_bytes},
         OperandRows{p.b, p.kpad, p.moduli, p.rows_b, row_bytes}, t, p.moduli, e, pairs_share_b,
         stream);
}

bool scaled_products_supported(int device, const QuantizedGemmProblem& p, std::string& why_not) {
  if (!aligned16(p.a) || !aligned16(p.b) || p.lda % 16 != 0 || p.ldb % 16 != 0 || p.lda < p.k ||
      p.ldb < p.k || p.lda >= (std::int64_t(1) << 40) || p.ldb >= (std::int64_t(1) << 40)) {
    why_not = "operand rows not 16-byte aligned K-contiguous rows";
    return false;
  }
  if (!kernel_runs<ScaledEpilogue<QuantizedOutput::Float, CStore::Direct>>(device, p.k, p.rows,
                                                                           p.columns, 1, why_not)) {
    return false;
  }
  const ResidueTiles t = ResidueTiles::of(p.rows, p.columns);
  if (t.tiles_r * t.tiles_c < device_properties(device).multiProcessorCount) {
    why_not = "fewer 128 x 256 tiles than multiprocessors";
    return false;
  }
  return true;
}

void scaled_products(const QuantizedGemmProblem& p, bool pairs_share_b, cudaStream_t stream) {
  switch (p.output) {
    case QuantizedOutput::Float:
      launch_scaled<QuantizedOutput::Float, CStore::Direct>(p, pairs_share_b, stream);
      break;
    case QuantizedOutput::BFloat16:
      launch_scaled<QuantizedOutput::BFloat16>(p, pairs_share_b, stream);
      break;
    case QuantizedOutput::Float16:
      launch_scaled<QuantizedOutput::Float16>(p, pairs_share_b, stream);
      break;
  }
}

}  // namespace cuda
}  // namespace Impl
}  // namespace ozaki
