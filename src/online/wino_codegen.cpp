// Wino(2): Winograd F(2x2,3x3) around the generated GEMMs (wino_codegen.h).
//   Y = A^T [ (G g G^T) .* (B^T d B) ] A   (Lavin and Gray 2016, eq. 8)
// with d a 4x4 input patch (zeros outside the unpadded input: padding is
// never read), g a 3x3 filter, Y the 2x2 output block whose top-left output
// is the patch's top-left tap. The 16 products of .* summed over C are the
// GEMMs; the weights' transform runs once in NAME_pack, in double.
#include "convtune/online/wino_codegen.h"

#include <fmt/format.h>

#include "convtune/offline/ukernel_codegen.h"
#include "convtune/online/config.h"

namespace convtune {

namespace {

struct Emit {
  const Isa& isa;
  std::string vt() const { return isa.vector_type; }
  std::string load(const std::string& ptr, int64_t n) const { return load_lanes(isa, ptr, n); }
  std::string store(const std::string& ptr, const std::string& val, int64_t n) const {
    return store_lanes(isa, ptr, val, n);
  }
  std::string add(const std::string& a, const std::string& b) const { return Isa::expand(isa.add, {{"a", a}, {"b", b}}); }
  std::string sub(const std::string& a, const std::string& b) const { return Isa::expand(isa.sub, {{"a", a}, {"b", b}}); }
};

// B^T d B of one vector of channels at c, n lanes: 16 loads (each guarded
// when `guarded`: the patch runs over the input's edge), 32 sums, 16 stores
// into the 16 planes of v.
std::string input_body(const Emit& e, const Shape& sh, int64_t n, bool guarded, const std::string& ind) {
  std::string o;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const std::string ld = e.load(fmt::format("input + io + {} + c", (i * sh.W + j) * sh.C), n);
      o += ind + fmt::format("const {} d{}{} = {};\n", e.vt(), i, j,
                             guarded ? fmt::format("ry[{}] && rx[{}] ? {} : {}", i, j, ld, e.isa.zero) : ld);
    }
  // Rows: B^T d.
  for (int j = 0; j < 4; ++j) {
    o += ind + fmt::format("const {} t0{} = {};\n", e.vt(), j, e.sub(fmt::format("d0{}", j), fmt::format("d2{}", j)));
    o += ind + fmt::format("const {} t1{} = {};\n", e.vt(), j, e.add(fmt::format("d1{}", j), fmt::format("d2{}", j)));
    o += ind + fmt::format("const {} t2{} = {};\n", e.vt(), j, e.sub(fmt::format("d2{}", j), fmt::format("d1{}", j)));
    o += ind + fmt::format("const {} t3{} = {};\n", e.vt(), j, e.sub(fmt::format("d1{}", j), fmt::format("d3{}", j)));
  }
  // Columns: (B^T d) B, stored to point (i, j) = plane 4i + j.
  for (int i = 0; i < 4; ++i) {
    const std::string t0 = fmt::format("t{}0", i), t1 = fmt::format("t{}1", i), t2 = fmt::format("t{}2", i),
                      t3 = fmt::format("t{}3", i);
    const std::string v[4] = {e.sub(t0, t2), e.add(t1, t2), e.sub(t2, t1), e.sub(t1, t3)};
    for (int j = 0; j < 4; ++j)
      o += ind + e.store(fmt::format("v + {} * VPLANE + vo + c", 4 * i + j), v[j], n) + ";\n";
  }
  return o;
}

// A^T m A of one vector of output channels at k, n lanes, the epilogue, and
// the stores of the block's outputs that exist (an odd Ho or Wo ends in half a block).
std::string output_body(const Emit& e, const Shape& sh, Epilogue ep, int64_t n, const std::string& ind) {
  std::string o;
  for (int p = 0; p < 16; ++p)
    o += ind + fmt::format("const {} m{}{} = {};\n", e.vt(), p / 4, p % 4,
                           e.load(fmt::format("m + {} * MPLANE + mo + k", p), n));
  // Rows: A^T m (A^T = [1 1 1 0; 0 1 -1 -1]).
  for (int j = 0; j < 4; ++j) {
    o += ind + fmt::format("const {} s0{} = {};\n", e.vt(), j,
                           e.add(e.add(fmt::format("m0{}", j), fmt::format("m1{}", j)), fmt::format("m2{}", j)));
    o += ind + fmt::format("const {} s1{} = {};\n", e.vt(), j,
                           e.sub(e.sub(fmt::format("m1{}", j), fmt::format("m2{}", j)), fmt::format("m3{}", j)));
  }
  const std::string at[2][2] = {{"0", fmt::format("{}", sh.K)},
                                {fmt::format("{}", sh.Wo() * sh.K), fmt::format("{}", sh.Wo() * sh.K + sh.K)}};
  for (int i = 0; i < 2; ++i) {
    const std::string s0 = fmt::format("s{}0", i), s1 = fmt::format("s{}1", i), s2 = fmt::format("s{}2", i),
                      s3 = fmt::format("s{}3", i);
    o += ind + fmt::format("{} y{}0 = {};\n", e.vt(), i, e.add(e.add(s0, s1), s2));
    o += ind + fmt::format("{} y{}1 = {};\n", e.vt(), i, e.sub(e.sub(s1, s2), s3));
  }
  if (has_bias(ep)) {
    o += ind + fmt::format("const {} b = {};\n", e.vt(), e.load("bias + k", n));
    for (int p = 0; p < 4; ++p) {
      const std::string y = fmt::format("y{}{}", p / 2, p % 2);
      o += ind + fmt::format("{} = {};\n", y, e.add(y, "b"));
    }
  }
  // Each output: guarded by whether it exists, with the residual and the clamp.
  const char* guard[4] = {"", "if (okx) ", "if (oky) ", "if (oky && okx) "};
  for (int p = 0; p < 4; ++p) {
    const std::string y = fmt::format("y{}{}", p / 2, p % 2), off = at[p / 2][p % 2];
    std::string val = y;
    if (has_residual(ep)) val = e.add(val, e.load(fmt::format("residual + oo + {} + k", off), n));
    if (ep == Epilogue::bias_relu || ep == Epilogue::bias_relu6)
      val = Isa::expand(e.isa.max, {{"a", val}, {"b", "ct_zero"}});
    if (ep == Epilogue::bias_relu6) val = Isa::expand(e.isa.min, {{"a", val}, {"b", "ct_six"}});
    o += ind + guard[p] + e.store(fmt::format("output + oo + {} + k", off), val, n) + ";\n";
  }
  return o;
}

}  // namespace

int64_t wino_weight_floats(const Shape& sh, int64_t lanes) { return 16 * sh.padded_K(lanes) * sh.C; }

int64_t wino_packed_floats(const Shape& sh, int64_t lanes, int64_t block) {
  return wino_weight_floats(sh, lanes) + 16 * wino_view(sh, block).H * (sh.C + sh.K);
}

std::string emit_wino(const Isa& isa, const Shape& sh, int64_t block, int64_t kb, int64_t cu, Epilogue ep,
                      const std::string& fn, const std::string& params, const std::string& gemm) {
  const Emit e{isa};
  const int64_t L = isa.lanes, Kp = sh.padded_K(L), C = sh.C, K = sh.K;
  const int64_t TH = (sh.Ho() + 1) / 2, TW = (sh.Wo() + 1) / 2, T = sh.N * TH * TW;
  const int64_t B = wino_view(sh, block).H;  // tiles per block: the GEMMs' column
  const int64_t U = wino_weight_floats(sh, L), VPLANE = B * C, MPLANE = B * K;
  std::string o;

  // The weights: u = G g G^T, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
  o += fmt::format(
      "void {0}_pack(const float *restrict kcrs, float *restrict packed)\n{{\n"
      "  for (long k = 0; k < {1}; ++k)\n"
      "    for (long c = 0; c < {2}; ++c) {{\n"
      "      double g[3][3] = {{{{0}}}}, t[4][3], u[4][4];\n"
      "      if (k < {3})\n"
      "        for (int r = 0; r < 3; ++r)\n"
      "          for (int s = 0; s < 3; ++s) g[r][s] = kcrs[((k * {2} + c) * 3 + r) * 3 + s];\n"
      "      for (int s = 0; s < 3; ++s) {{\n"
      "        t[0][s] = g[0][s];\n"
      "        t[1][s] = 0.5 * (g[0][s] + g[1][s] + g[2][s]);\n"
      "        t[2][s] = 0.5 * (g[0][s] - g[1][s] + g[2][s]);\n"
      "        t[3][s] = g[2][s];\n"
      "      }}\n"
      "      for (int i = 0; i < 4; ++i) {{\n"
      "        u[i][0] = t[i][0];\n"
      "        u[i][1] = 0.5 * (t[i][0] + t[i][1] + t[i][2]);\n"
      "        u[i][2] = 0.5 * (t[i][0] - t[i][1] + t[i][2]);\n"
      "        u[i][3] = t[i][2];\n"
      "      }}\n"
      "      for (int p = 0; p < 16; ++p)\n"
      "        packed[p * {4} + (k / {5}) * {6} + (c / {7}) * {8} + (c % {7}) * {5} + k % {5}] = (float)u[p / 4][p % 4];\n"
      "    }}\n"
      "  for (long i = {9}; i < {10}; ++i) packed[i] = 0.0f;  /* the scratch: defined before the first call */\n"
      "}}\n\n",
      fn, Kp, C, K, Kp * C, kb, kb * C, cu, cu * kb, U, wino_packed_floats(sh, L, block));

  // The input transform: the block's tiles from t0, each 4x4 patch B^T d B, into v's 16 planes [B][C].
  const int64_t Cfull = C / L * L, Ctail = C - Cfull;
  o += fmt::format(
      "#define VPLANE {5}\n"
      "static void {0}_wino_in(const float *restrict input, float *restrict v, long t0)\n{{\n"
      "  for (long t = 0; t < {1}; ++t) {{\n"
      "    const long n = (t0 + t) / {9}, ty = (t0 + t) / {3} % {2}, tx = (t0 + t) % {3};\n"
      "    const long y0 = 2 * ty - {4}, x0 = 2 * tx - {4};\n"
      "    const long vo = t * {6};\n"
      "    /* The patch's first tap: io + (i * W + j) * C is tap (i, j), read only where it exists. */\n"
      "    const long io = ((n * {7} + y0) * {8} + x0) * {6};\n"
      "    int ry[4], rx[4], inside = 1;\n"
      "    for (int i = 0; i < 4; ++i) {{\n"
      "      ry[i] = y0 + i >= 0 && y0 + i < {7};\n"
      "      rx[i] = x0 + i >= 0 && x0 + i < {8};\n"
      "      inside &= ry[i] & rx[i];\n"
      "    }}\n",
      fn, B, TH, TW, sh.pad, VPLANE, C, sh.H, sh.W, TH * TW);
  auto channels = [&](bool guarded) {
    std::string b;
    if (Cfull > 0)
      b += fmt::format("      for (long c = 0; c < {}; c += {}) {{\n", Cfull, L) +
           input_body(e, sh, L, guarded, "        ") + "      }\n";
    if (Ctail > 0)
      b += fmt::format("      {{\n        const long c = {};\n", Cfull) +
           input_body(e, sh, Ctail, guarded, "        ") + "      }\n";
    return b;
  };
  o += "    if (inside) {\n" + channels(false) + "    } else {\n" + channels(true) + "    }\n";
  o += "  }\n}\n#undef VPLANE\n\n";

  // The output transform: A^T m A per tile, the epilogue, the outputs that exist.
  const int64_t Kfull = K / L * L, Ktail = K - Kfull;
  const std::string ep_params = has_bias(ep) ? "const float *restrict bias, const float *restrict residual, " : "";
  o += fmt::format(
      "#define MPLANE {1}\n"
      "static void {0}_wino_out(const float *restrict m, {2}float *restrict output, long t0)\n{{\n",
      fn, MPLANE, ep_params);
  if (!has_residual(ep) && has_bias(ep)) o += "  (void)residual;\n";
  if (ep == Epilogue::bias_relu || ep == Epilogue::bias_relu6)
    o += fmt::format("  const {} ct_zero = {};\n", isa.vector_type, isa.zero);
  if (ep == Epilogue::bias_relu6)
    o += fmt::format("  const {} ct_six = {};\n", isa.vector_type, Isa::expand(isa.broadcast, {{"val", "6.0f"}}));
  o += fmt::format(
      "  for (long t = 0; t < {0}; ++t) {{\n"
      "    const long n = (t0 + t) / {6}, ty = (t0 + t) / {2} % {1}, tx = (t0 + t) % {2};\n"
      "    const long mo = t * {3};\n"
      "    const long oo = ((n * {4} + 2 * ty) * {5} + 2 * tx) * {3};\n"
      "    const int oky = 2 * ty + 1 < {4}, okx = 2 * tx + 1 < {5};\n",
      B, TH, TW, K, sh.Ho(), sh.Wo(), TH * TW);
  if (Kfull > 0)
    o += fmt::format("    for (long k = 0; k < {}; k += {}) {{\n", Kfull, L) +
         output_body(e, sh, ep, L, "      ") + "    }\n";
  if (Ktail > 0)
    o += fmt::format("    {{\n      const long k = {};\n", Kfull) + output_body(e, sh, ep, Ktail, "      ") +
         "    }\n";
  o += "  }\n}\n#undef MPLANE\n\n";

  // The entry point: the scratch follows the transformed weights in the
  // packed buffer. Wino(2,b): block by block, so a block's scratch stays in cache.
  o += fmt::format(
      "void {0}({1})\n{{\n"
      "  float *v = (float *)(weights + {2});  /* scratch: [16][{9}][C] */\n"
      "  float *m = v + {3};                     /* scratch: [16][{9}][K] */\n"
      "  for (long t0 = 0; t0 < {10}; t0 += {9}) {{\n"
      "    {0}_wino_in(input, v, t0);\n"
      "    for (long p = 0; p < 16; ++p) {4}(v + p * {5}, weights + p * {6}, m + p * {7});\n"
      "    {0}_wino_out(m, {8}output, t0);\n"
      "  }}\n"
      "}}\n",
      fn, params, U, 16 * VPLANE, gemm, VPLANE, Kp * C, MPLANE, has_bias(ep) ? "bias, residual, " : "", B, T);
  return o;
}

}  // namespace convtune
