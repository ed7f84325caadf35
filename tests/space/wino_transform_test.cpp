// The transform tables (wino_transform.h) computed in double, without any
// generated code: A^T [(G g G^T) .* (B^T d B)] A must equal the direct
// correlation of a patch at the table's stride, for every 2x2 output.
#include "convtune/space/wino_transform.h"

#include <gtest/gtest.h>

#include <random>

namespace convtune::wino_transform_test {
namespace {

using Matrix = std::vector<std::vector<double>>;

template <class T>
Matrix product(const std::vector<std::vector<T>>& a, const Matrix& b) {
  Matrix out(a.size(), std::vector<double>(b[0].size(), 0.0));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < b.size(); ++k)
      for (size_t j = 0; j < b[0].size(); ++j) out[i][j] += a[i][k] * b[k][j];
  return out;
}

Matrix transpose(const Matrix& a) {
  Matrix t(a[0].size(), std::vector<double>(a.size()));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a[0].size(); ++j) t[j][i] = a[i][j];
  return t;
}

TEST(WinoTransform, TablesComputeTheStridedConvolution) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int stride : {1, 2}) {
    Shape sh;
    sh.R = sh.S = 3;
    sh.set_stride(stride);
    const WinoTransform& tf = wino_transform(sh);
    ASSERT_EQ(tf.stride, stride);
    ASSERT_EQ(tf.patch, stride + 3);
    ASSERT_EQ(wino_points(sh), int64_t(tf.points) * tf.points);
    for (int trial = 0; trial < 20; ++trial) {
      Matrix d(tf.patch, std::vector<double>(tf.patch)), g(3, std::vector<double>(3));
      for (auto& row : d)
        for (double& x : row) x = dist(rng);
      for (auto& row : g)
        for (double& x : row) x = dist(rng);
      // u = G g G^T, v = B^T d B, y = A^T (u .* v) A.
      const Matrix u = product(tf.G, transpose(product(tf.G, transpose(g))));
      const Matrix v = product(tf.BT, transpose(product(tf.BT, transpose(d))));
      Matrix uv = u;
      for (int a = 0; a < tf.points; ++a)
        for (int b = 0; b < tf.points; ++b) uv[a][b] *= v[a][b];
      const Matrix y = product(tf.AT, transpose(product(tf.AT, transpose(uv))));
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          double direct = 0;
          for (int r = 0; r < 3; ++r)
            for (int s = 0; s < 3; ++s) direct += g[r][s] * d[i * stride + r][j * stride + s];
          EXPECT_NEAR(y[i][j], direct, 1e-12) << tf.name << " output (" << i << "," << j << ")";
        }
    }
  }
}

TEST(WinoTransform, InputAndOutputTablesAreSumsAndDifferences) {
  for (int stride : {1, 2}) {
    Shape sh;
    sh.R = sh.S = 3;
    sh.set_stride(stride);
    const WinoTransform& tf = wino_transform(sh);
    for (const auto* table : {&tf.BT, &tf.AT})
      for (const auto& row : *table) {
        int plus = 0;
        for (int x : row) {
          EXPECT_TRUE(x == -1 || x == 0 || x == 1) << tf.name;
          plus += x == 1;
        }
        EXPECT_GE(plus, 1) << tf.name << ": codegen/wino.cpp starts each sum from a +1 term";
      }
  }
}

}  // namespace
}  // namespace convtune::wino_transform_test
