// One generator for every ISA: intrinsic spellings come from Isa (000 §3.4:
// unroll by duplicating the body with updated indices; V(k) vectorises the
// weight and output accesses, and the input, which does not depend on k, is
// broadcast). A depthwise microkernel (UkSizes::dw) is the same code with the
// input vectorised too: its k is the input's channel.
#include "convtune/ukernel/codegen.h"

#include <algorithm>

#include <fmt/format.h>

#include "reference.h"

namespace convtune {

UkLayout profile_layout(const UkSizes& u, int lanes, int64_t nc) {
  UkLayout l;
  if (u.dw) {  // C = K' channels, each c step the next set of taps' weights [r][s][K'] over the same input
    const int64_t K = int64_t(u.k) * lanes;
    l.in_pix = K;
    l.in_row = (u.w + u.s - 1) * K;
    l.w_c = K;
    l.w_s = K;
    l.w_r = u.s * K;
    l.w_it = u.r * l.w_r;
    l.out_pix = K;
    l.out_row = u.w * K;
    return l;
  }
  const int64_t C = nc * u.c, K = int64_t(u.k) * lanes;
  const int64_t in_w = u.w + u.s - 1;
  l.in_pix = C;
  l.in_row = in_w * C;
  l.stride = 1;
  // Packed as a convolution packs them: [c iteration][r][s][c in block][k].
  l.w_c = K;
  l.w_s = u.c * K;
  l.w_r = u.s * l.w_s;
  l.w_it = u.r * l.w_r;
  l.out_pix = K;
  l.out_row = u.w * K;
  return l;
}

std::string generated_prelude(const Isa& isa) {
  return fmt::format("#include <{}>\n", isa.header) + isa.prelude + "\n";
}

std::string load_lanes(const Isa& isa, const std::string& ptr, int64_t n) {
  return n == isa.lanes ? Isa::expand(isa.load, {{"ptr", ptr}})
                        : Isa::expand(isa.load_masked, {{"ptr", ptr}, {"n", std::to_string(n)}});
}

std::string store_lanes(const Isa& isa, const std::string& ptr, const std::string& val, int64_t n) {
  return n == isa.lanes ? Isa::expand(isa.store, {{"ptr", ptr}, {"val", val}})
                        : Isa::expand(isa.store_masked, {{"ptr", ptr}, {"val", val}, {"n", std::to_string(n)}});
}

std::string profile_fn_table(const std::vector<std::string>& names) {
  std::string o = "typedef void (*ct_ukernel_fn)(const float *, long, const float *, float *, long, int);\n";
  o += "const ct_ukernel_fn ct_profile_fns[] = {\n";
  for (const auto& n : names) o += "  " + n + ",\n";
  return o + "};\n";
}

namespace {

// GCC's and Clang's barrier for any target: values in memory may have
// changed, so nothing loaded before it is reused after it. Accumulators live
// in registers (their address is never taken) and stay there.
constexpr const char* kCompilerFence = "__asm__ __volatile__(\"\" ::: \"memory\");";

// GCC's and Clang's way to hide a value's origin: after it, wq (W's value
// in fact) is a pointer the compiler knows nothing about, so a load through
// it is not merged with one before it; volatile, so two are never merged
// into one. No instruction is emitted, and wq keeps its register.
constexpr const char* kLaunder = "__asm__ __volatile__(\"\" : \"+r\"(wq));";

// The epilogue on the accumulators, before the store, when the call completes
// its blocks' reduction (`last`): B holds the block's biases, Q the residual
// in the output's layout. The ISA's add/max/min templates; the K tail's
// partial vector loads with load_masked (masked lanes read 0, never stored).
std::string emit_epilogue(const Isa& isa, const UkSizes& u, const UkLayout& l, Epilogue e, int k_lanes) {
  const int V = isa.lanes;
  auto load = [&](const std::string& ptr, int k) {
    return load_lanes(isa, ptr, std::min(V, k_lanes - k * V));
  };
  auto op = [](const std::string& tmpl, const std::string& a, const std::string& b) {
    return Isa::expand(tmpl, {{"a", a}, {"b", b}});
  };
  std::string o = fmt::format("  if (last) {{  /* epilogue {} (CONTRACT.md \"Epilogues\") */\n", to_string(e));
  if (e == Epilogue::bias_relu || e == Epilogue::bias_relu6)
    o += fmt::format("    const {} ct_zero = {};\n", isa.vector_type, isa.zero);
  if (e == Epilogue::bias_relu6)
    o += fmt::format("    const {} ct_six = {};\n", isa.vector_type, Isa::expand(isa.broadcast, {{"val", "6.0f"}}));
  for (int k = 0; k < u.k && k * V < k_lanes; ++k)
    o += fmt::format("    const {} b_k{} = {};\n", isa.vector_type, k, load(fmt::format("B + {}", k * V), k));
  for (int h = 0; h < u.h; ++h)
    for (int w = 0; w < u.w; ++w)
      for (int k = 0; k < u.k && k * V < k_lanes; ++k) {
        const std::string a = fmt::format("acc_h{}_w{}_k{}", h, w, k);
        o += fmt::format("    {0} = {1};\n", a, op(isa.add, a, fmt::format("b_k{}", k)));
        if (e == Epilogue::bias_add)
          o += fmt::format("    {0} = {1};\n", a,
                           op(isa.add, a, load(fmt::format("Q + {}", h * l.out_row + w * l.out_pix + int64_t(k) * V), k)));
        if (e == Epilogue::bias_relu || e == Epilogue::bias_relu6) o += fmt::format("    {0} = {1};\n", a, op(isa.max, a, "ct_zero"));
        if (e == Epilogue::bias_relu6) o += fmt::format("    {0} = {1};\n", a, op(isa.min, a, "ct_six"));
      }
  o += "  }\n";
  if (e != Epilogue::bias_add) o += "  (void)Q;  /* no residual */\n";
  return o;
}

}  // namespace

std::string emit_ukernel(const Isa& isa, const UkSizes& u, const UkLayout& l,
                         const std::string& name, const UkVariant& v) {
  const int V = isa.lanes;
  const int k_lanes = v.k_lanes ? v.k_lanes : u.k * V;
  // Lanes of k-vector k that exist: V, a tail 0 < n < V, or none.
  auto lanes_of = [&](int k) { return std::max(0, std::min(V, k_lanes - k * V)); };
  auto row_ok = [&](int h, int r) { return v.rows.empty() || (r >= v.rows[h].first && r < v.rows[h].second); };
  auto col_ok = [&](int w, int s) { return v.cols.empty() || (s >= v.cols[w].first && s < v.cols[w].second); };
  auto acc = [](int h, int w, int k) { return fmt::format("acc_h{}_w{}_k{}", h, w, k); };
  auto optr = [&](int h, int w, int k) {
    return fmt::format("O + {}", h * l.out_row + w * l.out_pix + int64_t(k) * V);
  };
  auto load_out = [&](int h, int w, int k) {
    return load_lanes(isa, optr(h, w, k), lanes_of(k));
  };
  auto store_out = [&](int h, int w, int k) {
    return store_lanes(isa, optr(h, w, k), acc(h, w, k), lanes_of(k));
  };
  // Nt(o): the store of vector (h, w, k) when the block is streamed; a
  // vector at an offset that is not a multiple of the alignment, or in the
  // K tail, stores as ever.
  auto stream_out = [&](int h, int w, int k) {
    const int64_t off = h * l.out_row + w * l.out_pix + int64_t(k) * V;
    return lanes_of(k) == V && (off * 4) % isa.stream_align == 0
               ? Isa::expand(isa.store_stream, {{"ptr", optr(h, w, k)}, {"val", acc(h, w, k)}})
               : store_out(h, w, k);
  };
  std::string o;
  o += fmt::format(
      "/* {}: {}sizes k={} c={} w={} h={} r={} s={}; contract: microkernels/CONTRACT.md\n"
      "   layout IROW={} IPIX={} ST={} WR={} WS={} WC={} WIT={} OROW={} OPIX={}{} */\n",
      name, u.dw ? "depthwise, " : "", u.k, u.c, u.w, u.h, u.r, u.s, l.in_row, l.in_pix, l.stride, l.w_r, l.w_s, l.w_c, l.w_it,
      l.out_row, l.out_pix,
      l.stride_w == l.stride && l.dil_h == 1 && l.dil_w == 1
          ? std::string()
          : fmt::format(" STW={} DH={} DW={}", l.stride_w, l.dil_h, l.dil_w));
  if (!v.full()) {
    std::string rows, cols, in_rows;
    for (auto [a, b] : v.rows) rows += fmt::format(" [{},{})", a, b);
    for (auto [a, b] : v.cols) cols += fmt::format(" [{},{})", a, b);
    for (int64_t d : v.in_rows) in_rows += fmt::format(" {}", d);
    o += fmt::format("/* border/tail variant: r per h:{}; s per w:{}; k lanes {}{}{} */\n",
                     rows.empty() ? " all" : rows, cols.empty() ? " all" : cols, k_lanes,
                     v.epilogue == Epilogue::none ? "" : "; epilogue " + to_string(v.epilogue) + " when last",
                     in_rows.empty() ? "" : "; input rows at io +" + in_rows);
  }
  if (v.prefetch > 0)
    o += fmt::format("/* Pf(w): c steps it < pn prefetch {} cache line(s) each from P on (CONTRACT.md \"Prefetch\") */\n",
                     v.prefetch);
  if (v.prefetch_out)
    o += "/* Pf(o): prefetch the output block's lines output_ahead_fmas multiply-adds before the last c step (CONTRACT.md "
         "\"Prefetch\") */\n";
  if (v.stream_out)
    o += "/* Nt(o): when last is set and O is aligned, non-temporal stores (CONTRACT.md \"Non-temporal stores\") */\n";
  if (v.lane_cg > 0)
    o += fmt::format("/* Lanes(g): groups of {0} lanes, c step it reads input it of each group (CONTRACT.md \"Lanes(g)\") */\n",
                     v.lane_cg);
  if (v.fence != TapFence::none)
    o += fmt::format("/* a compiler fence before every {} (configuration {}; ukernel.h TapFence) */\n",
                     v.fence == TapFence::r ? "filter row" : "tap", fence_text(v.fence));
  const bool epilogue = v.epilogue != Epilogue::none;
  o += fmt::format(
      "static inline void {}(const float *restrict I, long io, const float *restrict W,\n"
      "    float *restrict O, long nc, int accumulate{}{})\n{{\n",
      name,
      epilogue     ? ", int last, const float *restrict B, const float *restrict Q"
      : v.stream_out ? ", int last"
                     : "",
      v.prefetch > 0 ? ", const float *restrict P, long pn" : "");
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
        if (lanes_of(k) > 0) o += fmt::format("    {} = {};\n", acc(h, w, k), load_out(h, w, k));
        else o += fmt::format("    {} = {};\n", acc(h, w, k), isa.zero);
  o += "  } else {\n";
  for (int h = 0; h < u.h; ++h)
    for (int w = 0; w < u.w; ++w)
      for (int k = 0; k < u.k; ++k) o += fmt::format("    {} = {};\n", acc(h, w, k), isa.zero);
  o += "  }\n";
  // Weight vectors kept in registers across a tap's outputs: what the w*h*k
  // accumulators and the broadcast leave of the register file. The rest are
  // re-read at each use, through a pointer the compiler cannot prove equal
  // to W, so it folds each read into its FMA instead of keeping the vector
  // live and spilling an accumulator (CONTRACT.md "How it is built"). The
  // broadcast always takes a register here, as the code below emits it, even
  // where the taps rule counts none (AVX-512's broadcast_registers 0).
  const int kept = std::clamp(isa.vector_registers - u.w * u.h * u.k - 1, 0, u.k);
  std::string loop;
  int64_t fmas = 0;  // multiply-adds one c step emits (Pf(o)'s distance in steps)
  int row_cu = -1, row_r = -1;  // the (c, r) row of the last tap emitted
  for (int cu = 0; cu < u.c; ++cu)
    for (int r = 0; r < u.r; ++r)
      for (int s = 0; s < u.s; ++s) {
        bool any = false;  // a tap no output of the block reads is skipped whole
        for (int h = 0; h < u.h; ++h)
          for (int w = 0; w < u.w; ++w) any = any || (row_ok(h, r) && col_ok(w, s));
        if (!any) continue;
        // A fence (ukernel.h TapFence) before a new row or tap; the body's first tap needs none.
        const bool new_row = cu != row_cu || r != row_r;
        if (!loop.empty() && (v.fence == TapFence::s || (v.fence == TapFence::r && new_row)))
          loop += "    " + std::string(kCompilerFence) + "\n";
        row_cu = cu;
        row_r = r;
        loop += fmt::format("    {{ /* c+{} r={} s={} */\n", cu, r, s);
        auto w_off = [&](int k) { return r * l.w_r + s * l.w_s + cu * l.w_c + int64_t(k) * V; };
        for (int k = 0; k < kept; ++k)
          if (lanes_of(k) > 0)
            loop += fmt::format("    const {} w_k{} = {};\n", isa.vector_type, k,
                                Isa::expand(isa.load, {{"ptr", fmt::format("W + {}", w_off(k))}}));
        for (int h = 0; h < u.h; ++h)
          for (int w = 0; w < u.w; ++w) {
            if (!row_ok(h, r) || !col_ok(w, s)) continue;
            const int64_t row = v.in_rows.empty() ? h * l.stride * l.in_row : v.in_rows[size_t(h)];
            const int64_t off = row + r * l.dil_h * l.in_row + (w * l.stride_w + s * l.dil_w) * l.in_pix + cu;
            loop += "    {\n";
            if (!u.dw)
              loop += fmt::format("      const {} x = {};\n", isa.vector_type,
                                  Isa::expand(isa.broadcast, {{"val", fmt::format("I[io + {}]", off)}}));
            if (kept < u.k) loop += fmt::format("      {}\n", kLaunder);
            for (int k = 0; k < u.k; ++k)
              if (lanes_of(k) > 0) {
                ++fmas;
                const std::string b = k < kept ? fmt::format("w_k{}", k)
                                               : Isa::expand(isa.load, {{"ptr", fmt::format("wq + {}", w_off(k))}});
                // Depthwise: the input vector at the same channels as the
                // output vector k, masked in the C tail like the store.
                std::string a =
                    u.dw ? load_lanes(isa, fmt::format("I + io + {}", off + int64_t(k) * V), lanes_of(k)) : "x";
                if (v.lane_cg > 0) a = Isa::expand(isa.lane_permute, {{"idx", "ct_li"}, {"val", a}});
                loop += fmt::format("      {} = {};\n", acc(h, w, k),
                                    Isa::expand(isa.fma, {{"a", a}, {"b", b}, {"acc", acc(h, w, k)}}));
              }
            loop += "    }\n";
          }
        loop += "    }\n";
      }
  if (!loop.empty()) {
    if (v.prefetch_out) {
      const int64_t ahead = (isa.output_ahead_fmas + fmas - 1) / fmas;  // c steps
      o += fmt::format("  const long po = nc > {0} ? nc - {0} : 0;  /* Pf(o): the c step that prefetches */\n", ahead);
    }
    // A depthwise c step reads the same input block (its channels are the outputs').
    if (v.lane_cg > 0) {  // lane l of group l / Cg reads that group's input it
      o += fmt::format("  static const int ct_lb[{}] = {{", V);
      for (int lane = 0; lane < V; ++lane) o += fmt::format("{}{}", lane ? ", " : "", (lane / v.lane_cg) * v.lane_cg);
      o += "};\n";
    }
    o += u.dw ? fmt::format("  for (long it = 0; it < nc; ++it, W += {}) {{\n", l.w_it)
              : fmt::format("  for (long it = 0; it < nc; ++it, io += {}, W += {}) {{\n", u.c, l.w_it);
    if (v.lane_cg > 0)
      o += fmt::format("    const {} ct_li = {};\n", isa.index_type,
                       Isa::expand(isa.lane_index, {{"ptr", "ct_lb"}, {"add", "it"}}));
    if (v.prefetch > 0) {
      o += "    if (it < pn) {\n";
      for (int j = 0; j < v.prefetch; ++j)
        o += "      " + Isa::expand(isa.prefetch, {{"ptr", fmt::format("P + it * {} + {}", int64_t(v.prefetch) * isa.line_floats,
                                                                      int64_t(j) * isa.line_floats)}}) + ";\n";
      o += "    }\n";
    }
    if (v.prefetch_out) {
      // Lines from each output pixel's first channel on: with K a multiple of
      // line_floats (and the 64-byte aligned buffers of bench and tune) they
      // are the block's lines exactly; otherwise a tail line may be missed,
      // which only costs the hint.
      o += "    if (it == po) {\n";
      const int64_t lf = isa.line_floats, n = k_lanes;
      for (int h = 0; h < u.h; ++h)
        for (int w = 0; w < u.w; ++w)
          for (int64_t f = 0; f < n; f += lf)
            o += "      " +
                 Isa::expand(isa.prefetch_out, {{"ptr", fmt::format("O + {}", h * l.out_row + w * l.out_pix + f)}}) +
                 ";\n";
      o += "    }\n";
    }
    if (kept < u.k) o += "    const float *wq = W;  /* re-read weight vectors: see kLaunder */\n";
    o += loop + "  }\n";
  } else {
    o += "  (void)I; (void)io; (void)W; (void)nc;  /* every tap reads padding */\n";
    if (v.prefetch > 0) o += "  (void)P; (void)pn;\n";
  }
  if (epilogue) o += emit_epilogue(isa, u, l, v.epilogue, k_lanes);
  auto stores = [&](auto&& form, const char* indent) {
    for (int h = 0; h < u.h; ++h)
      for (int w = 0; w < u.w; ++w)
        for (int k = 0; k < u.k; ++k)
          if (lanes_of(k) > 0) o += fmt::format("{}{};\n", indent, form(h, w, k));
  };
  if (v.stream_out) {
    o += fmt::format("  if (last && ((__UINTPTR_TYPE__)O & {}) == 0) {{\n", isa.stream_align - 1);
    stores(stream_out, "    ");
    o += "  } else {\n";
    stores(store_out, "    ");
    o += "  }\n";
  } else {
    stores(store_out, "  ");
  }
  o += "}\n";
  return o;
}

void reference_ukernel(const UkSizes& u, const UkLayout& l, int lanes, const float* I,
                       const float* W, float* O, int64_t nc, bool accumulate) {
  // The driver's references (microkernels/reference.c), so tests and profile judge alike.
  const long d[CT_NPARAM] = {u.k,      u.c,      u.w,      u.h,     u.r,       u.s,       long(l.in_row),
                             long(l.in_pix), long(l.stride), long(l.w_r), long(l.w_s), long(l.w_c), long(l.w_it),
                             long(l.out_row), long(l.out_pix), long(l.stride_w), long(l.dil_h), long(l.dil_w), long(u.dw)};
  ct_ref_ukernel(d, lanes, I, W, O, long(nc), accumulate ? 1 : 0);
}

}  // namespace convtune
