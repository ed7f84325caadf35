#pragma once
// Wino(2)'s transforms as data: one 1D transform per stride, applied along
// rows and columns (Y = A^T [(G g G^T) .* (B^T d B)] A, Lavin and Gray 2016,
// eq. 8). codegen/wino.cpp emits the sums from these tables, so a new
// transform is a new table, not new generator code.
#include <cstdint>
#include <vector>

#include "convtune/core/shape.h"

namespace convtune {

struct WinoTransform {
  const char* name;   // for the generated header: "F(2x2,3x3)"
  int stride;         // the convolution's stride it computes
  int points;         // products per tile and dimension; a tile's GEMMs: points^2
  int patch;          // input taps a tile reads per dimension: (2 - 1) * stride + 3
  std::vector<std::vector<int>> BT;    // points x patch, entries -1, 0, 1 (the input transform)
  std::vector<std::vector<double>> G;  // points x 3 (the filter's, run once when packing)
  std::vector<std::vector<int>> AT;    // 2 x points, entries -1, 0, 1 (the output transform)
};

/// The transform of a Wino(2)-eligible shape (config.h wino_eligible): F(2,3)
/// at stride 1, its polyphase form at stride 2.
const WinoTransform& wino_transform(const Shape& shape);

/// The GEMMs of a Wino(2) kernel: points^2 (16 at stride 1, 25 at stride 2).
int64_t wino_points(const Shape& shape);

}  // namespace convtune
