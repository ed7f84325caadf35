// Wino(2): Winograd F(2x2,3x3) around the generated GEMMs (codegen/wino.h).
//   Y = A^T [ (G g G^T) .* (B^T d B) ] A   (Lavin and Gray 2016, eq. 8)
// with d an input patch (4x4 at stride 1, 5x5 at stride 2; zeros outside
// the unpadded input: padding is never read), g a 3x3 filter, Y the 2x2
// output block whose top-left output is the patch's top-left tap. The
// products of .* (16 or 25, wino_transform.h) summed over C are the GEMMs;
// the weights' transform runs once in NAME_pack, in double.
#include "convtune/codegen/wino.h"

#include <algorithm>

#include <fmt/format.h>

#include "convtune/ukernel/codegen.h"
#include "convtune/space/config.h"
#include "convtune/space/wino_transform.h"
#include "convtune/core/error.h"

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

// sum_i coef[i] * name(i) for coefficients -1, 0, 1 with at least one 1:
// the positive terms first, so it is adds and subtracts only.
template <class Name>
std::string combo(const Emit& e, const std::vector<int>& coef, Name name) {
  std::string out;
  for (size_t i = 0; i < coef.size(); ++i)
    if (coef[i] == 1) out = out.empty() ? name(i) : e.add(out, name(i));
  if (out.empty()) throw Error("Winograd transform: a row without a +1 (wino_transform.cpp)");
  for (size_t i = 0; i < coef.size(); ++i)
    if (coef[i] == -1) out = e.sub(out, name(i));
  return out;
}

// B^T d B of one vector of channels at c, n lanes: patch^2 loads (each
// guarded when `guarded`: the patch runs over the input's edge), the sums,
// and the stores into the points^2 planes of v.
std::string input_body(const Emit& e, const Shape& sh, const WinoTransform& tf, int64_t n, bool guarded,
                       const std::string& ind) {
  std::string o;
  for (int i = 0; i < tf.patch; ++i)
    for (int j = 0; j < tf.patch; ++j) {
      const std::string ld = e.load(fmt::format("input + io + {} + c", (i * sh.W + j) * sh.C), n);
      o += ind + fmt::format("const {} d{}{} = {};\n", e.vt(), i, j,
                             guarded ? fmt::format("ry[{}] && rx[{}] ? {} : {}", i, j, ld, e.isa.zero) : ld);
    }
  // Rows: t = B^T d.
  for (int a = 0; a < tf.points; ++a)
    for (int j = 0; j < tf.patch; ++j)
      o += ind + fmt::format("const {} t{}{} = {};\n", e.vt(), a, j,
                             combo(e, tf.BT[a], [&](size_t i) { return fmt::format("d{}{}", i, j); }));
  // Columns: t B, stored to point (a, b) = plane points * a + b.
  for (int a = 0; a < tf.points; ++a)
    for (int b = 0; b < tf.points; ++b)
      o += ind +
           e.store(fmt::format("v + {} * VPLANE + vo + c", tf.points * a + b),
                   combo(e, tf.BT[b], [&](size_t j) { return fmt::format("t{}{}", a, j); }), n) +
           ";\n";
  return o;
}

// A^T m A of one vector of output channels at k, n lanes, the epilogue, and
// the stores of the block's outputs that exist (an odd Ho or Wo ends in half a block).
std::string output_body(const Emit& e, const Shape& sh, const WinoTransform& tf, Epilogue ep, int64_t n,
                        const std::string& ind) {
  std::string o;
  for (int a = 0; a < tf.points; ++a)
    for (int b = 0; b < tf.points; ++b)
      o += ind + fmt::format("const {} m{}{} = {};\n", e.vt(), a, b,
                             e.load(fmt::format("m + {} * MPLANE + mo + k", tf.points * a + b), n));
  // Rows: s = A^T m.
  for (int i = 0; i < 2; ++i)
    for (int b = 0; b < tf.points; ++b)
      o += ind + fmt::format("const {} s{}{} = {};\n", e.vt(), i, b,
                             combo(e, tf.AT[i], [&](size_t a) { return fmt::format("m{}{}", a, b); }));
  const std::string at[2][2] = {{"0", fmt::format("{}", sh.K)},
                                {fmt::format("{}", sh.Wo() * sh.K), fmt::format("{}", sh.Wo() * sh.K + sh.K)}};
  // Columns: y = s A.
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      o += ind + fmt::format("{} y{}{} = {};\n", e.vt(), i, j,
                             combo(e, tf.AT[j], [&](size_t b) { return fmt::format("s{}{}", i, b); }));
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

int64_t wino_weight_floats(const Shape& sh, int64_t lanes) { return wino_points(sh) * sh.padded_K(lanes) * sh.C; }

int64_t wino_packed_floats(const Shape& sh, int64_t lanes, int64_t block, int64_t threads) {
  return wino_weight_floats(sh, lanes) + std::max<int64_t>(1, threads) * wino_points(sh) * wino_view(sh, block).H * (sh.C + sh.K);
}

std::string emit_wino(const Isa& isa, const Shape& sh, int64_t block, int64_t threads, int64_t kb, int64_t cu,
                      Epilogue ep, const std::string& fn, const std::string& params, const std::string& gemm) {
  const Emit e{isa};
  const int64_t L = isa.lanes, Kp = sh.padded_K(L), C = sh.C, K = sh.K;
  const int64_t TH = (sh.Ho() + 1) / 2, TW = (sh.Wo() + 1) / 2, T = sh.N * TH * TW;
  const int64_t B = wino_view(sh, block).H;  // tiles per block: the GEMMs' column
  // A short last block (B does not divide T): its GEMMs run all B rows, on
  // whatever the scratch holds past the last tile, and those rows are dropped.
  const std::string past_last = T % B ? fmt::format("    if (t0 + t >= {}) break;  /* the short last block */\n", T) : "";
  const int64_t U = wino_weight_floats(sh, L), VPLANE = B * C, MPLANE = B * K;
  std::string o;

  // The weights: u = G g G^T, with G the transform's table, in double.
  const WinoTransform& tf = wino_transform(sh);
  const int64_t PT = tf.points, NP = PT * PT;
  std::string gtab;
  for (int a = 0; a < PT; ++a)
    gtab += fmt::format("{}{{{}, {}, {}}}", a ? ", " : "", tf.G[a][0], tf.G[a][1], tf.G[a][2]);
  o += fmt::format(
      "void {0}_pack(const float *restrict kcrs, float *restrict packed)\n{{\n"
      "  static const double G[{11}][3] = {{{12}}};  /* {13} */\n"
      "  for (long k = 0; k < {1}; ++k)\n"
      "    for (long c = 0; c < {2}; ++c) {{\n"
      "      double g[3][3] = {{{{0}}}}, t[{11}][3], u[{11}][{11}];\n"
      "      if (k < {3})\n"
      "        for (int r = 0; r < 3; ++r)\n"
      "          for (int s = 0; s < 3; ++s) g[r][s] = kcrs[((k * {2} + c) * 3 + r) * 3 + s];\n"
      "      for (int a = 0; a < {11}; ++a)\n"
      "        for (int s = 0; s < 3; ++s) t[a][s] = G[a][0] * g[0][s] + G[a][1] * g[1][s] + G[a][2] * g[2][s];\n"
      "      for (int a = 0; a < {11}; ++a)\n"
      "        for (int b = 0; b < {11}; ++b) u[a][b] = G[b][0] * t[a][0] + G[b][1] * t[a][1] + G[b][2] * t[a][2];\n"
      "      for (int p = 0; p < {14}; ++p)\n"
      "        packed[p * {4} + (k / {5}) * {6} + (c / {7}) * {8} + (c % {7}) * {5} + k % {5}] = (float)u[p / {11}][p % {11}];\n"
      "    }}\n"
      "  for (long i = {9}; i < {10}; ++i) packed[i] = 0.0f;  /* the scratch: defined before the first call */\n"
      "}}\n\n",
      fn, Kp, C, K, Kp * C, kb, kb * C, cu, cu * kb, U, wino_packed_floats(sh, L, block, threads), PT, gtab, tf.name,
      NP);

  // The input transform: the block's tiles from t0, each patch B^T d B, into v's points^2 planes [B][C].
  const int64_t Cfull = C / L * L, Ctail = C - Cfull;
  o += fmt::format(
      "#define VPLANE {5}\n"
      "static void {0}_wino_in(const float *restrict input, float *restrict v, long t0)\n{{\n"
      "  for (long t = 0; t < {1}; ++t) {{\n"
      "{12}"
      "    const long n = (t0 + t) / {9}, ty = (t0 + t) / {3} % {2}, tx = (t0 + t) % {3};\n"
      "    const long y0 = {10} * ty - {4}, x0 = {10} * tx - {4};\n"
      "    const long vo = t * {6};\n"
      "    /* The patch's first tap: io + (i * W + j) * C is tap (i, j), read only where it exists. */\n"
      "    const long io = ((n * {7} + y0) * {8} + x0) * {6};\n"
      "    int ry[{11}], rx[{11}], inside = 1;\n"
      "    for (int i = 0; i < {11}; ++i) {{\n"
      "      ry[i] = y0 + i >= 0 && y0 + i < {7};\n"
      "      rx[i] = x0 + i >= 0 && x0 + i < {8};\n"
      "      inside &= ry[i] & rx[i];\n"
      "    }}\n",
      fn, B, TH, TW, sh.pad(), VPLANE, C, sh.H, sh.W, TH * TW, 2 * sh.stride(), tf.patch, past_last);
  auto channels = [&](bool guarded) {
    std::string b;
    if (Cfull > 0)
      b += fmt::format("      for (long c = 0; c < {}; c += {}) {{\n", Cfull, L) +
           input_body(e, sh, tf, L, guarded, "        ") + "      }\n";
    if (Ctail > 0)
      b += fmt::format("      {{\n        const long c = {};\n", Cfull) +
           input_body(e, sh, tf, Ctail, guarded, "        ") + "      }\n";
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
      "{7}"
      "    const long n = (t0 + t) / {6}, ty = (t0 + t) / {2} % {1}, tx = (t0 + t) % {2};\n"
      "    const long mo = t * {3};\n"
      "    const long oo = ((n * {4} + 2 * ty) * {5} + 2 * tx) * {3};\n"
      "    const int oky = 2 * ty + 1 < {4}, okx = 2 * tx + 1 < {5};\n",
      B, TH, TW, K, sh.Ho(), sh.Wo(), TH * TW, past_last);
  if (Kfull > 0)
    o += fmt::format("    for (long k = 0; k < {}; k += {}) {{\n", Kfull, L) +
         output_body(e, sh, tf, ep, L, "      ") + "    }\n";
  if (Ktail > 0)
    o += fmt::format("    {{\n      const long k = {};\n", Kfull) + output_body(e, sh, tf, ep, Ktail, "      ") +
         "    }\n";
  o += "  }\n}\n#undef MPLANE\n\n";

  // The entry point: the scratch follows the transformed weights in the
  // packed buffer. Wino(2,b): block by block, so a block's scratch stays in cache.
  auto block_steps = [&](const std::string& ind) {  // the three steps of the block at t0
    return fmt::format(
        "{0}{1}_wino_in(input, v, t0);\n"
        "{0}for (long p = 0; p < {2}; ++p) {3}(v + p * {4}, weights + p * {5}, m + p * {6});\n"
        "{0}{1}_wino_out(m, {7}output, t0);\n",
        ind, fn, NP, gemm, VPLANE, Kp * C, MPLANE, has_bias(ep) ? "bias, residual, " : "");
  };
  if (threads <= 1)
    return o + fmt::format(
                   "void {0}({1})\n{{\n"
                   "  float *v = (float *)(weights + {2});  /* scratch: [{4}][{5}][C] */\n"
                   "  float *m = v + {3};                     /* scratch: [{4}][{5}][K] */\n"
                   "  for (long t0 = 0; t0 < {6}; t0 += {5}) {{\n"
                   "{7}"
                   "  }}\n"
                   "}}\n",
                   fn, params, U, NP * VPLANE, NP, B, T, block_steps("    "));
  // Wino(2,b,t): thread q runs blocks [q*nb/t, (q+1)*nb/t) with scratch q, so
  // the threads share nothing they write; one iteration per thread keeps the
  // split static without omp.h (without -fopenmp the loop runs them in turn).
  const int64_t nb = wino_blocks(sh, block), per = NP * (VPLANE + MPLANE);
  o += fmt::format(
      "void {0}({1})\n{{\n"
      "#pragma omp parallel for schedule(static, 1) num_threads({7})\n"
      "  for (long q = 0; q < {7}; ++q) {{\n"
      "    float *v = (float *)(weights + {2}) + q * {8};  /* thread q's scratch: [{4}][{5}][C] */\n"
      "    float *m = v + {3};                                /* and [{4}][{5}][K] */\n"
      "    for (long t0 = q * {6} / {7} * {5}; t0 < (q + 1) * {6} / {7} * {5}; t0 += {5}) {{\n"
      "{9}"
      "    }}\n"
      "  }}\n"
      "}}\n",
      fn, params, U, NP * VPLANE, NP, B, nb, threads, per, block_steps("      "));
  return o;
}

}  // namespace convtune
