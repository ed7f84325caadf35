#pragma once
// Wino(2) (config.h): the parts of a Winograd F(2x2,3x3) convolution around
// its 16 GEMMs, whose loop nest codegen.cpp generates from the configuration
// like any other (over wino_view(shape)). Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks" (2016), with NNPACK's and oneDNN's
// non-fused order: transform every input tile, run the GEMMs, transform
// every output tile. Vectors run along C (input) and K (output), the NHWC
// innermost dimension, so every transform is lane-wise sums and differences.
#include <cstdint>
#include <string>

#include "convtune/core/epilogue.h"
#include "convtune/core/isa.h"
#include "convtune/core/shape.h"

namespace convtune {

/// Floats of a Wino(2) kernel's packed buffer: the transformed weights
/// [16][Kp/kb][C/cu][cu][kb] (16 blocks of the view's packing), then the
/// scratch the call writes: the transformed input [16][T][C] and the GEMMs'
/// output [16][T][K], T = N * wino_tiles(shape).
int64_t wino_packed_floats(const Shape& shape, int64_t lanes);

/// The transformed weights' floats (where the scratch begins).
int64_t wino_weight_floats(const Shape& shape, int64_t lanes);

/// C for NAME_pack (KCRS -> G g G^T per (k, c), in the GEMMs' packing with k
/// block kb and c unroll cu, zero past K, scratch zeroed), the static input
/// and output transforms, and the entry point NAME with `params`, which calls
/// `gemm` (a static function over one of the 16 points: input [T][C], packed
/// weights, output [T][K]) 16 times. The output transform applies the epilogue.
std::string emit_wino(const Isa& isa, const Shape& shape, int64_t kb, int64_t cu, Epilogue epilogue,
                      const std::string& fn, const std::string& params, const std::string& gemm);

}  // namespace convtune
