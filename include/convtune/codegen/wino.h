#pragma once
// Wino(2) (config.h): the parts of a Winograd F(2x2,3x3) convolution around
// its 16 GEMMs, whose loop nest codegen/conv.cpp generates from the configuration
// like any other (over wino_view(shape)). Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks" (2016), with NNPACK's and oneDNN's
// non-fused order: transform every input tile, run the GEMMs, transform
// every output tile; Wino(2,b) does the same per block of b tiles (fused).
// Vectors run along C (input) and K (output), the NHWC
// innermost dimension, so every transform is lane-wise sums and differences.
#include <cstdint>
#include <string>

#include "convtune/core/epilogue.h"
#include "convtune/core/isa.h"
#include "convtune/core/shape.h"

namespace convtune {

/// Floats of a Wino(2) kernel's packed buffer: the transformed weights
/// [16][Kp/kb][C/cu][cu][kb] (16 blocks of the view's packing), then the
/// scratch the call writes: the transformed input [16][B][C] and the GEMMs'
/// output [16][B][K], B = wino_view(shape, block).H tiles (block 0: all
/// N * wino_tiles(shape) of them), once per thread (Wino(2,b,t)).
int64_t wino_packed_floats(const Shape& shape, int64_t lanes, int64_t block, int64_t threads = 1);

/// The transformed weights' floats (where the scratch begins).
int64_t wino_weight_floats(const Shape& shape, int64_t lanes);

/// C for NAME_pack (KCRS -> G g G^T per (k, c), in the GEMMs' packing with k
/// block kb and c unroll cu, zero past K, scratch zeroed), the static input
/// and output transforms of a block of tiles, and the entry point NAME with
/// `params`, which per block of B tiles (Wino(2,block); 0: one block) runs the
/// input transform, calls `gemm` (a static function over one of the 16
/// points: input [B][C], packed weights, output [B][K]) 16 times and runs the
/// output transform, which applies the epilogue. With threads > 1 an OpenMP
/// loop gives each thread a contiguous share of the blocks and its own scratch.
std::string emit_wino(const Isa& isa, const Shape& shape, int64_t block, int64_t threads, int64_t kb, int64_t cu,
                      Epilogue epilogue, const std::string& fn, const std::string& params, const std::string& gemm);

}  // namespace convtune
