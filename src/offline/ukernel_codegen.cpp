// One generator for every ISA: intrinsic spellings come from Isa (000 §3.4:
// unroll by duplicating the body with updated indices; V(k) vectorises the
// weight and output accesses, and the input, which does not depend on k, is
// broadcast).
#include "convtune/offline/ukernel_codegen.h"

#include <fmt/format.h>

#include "reference.h"

namespace convtune {

UkLayout profile_layout(const UkSizes& u, int lanes, int64_t nc) {
  UkLayout l;
  const int64_t C = nc * u.c, K = int64_t(u.k) * lanes;
  const int64_t in_w = u.w + u.s - 1;
  l.in_pix = C;
  l.in_row = in_w * C;
  l.stride = 1;
  l.w_c = K;
  l.w_s = C * K;
  l.w_r = u.s * C * K;
  l.out_pix = K;
  l.out_row = u.w * K;
  return l;
}

std::string emit_ukernel(const Isa& isa, const UkSizes& u, const UkLayout& l,
                         const std::string& name) {
  const int V = isa.lanes;
  auto acc = [](int h, int w, int k) { return fmt::format("acc_h{}_w{}_k{}", h, w, k); };
  auto optr = [&](int h, int w, int k) {
    return fmt::format("O + {}", h * l.out_row + w * l.out_pix + int64_t(k) * V);
  };
  std::string o;
  o += fmt::format(
      "/* {}: sizes k={} c={} w={} h={} r={} s={}; contract: microkernels/CONTRACT.md\n"
      "   layout IROW={} IPIX={} ST={} WR={} WS={} WC={} OROW={} OPIX={} */\n",
      name, u.k, u.c, u.w, u.h, u.r, u.s, l.in_row, l.in_pix, l.stride, l.w_r, l.w_s, l.w_c,
      l.out_row, l.out_pix);
  o += fmt::format(
      "static inline void {}(const float *restrict I, const float *restrict W,\n"
      "    float *restrict O, long nc, int accumulate)\n{{\n",
      name);
  for (int h = 0; h < u.h; ++h)
    for (int w = 0; w < u.w; ++w) {
      o += "  " + isa.vector_type + " ";
      for (int k = 0; k < u.k; ++k) o += (k ? ", " : "") + acc(h, w, k);
      o += ";\n";
    }
  o += "  if (accumulate) {\n";
  for (int h = 0; h < u.h; ++h)
    for (int w = 0; w < u.w; ++w)
      for (int k = 0; k < u.k; ++k)
        o += fmt::format("    {} = {};\n", acc(h, w, k),
                         Isa::expand(isa.load, {{"ptr", optr(h, w, k)}}));
  o += "  } else {\n";
  for (int h = 0; h < u.h; ++h)
    for (int w = 0; w < u.w; ++w)
      for (int k = 0; k < u.k; ++k) o += fmt::format("    {} = {};\n", acc(h, w, k), isa.zero);
  o += "  }\n";
  o += fmt::format("  for (long it = 0; it < nc; ++it, I += {}, W += {}) {{\n", u.c,
                   int64_t(u.c) * l.w_c);
  for (int cu = 0; cu < u.c; ++cu)
    for (int r = 0; r < u.r; ++r)
      for (int s = 0; s < u.s; ++s) {
        o += fmt::format("    {{ /* c+{} r={} s={} */\n", cu, r, s);
        for (int k = 0; k < u.k; ++k) {
          int64_t off = r * l.w_r + s * l.w_s + cu * l.w_c + int64_t(k) * V;
          o += fmt::format("    const {} w_k{} = {};\n", isa.vector_type, k,
                           Isa::expand(isa.load, {{"ptr", fmt::format("W + {}", off)}}));
        }
        for (int h = 0; h < u.h; ++h)
          for (int w = 0; w < u.w; ++w) {
            int64_t off = (h * l.stride + r) * l.in_row + (w * l.stride + s) * l.in_pix + cu;
            o += "    {\n";
            o += fmt::format("      const {} x = {};\n", isa.vector_type,
                             Isa::expand(isa.broadcast, {{"val", fmt::format("I[{}]", off)}}));
            for (int k = 0; k < u.k; ++k)
              o += fmt::format(
                  "      {} = {};\n", acc(h, w, k),
                  Isa::expand(isa.fma, {{"a", "x"}, {"b", fmt::format("w_k{}", k)},
                                        {"acc", acc(h, w, k)}}));
            o += "    }\n";
          }
        o += "    }\n";
      }
  o += "  }\n";
  for (int h = 0; h < u.h; ++h)
    for (int w = 0; w < u.w; ++w)
      for (int k = 0; k < u.k; ++k)
        o += fmt::format("  {};\n", Isa::expand(isa.store, {{"ptr", optr(h, w, k)},
                                                            {"val", acc(h, w, k)}}));
  o += "}\n";
  return o;
}

void reference_ukernel(const UkSizes& u, const UkLayout& l, int lanes, const float* I,
                       const float* W, float* O, int64_t nc, bool accumulate) {
  // The driver's reference (microkernels/reference.c), so tests and profile judge alike.
  const long d[CT_NPARAM] = {u.k,      u.c,      u.w,      u.h,     u.r,       u.s,       long(l.in_row),
                             long(l.in_pix), long(l.stride), long(l.w_r), long(l.w_s), long(l.w_c), long(l.out_row),
                             long(l.out_pix)};
  ct_ref_ukernel(d, lanes, I, W, O, long(nc), accumulate ? 1 : 0);
}

}  // namespace convtune
