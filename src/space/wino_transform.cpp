// The tables of wino_transform.h.
#include "convtune/space/wino_transform.h"

namespace convtune {

namespace {

// F(2,3): y0 = g0 x0 + g1 x1 + g2 x2, y1 = g0 x1 + g1 x2 + g2 x3 in 4
// products (Lavin and Gray 2016, section 4.1).
const WinoTransform kStride1{"F(2x2,3x3)",
                             1,
                             4,
                             4,
                             {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
                             {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
                             {{1, 1, 1, 0}, {0, 1, -1, -1}}};

// Stride 2: y0 = g0 x0 + g1 x1 + g2 x2, y1 = g0 x2 + g1 x3 + g2 x4. The even
// taps (g0, g2) over the even inputs x0, x2, x4 are F(2,2) in 3 products:
// (x0 - x2) g0, x2 (g0 + g2), (x4 - x2) g2; the odd tap g1 over x1, x3 is 2
// products. 5 per dimension, 25 per 2x2 tile where the direct form has 36:
// the polyphase split of a strided convolution into stride-1 ones, each
// with its own minimal filtering.
const WinoTransform kStride2{"F(2x2,3x3) stride 2 (polyphase: F(2,2) on the even taps, direct on the odd)",
                             2,
                             5,
                             5,
                             {{1, 0, -1, 0, 0}, {0, 0, 1, 0, 0}, {0, 0, -1, 0, 1}, {0, 1, 0, 0, 0}, {0, 0, 0, 1, 0}},
                             {{1, 0, 0}, {1, 0, 1}, {0, 0, 1}, {0, 1, 0}, {0, 1, 0}},
                             {{1, 1, 0, 1, 0}, {0, 1, 1, 0, 1}}};

}  // namespace

const WinoTransform& wino_transform(const Shape& shape) { return shape.stride() == 2 ? kStride2 : kStride1; }

int64_t wino_points(const Shape& shape) {
  const int p = wino_transform(shape).points;
  return int64_t(p) * p;
}

}  // namespace convtune
