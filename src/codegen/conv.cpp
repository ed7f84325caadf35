// 000 §3.4. The configuration is walked from the outermost specifier inwards;
// the sizes of every sub-configuration (what one iteration of a loop covers)
// are known first, which is what the paper's innermost-outwards pass computes.
// Lseq(h,[(a1,v1),(a2,v2)]) becomes Seq([T(a1,h), S[alpha/v1]], [T(a2,h), S[alpha/v2]]).
//
// Beyond the paper, as oneDNN's brgconv does it (../shared/notes/kernel-techniques.md):
// the input is read unpadded and a microkernel call at the border runs a
// variant whose multiply-adds on padding taps were dropped at generation time,
// chosen per call from small tables indexed by the call's input row and column;
// weights are packed once into the order the microkernel reads them; the K tail
// is stored with masks, so the output is exactly K wide.
#include "convtune/codegen/conv.h"
#include "convtune/codegen/wino.h"
#include "convtune/space/wino_transform.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/text.h"
#include "convtune/ukernel/ukernel.h"
#include "convtune/ukernel/codegen.h"

namespace convtune {

namespace {

int di(Dim d) { return static_cast<int>(d); }

// One loop's contribution to an offset along a dimension: base + v*step for
// v < count, spelled `text` in C.
struct Term {
  std::string text;
  int64_t base = 0, count = 1, step = 0;
};

struct Gen {
  const Isa& isa;
  const Shape& sh;    // the shape the loops tile: flat_view(real) under Flat(hw)
  const Shape& real;  // the convolution's shape (memory layout of the input)
  bool flat = false;  // Flat(hw) (config.h)
  const std::vector<Spec>& specs;
  size_t ublock;  // index of the first U/V specifier (the microkernel)
  UkLayout layout;
  int64_t kb = 0, cu = 0;  // the microkernel's k block (floats) and c unroll: the packing
  std::map<std::string, std::string> variants;  // variant key -> function name
  std::string ukernel_code, tables, body;
  int sites = 0;
  std::array<std::vector<Term>, kNumDims> terms;
  std::array<int, kNumDims> level{};  // loop-variable counters per dimension
  Epilogue epilogue = Epilogue::none;
  TapFence fence = TapFence::none;  // the configuration's F(r) / F(s), in every variant
  // Pf(w) (config.h): the loop whose next iteration's weights the calls
  // prefetch (-1: none); the floats from a block's first weight to the next
  // block's; cache lines each call prefetches; lines per c step; c steps that prefetch.
  int pf_loop = -1;
  int64_t pf_step = 0, pf_share = 0, pf_np = 0, pf_pn = 0;
  bool prefetch_out = false;  // Pf(o) (config.h), in every variant
  bool stream_out = false;    // Nt(o) (config.h), in every variant
  int64_t groups = 1;         // the g loops' size (config.h g): sh is then one group's problem
  // depthwise_shape (ukernel.h): depthwise microkernels, whose input offset
  // io includes the block's channel offset k (CONTRACT.md "Depthwise microkernels").
  bool dw = false;
  // Lanes(g) (config.h): the real Cg, the c steps each microkernel call runs
  // over its group's inputs (0: not Lanes(g)).
  int64_t lane_cg = 0;

  // Extent along d covered by specs[from..], with U(a,h) = alpha.
  int64_t extent(size_t from, Dim d, int64_t alpha) const {
    int64_t e = 1;
    for (size_t i = from; i < specs.size(); ++i) {
      const Spec& s = specs[i];
      if (s.dim != d && s.kind != SpecKind::Lseq) continue;
      switch (s.kind) {
        case SpecKind::T:
        case SpecKind::P: e *= s.factor; break;
        case SpecKind::U: e *= s.alpha ? alpha : s.factor; break;
        case SpecKind::V: e *= isa.lanes; break;
        case SpecKind::R: e *= r_count(i); break;
        case SpecKind::Lseq:
          if (d == Dim::h) return e * (s.seq[0].first * extent(i + 1, d, s.seq[0].second) +
                                       s.seq[1].first * extent(i + 1, d, s.seq[1].second));
          break;
      }
    }
    return e;
  }

  // The problem size along d; g is not a dimension of the group's shape sh.
  int64_t size(Dim d) const { return d == Dim::g ? groups : dim_size(sh, d, isa.lanes); }

  // R(d): the count that completes the dimension.
  int64_t r_count(size_t at) const {
    Dim d = specs[at].dim;
    int64_t others = 1;
    for (size_t i = 0; i < specs.size(); ++i) {
      if (i == at) continue;
      const Spec& s = specs[i];
      if (s.kind == SpecKind::Lseq && d == Dim::h) {
        // Lseq's own extent already includes what lies below it.
        return size(d) / (others * extent(i, d, 1));
      }
      if (s.dim != d) continue;
      if (s.kind == SpecKind::T || s.kind == SpecKind::P || (s.kind == SpecKind::U && !s.alpha)) others *= s.factor;
      if (s.kind == SpecKind::V) others *= isa.lanes;
    }
    return size(d) / others;
  }

  std::string offset(Dim d) const {
    std::string s;
    for (const auto& t : terms[di(d)])
      if (!t.text.empty()) s += (s.empty() ? "" : " + ") + t.text;
    return s.empty() ? "0" : s;
  }

  // Every value the offset along d takes at the current call site.
  std::set<int64_t> values(Dim d) const {
    std::set<int64_t> v{0};
    for (const auto& t : terms[di(d)]) {
      std::set<int64_t> next;
      for (int64_t x : v)
        for (int64_t i = 0; i < t.count; ++i) next.insert(x + t.base + i * t.step);
      v.swap(next);
    }
    return v;
  }

  std::string ind(int depth) const { return std::string(2 * depth, ' '); }

  // The variant's function, emitted once per file.
  std::string variant_fn(const UkSizes& u, const UkVariant& v) {
    std::string key = sizes_text(u);
    for (auto [a, b] : v.rows) key += fmt::format("r{}-{}", a, b);
    key += "|";
    for (auto [a, b] : v.cols) key += fmt::format("s{}-{}", a, b);
    key += fmt::format("|k{}|{}|f{}|p{}|o{}|t{}|g{}|", v.k_lanes, to_string(v.epilogue), int(v.fence), v.prefetch,
                       int(v.prefetch_out), int(v.stream_out), v.lane_cg);
    for (int64_t d : v.in_rows) key += fmt::format("i{}", d);
    auto it = variants.find(key);
    if (it != variants.end()) return it->second;
    std::string name = ukernel_name(u, isa.name);
    // Epilogue and fenced variants too: never the profiled name.
    if (!v.full() || v.fence != TapFence::none || v.prefetch > 0 || v.prefetch_out || v.stream_out || v.lane_cg > 0)
      name += fmt::format("_v{}", variants.size());
    variants[key] = name;
    ukernel_code += emit_ukernel(isa, u, layout, name, v) + "\n";
    return name;
  }

  // Per-axis border patterns of a call site: for each base b (input row or
  // column of the block's first tap, padded coordinates) the valid tap range
  // of each output row/column of the block; full ranges are pattern 0.
  struct Axis {
    std::vector<std::vector<std::pair<int, int>>> patterns{{}};  // [0] = every tap
    std::map<int64_t, int> of_base;
    std::set<int> used;  // the patterns some call meets: only they get code
  };
  // One axis's geometry: output index o and tap t read input o*stride + t*dil - pad.
  struct Geometry {
    int64_t stride = 1, pad = 0, dil = 1;
  };
  static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }  // b > 0
  Axis axis(const std::set<int64_t>& outs, const std::set<int64_t>& taps, int blocks, int span, int64_t size,
            Geometry geo) const {
    Axis a;
    for (int64_t o : outs)
      for (int64_t t : taps) {
        const int64_t b = o * geo.stride + t * geo.dil;
        if (a.of_base.count(b)) continue;
        std::vector<std::pair<int, int>> p;
        bool full = true;
        for (int i = 0; i < blocks; ++i) {
          // input index b - pad + i*stride + tap*dil must lie in [0, size)
          const int64_t first = b - geo.pad + i * geo.stride;
          const int lo = int(std::clamp<int64_t>(ceil_div(-first, geo.dil), 0, span));
          const int hi = int(std::clamp<int64_t>(ceil_div(size - first, geo.dil), 0, span));
          p.push_back({lo, std::max(lo, hi)});
          full = full && lo == 0 && hi == span;
        }
        if (full) {
          a.of_base[b] = 0;
          a.used.insert(0);
          continue;
        }
        auto it = std::find(a.patterns.begin(), a.patterns.end(), p);
        a.of_base[b] = int(it - a.patterns.begin());
        a.used.insert(a.of_base[b]);
        if (it == a.patterns.end()) a.patterns.push_back(p);
      }
    return a;
  }

  // A lookup table by base of the pattern's rank among the used ones, or ""
  // when every call meets the same pattern.
  std::string table(const Axis& a, const std::string& name) {
    if (a.used.size() == 1) return "";
    std::string t = fmt::format("static const unsigned char {}[{}] = {{", name, a.of_base.rbegin()->first + 1);
    int64_t next = 0;
    for (auto [b, id] : a.of_base) {
      for (; next < b; ++next) t += "0,";
      t += fmt::format("{},", std::distance(a.used.begin(), a.used.find(id)));
      next = b + 1;
    }
    tables += t + "};\n";
    return name;
  }

  // Flat(hw) at stride > 1: the input offset of the view's output pixel p
  // (NHWC, one image), and per block start p0 the rows' offsets from p0's
  // when the block runs across the end of an output row (pattern 0: it does
  // not, rows h*ST*IROW apart as in the contract). At stride 1 the view's
  // pixels are the input's, so every block is regular.
  int64_t flat_pixel(int64_t p) const {
    const int64_t wo = real.Wo();
    return ((p / wo) * real.stride_h * real.W + (p % wo) * real.stride_w) * real.C;
  }
  Axis flat_axis(const std::set<int64_t>& starts, int blocks, std::vector<std::vector<int64_t>>& offsets) const {
    Axis a;
    offsets = {{}};
    for (int64_t p0 : starts) {
      std::vector<int64_t> rows;
      bool regular = true;
      for (int j = 0; j < blocks; ++j) {
        rows.push_back(flat_pixel(p0 + j) - flat_pixel(p0));
        regular = regular && rows.back() == j * layout.stride * layout.in_row;  // ST is 1 under Flat(hw)
      }
      int id = 0;
      if (!regular) {
        id = int(std::find(offsets.begin(), offsets.end(), rows) - offsets.begin());
        if (id == int(offsets.size())) offsets.push_back(rows);
      }
      a.of_base[p0] = id;
      a.used.insert(id);
    }
    return a;
  }

  // The microkernel call for specs[ublock-1] = T(nc,c) and the U block.
  void emit_call(int depth, int64_t alpha) {
    UkSizes u;
    for (size_t i = ublock; i < specs.size(); ++i) {
      const Spec& s = specs[i];
      if (s.kind != SpecKind::U) continue;
      int v = int(s.alpha ? alpha : s.factor);
      switch (s.dim) {
        case Dim::k: u.k = v; break;
        case Dim::c: u.c = v; break;
        case Dim::w: u.w = v; break;
        case Dim::h: u.h = v; break;
        case Dim::r: u.r = v; break;
        case Dim::s: u.s = v; break;
        default: throw Error("config: U on dimension n is not a microkernel dimension");
      }
    }
    const int64_t nc = specs[ublock - 1].factor * std::max<int64_t>(1, lane_cg);
    u.dw = dw;
    // C: the channels of one output's weights (ONNX [K][C/groups][R][S]); sh is one group's problem under g,
    // and under Lanes(g) the view's depthwise shape, whose outputs each read the Cg of their group.
    const int64_t C = lane_cg ? lane_cg : sh.Cg(), R = sh.R, S = sh.S, H = sh.H, W = sh.W, K = sh.K, Ho = sh.Ho();
    const int site = sites++;
    std::vector<std::vector<int64_t>> in_rows{{}};  // Flat(hw): the rows' input offsets per pattern of ha
    const Geometry gh{sh.stride_h, sh.pad_t, sh.dil_h}, gw{sh.stride_w, sh.pad_l, sh.dil_w};
    const Axis ha = flat ? flat_axis(values(Dim::h), u.h, in_rows) : axis(values(Dim::h), values(Dim::r), u.h, u.r, H, gh);
    const Axis wa = axis(values(Dim::w), values(Dim::s), u.w, u.s, W, gw);
    std::vector<int> k_lanes;  // the k blocks' lanes that exist: 0 = all (no tail), then the tail
    for (int64_t k0 : values(Dim::k)) {
      const int lanes = K - k0 < kb ? int(K - k0) : 0;
      if (std::find(k_lanes.begin(), k_lanes.end(), lanes) == k_lanes.end()) k_lanes.push_back(lanes);
    }
    std::sort(k_lanes.begin(), k_lanes.end());
    const std::string ht = table(ha, fmt::format(flat ? "ct_fv{}" : "ct_hv{}", site));
    const std::string wt = table(wa, fmt::format("ct_wv{}", site));
    const size_t nw = wa.used.size(), nk = k_lanes.size();

    std::string n = offset(Dim::n), h = offset(Dim::h), w = offset(Dim::w), k = offset(Dim::k),
                c = offset(Dim::c), r = offset(Dim::r), s = offset(Dim::s);
    std::string o;
    o += ind(depth) + "{\n";
    const std::string in = ind(depth + 1);
    o += in + fmt::format("const long n = {}, h = {}, w = {}, k = {};\n", n, h, w, k);
    o += in + fmt::format("const long c = {}, r = {}, s = {};\n", c, r, s);
    const GroupStep gs = group_step(in);
    o += gs.decl;
    // Negative for blocks whose first tap lies in the padding: only real taps are read.
    // A tap's offset in its axis: "r", or "r * 2" at dilation 2.
    auto tap = [](const char* var, int64_t dil) { return dil == 1 ? std::string(var) : fmt::format("{} * {}", var, dil); };
    if (!flat)
      o += in + fmt::format("const long io = n * {} + (h * {} + {} - {}) * {} + (w * {} + {} - {}) * {} + {}{};\n",
                            H * layout.in_row, sh.stride_h, tap("r", sh.dil_h), sh.pad_t, layout.in_row, sh.stride_w,
                            tap("s", sh.dil_w), sh.pad_l, layout.in_pix, dw ? "k" : "c", gs.in);
    else if (real.stride_h == 1 && real.stride_w == 1)  // the view's pixel h is the input's
      o += in + fmt::format("const long io = n * {} + h * {} + c;  /* Flat(hw) */\n", real.H * real.W * real.C, real.C);
    else  // output pixel h = (row, column) reads input pixel (row * ST, column * ST)
      o += in + fmt::format("const long io = n * {} + (h / {}) * {} + (h % {}) * {} + c;  /* Flat(hw) */\n",
                            real.H * real.W * real.C, real.Wo(), real.stride_h * real.W * real.C, real.Wo(),
                            real.stride_w * real.C);
    o += in + fmt::format("const float *wp = weights + k * {} + c * {} + (r * {} + s) * {}{};\n", C * R * S,
                          R * S * kb, S, cu * kb, gs.weights);
    // The output's real strides (layout): under a g loop K is one group's.
    o += in + fmt::format("float *op = output + n * {} + h * {} + w * {} + k{};\n", Ho * layout.out_row,
                          layout.out_row, layout.out_pix, gs.out);
    o += in + "const int acc = (c | r | s) != 0;\n";
    if (pf_loop >= 0)  // this call's share of the next block (the block starts at r = s = 0)
      o += in + fmt::format("const float *pf = weights + k * {} + c * {} + {} + pfg++ * {}{};\n", C * R * S, R * S * kb,
                            pf_step, pf_share * isa.line_floats, gs.weights);
    if (epilogue != Epilogue::none || stream_out) {
      // The call that completes its output block's reduction applies the
      // epilogue and streams the block (Nt(o)): the one at the last c block
      // and the last r, s taps (the loops run upwards, so it is the block's
      // last visit). A reduction offset with one value at this site needs no test.
      std::string last;
      for (auto [d, var] : {std::pair<Dim, const char*>{Dim::c, "c"}, {Dim::r, "r"}, {Dim::s, "s"}}) {
        const std::set<int64_t> v = values(d);
        if (v.size() > 1) last += fmt::format("{}{} == {}", last.empty() ? "" : " && ", var, *v.rbegin());
      }
      o += in + fmt::format("const int last = {};\n", last.empty() ? "1" : last);
    }
    if (epilogue != Epilogue::none) {
      o += in + fmt::format("const float *bp = bias + k{};\n", gs.out);
      o += in + (has_residual(epilogue)
                     ? fmt::format("const float *qp = residual + n * {} + h * {} + w * {} + k{};\n", Ho * layout.out_row,
                                   layout.out_row, layout.out_pix, gs.out)
                     : std::string("const float *qp = 0;  /* no residual */\n"));
    }
    std::vector<std::string> sel;
    if (!ht.empty()) sel.push_back(fmt::format("{}[h * {} + {}] * {}", ht, sh.stride_h, tap("r", sh.dil_h), nw * nk));
    if (!wt.empty()) sel.push_back(fmt::format("{}[w * {} + {}] * {}", wt, sh.stride_w, tap("s", sh.dil_w), nk));
    if (nk > 1) sel.push_back(fmt::format("(k + {} > {})", kb, K));
    auto call = [&](size_t hi, size_t wi, size_t ki) {  // pattern ids per axis
      UkVariant v;
      if (flat) v.in_rows = in_rows[hi];
      else v.rows = ha.patterns[hi];
      v.cols = wa.patterns[wi];
      v.k_lanes = k_lanes[ki];
      v.epilogue = epilogue;
      v.fence = fence;
      v.prefetch = int(pf_np);
      v.prefetch_out = prefetch_out;
      v.stream_out = stream_out;
      v.lane_cg = int(lane_cg);
      return fmt::format("{}(input, io, wp, op, {}, acc{}{});", variant_fn(u, v), nc,
                         epilogue != Epilogue::none ? ", last, bp, qp" : stream_out ? ", last" : "",
                         pf_loop >= 0 ? fmt::format(", pf, {}", pf_pn) : std::string());
    };
    if (sel.empty()) {
      o += in + call(size_t(*ha.used.begin()), size_t(*wa.used.begin()), 0) + "\n";
    } else {
      std::string key;
      for (const auto& x : sel) key += (key.empty() ? "" : " + ") + x;
      o += in + fmt::format("switch ({}) {{  /* border and tail variants */\n", key);
      size_t label = 0;  // (rank of h pattern * nw + rank of w pattern) * nk + k variant
      for (int hi : ha.used)
        for (int wi : wa.used)
          for (size_t ki = 0; ki < nk; ++ki)
            o += in + fmt::format("  case {}: {} break;\n", label++, call(size_t(hi), size_t(wi), ki));
      o += in + "}\n";
    }
    o += ind(depth) + "}\n";
    body += o;
  }

  // config.h g: a call's group g reads its Cg channels of the input pixel,
  // writes its Kg of the output pixel and reads its block of the packed
  // weights (emit_group_pack). Empty without groups, so dense code is unchanged.
  struct GroupStep {
    std::string decl, in, weights, out;
  };
  GroupStep group_step(const std::string& in) const {
    if (groups == 1) return {};
    const int64_t block = sh.padded_K(isa.lanes) * sh.C * sh.R * sh.S;
    return {in + fmt::format("const long g = {};  /* group: {} inputs, {} outputs, {} packed weights */\n",
                                 offset(Dim::g), sh.C, sh.K, block),
            fmt::format(" + g * {}", sh.C), fmt::format(" + g * {}", block), fmt::format(" + g * {}", sh.K)};
  }

  void push(Dim d, Term t) { terms[di(d)].push_back(std::move(t)); }

  bool parallel(size_t i) const { return i < specs.size() && specs[i].kind == SpecKind::P && specs[i].factor > 1; }

  // The OpenMP line above specs[i] = P(n,d) (config.h): one thread per
  // iteration, or t for P(n,d,t) (OpenMP's static schedule gives each a
  // contiguous chunk); with an adjacent P below, one collapse(2) loop of
  // t1*t2 threads (validate_config allows at most two P, adjacent, so this never
  // nests parallel regions). Every variable of the body is declared inside
  // it, so private to its thread; the tables are read-only.
  std::string omp_pragma(size_t i) const {
    if (i > 0 && parallel(i - 1)) return "";  // the inner loop of a collapse(2)
    if (parallel(i + 1))
      return fmt::format("#pragma omp parallel for collapse(2) schedule(static) num_threads({})\n",
                         spec_threads(specs[i]) * spec_threads(specs[i + 1]));
    return fmt::format("#pragma omp parallel for schedule(static) num_threads({})\n", spec_threads(specs[i]));
  }

  // Emits specs[i..] at the given depth.
  void emit(size_t i, int depth, int64_t alpha) {
    if (i == ublock - 1) {  // T(nc,c) + microkernel: the microkernel runs the c loop itself
      emit_call(depth, alpha);
      return;
    }
    const Spec& s = specs[i];
    if (s.kind == SpecKind::Lseq) {
      const Dim d = Dim::h;
      int lv = ++level[di(d)];
      int64_t sz1 = extent(i + 1, d, s.seq[0].second), sz2 = extent(i + 1, d, s.seq[1].second);
      std::string var = fmt::format("h{}", lv);
      body += ind(depth) + fmt::format("/* Lseq: {} x h-block {} then {} x h-block {} */\n",
                                       s.seq[0].first, sz1, s.seq[1].first, sz2);
      for (int part = 0; part < 2; ++part) {
        int64_t reps = s.seq[part].first, sz = part == 0 ? sz1 : sz2;
        const int64_t base = part == 0 ? 0 : s.seq[0].first * sz1;
        Term t{part == 0 ? fmt::format("{} * {}", var, sz) : fmt::format("({} + {} * {})", base, var, sz), base,
               reps, sz};
        if (reps == 1) {  // a single block: no loop (its index is 0)
          t = Term{part == 0 ? "" : fmt::format("{}", base), base, 1, 0};
          body += ind(depth) + fmt::format("{{  /* {} h-block of {} */\n", part == 0 ? "first" : "second", sz);
        } else {
          body += ind(depth) + fmt::format("for (long {0} = 0; {0} < {1}; ++{0}) {{\n", var, reps);
        }
        push(d, t);
        emit(i + 1, depth + 1, s.seq[part].second);
        terms[di(d)].pop_back();
        body += ind(depth) + "}\n";
      }
      --level[di(d)];
      return;
    }
    int64_t count = s.kind == SpecKind::R ? r_count(i) : s.factor;
    int64_t step = extent(i + 1, s.dim, alpha);
    // Pf(w)'s loop: the calls of one iteration count their shares in pfg.
    const bool pf_here = int(i) == pf_loop;
    const std::string pfg = "long pfg = 0;  /* Pf(w): calls of this iteration so far */\n";
    if (count == 1) {  // degenerate loop (000 §2): no code, but a block for pfg
      if (pf_here) body += ind(depth) + "{\n" + ind(depth + 1) + pfg;
      emit(i + 1, depth + pf_here, alpha);
      if (pf_here) body += ind(depth) + "}\n";
      return;
    }
    int lv = ++level[di(s.dim)];
    std::string var = fmt::format("{}{}", dim_char(s.dim), lv);
    if (s.kind == SpecKind::P) body += omp_pragma(i);
    body += ind(depth) + fmt::format("for (long {0} = 0; {0} < {1}; ++{0}) {{  /* {2} */\n", var, count,
                                     to_string(s));
    if (pf_here) body += ind(depth + 1) + pfg;
    push(s.dim, Term{step == 1 ? var : fmt::format("{} * {}", var, step), 0, count, step});
    emit(i + 1, depth + 1, alpha);
    // Nt(o): each thread orders its non-temporal stores before the team's
    // barrier (the innermost P's body: a collapse(2) admits nothing between its loops).
    if (stream_out && parallel(i) && !parallel(i + 1) && !isa.stream_fence.empty())
      body += ind(depth + 1) + isa.stream_fence + ";  /* Nt(o) */\n";
    terms[di(s.dim)].pop_back();
    --level[di(s.dim)];
    body += ind(depth) + "}\n";
  }
};

// The loop nest that packs one block of weights: `pad` indents every line (a
// group loop above it), `g_packed` leads the packed offset and `k_src` is the
// source row of output k ("k" dense, "(g * Kg + k)" grouped).
std::string pack_nest(const std::string& pad, const std::string& g_packed, const std::string& k_src, int64_t Kp,
                      int64_t kb, int64_t cu, int64_t C, int64_t R, int64_t S, int64_t K) {
  return fmt::format(
      "{0}  for (long k0 = 0; k0 < {1}; k0 += {2})\n"
      "{0}    for (long c = 0; c < {3}; ++c)\n"
      "{0}      for (long r = 0; r < {4}; ++r)\n"
      "{0}        for (long s = 0; s < {5}; ++s)\n"
      "{0}          for (long kk = 0; kk < {2}; ++kk) {{\n"
      "{0}            const long k = k0 + kk;\n"
      "{0}            packed[{11}k0 * {6} + (c / {7}) * {8} + (r * {5} + s) * {9} + (c % {7}) * {2} + kk] =\n"
      "{0}                k < {10} ? kcrs[(({12} * {3} + c) * {4} + r) * {5} + s] : 0.0f;\n"
      "{0}          }}\n",
      pad, Kp, kb, C, R, S, C * R * S, cu, R * S * cu * kb, cu * kb, K, g_packed, k_src);
}

// The packing function: KCRS (PyTorch's and ONNX's layout) into
// [Kp/kb][C/cu][R][S][cu][kb], the order the microkernel reads, zero columns
// past K (oneDNN and XNNPACK pack the same way, once, outside the call).
// Depthwise, C is Cg() = 1: [K][1][R][S] into [Kp/kb][R][S][kb], the
// channel vectors of one tap together (oneDNN's dw weights, Goihw16g).
std::string emit_pack(const Shape& sh, int64_t Kp, int64_t kb, int64_t cu, const std::string& fn) {
  return fmt::format("void {}_pack(const float *restrict kcrs, float *restrict packed)\n{{\n", fn) +
         pack_nest("", "", "k", Kp, kb, cu, sh.Cg(), sh.R, sh.S, sh.K) + "}\n";
}

// The packing function of a grouped shape (config.h g): ONNX's
// [K][C/groups][R][S] into one dense block per group, [groups][Kgp/kb][Cg/cu][R][S][cu][kb]
// with Kgp = Kg padded to the lanes, zero columns past Kg (oneDNN's grouped
// weights are likewise [g][O/g][I/g][kh][kw] before its blocking).
std::string emit_group_pack(const Shape& sh, int64_t lanes, int64_t kb, int64_t cu, const std::string& fn) {
  const Shape gv = group_view(sh);
  const int64_t Cg = gv.C, Kg = gv.K, R = sh.R, S = sh.S, Kgp = gv.padded_K(lanes);
  return fmt::format("void {0}_pack(const float *restrict kcrs, float *restrict packed)\n{{\n"
                     "  for (long g = 0; g < {1}; ++g)\n",
                     fn, sh.groups) +
         pack_nest("  ", fmt::format("g * {} + ", Kgp * Cg * R * S), fmt::format("(g * {} + k)", Kg), Kgp, kb, cu, Cg,
                   R, S, Kg) +
         "}\n";
}

// The comment's packed layout of a grouped shape (emit_group_pack).
std::string group_pack_doc(const Shape& sh, int64_t lanes, int64_t kb, int64_t cu) {
  const Shape gv = group_view(sh);
  return fmt::format("[G][Kgp/{0}][Cg/{1}][R][S][{1}][{0}], G = {2} groups of Cg = {3} inputs\n"
                     " *           and Kg = {4} outputs, Kgp = {5}; group g reads input channels g*Cg.. and\n"
                     " *           writes output channels g*Kg.. of each pixel",
                     kb, cu, sh.groups, gv.C, gv.K, gv.padded_K(lanes));
}

// The header's stride, pad, dilation and group macros: STRIDE and PAD where
// one value holds for every axis and side, the per-axis ones otherwise.
std::string window_defines(const Shape& sh, const std::string& FN) {
  std::string d;
  if (sh.stride_h == sh.stride_w) d += fmt::format("#define {}_STRIDE {}\n", FN, sh.stride_h);
  else d += fmt::format("#define {0}_STRIDE_H {1}\n#define {0}_STRIDE_W {2}\n", FN, sh.stride_h, sh.stride_w);
  if (sh.pad_t == sh.pad_l && sh.pad_t == sh.pad_b && sh.pad_t == sh.pad_r)
    d += fmt::format("#define {}_PAD {}\n", FN, sh.pad_t);
  else
    d += fmt::format("#define {0}_PAD_T {1}\n#define {0}_PAD_L {2}\n#define {0}_PAD_B {3}\n#define {0}_PAD_R {4}\n", FN,
                     sh.pad_t, sh.pad_l, sh.pad_b, sh.pad_r);
  if (sh.dil_h != 1 || sh.dil_w != 1)
    d += fmt::format("#define {0}_DILATION_H {1}\n#define {0}_DILATION_W {2}\n", FN, sh.dil_h, sh.dil_w);
  if (sh.groups != 1) d += fmt::format("#define {}_GROUPS {}\n", FN, sh.groups);
  return d;
}

// The epilogue in the file's comment block ("" for none).
std::string epilogue_doc(Epilogue e) {
  switch (e) {
    case Epilogue::none: return "";
    case Epilogue::bias: return " * epilogue: bias: output = conv + bias[k] (bias [K])\n";
    case Epilogue::bias_relu: return " * epilogue: bias,relu: output = max(conv + bias[k], 0) (bias [K])\n";
    case Epilogue::bias_relu6:
      return " * epilogue: bias,relu6: output = min(max(conv + bias[k], 0), 6) (bias [K])\n";
    case Epilogue::bias_add:
      return " * epilogue: bias,add: output = conv + bias[k] + residual (bias [K], residual [N][Ho][Wo][K])\n";
  }
  return "";
}

// What the header says about bias and residual.
std::string epilogue_header_doc(Epilogue e) {
  if (e == Epilogue::none) return "";
  return fmt::format(
      "/* Epilogue {}, fused: applied in registers before each output block is stored.\n"
      "   bias [K]; residual [N][HO][WO][K] {}. Neither is written; the residual\n"
      "   must not overlap the output. */\n",
      to_string(e), has_residual(e) ? "(added to the output)" : "is not read: pass NULL");
}

// Pf(w): the block one iteration of the prefetch loop reads is nc c steps of
// the packed weights (nothing below that loop moves along k or c); the next
// iteration's starts one step of that loop further on. Its G calls (the
// loops between, an Lseq counting a1 + a2) each prefetch 1/G of it, spread
// over their c steps, so the stream from L3 runs at the rate of the
// computation instead of in bursts at a block's first call (resnet18-12's
// weights, config.h Pf(w)).
void plan_prefetch(Gen& g, const Config& config) {
  const Shape& sh = g.sh;
  g.pf_loop = prefetch_loop(config);
  if (g.pf_loop < 0) throw Error("config: Pf(w) without a k or c loop to prefetch for (internal error)");
  const size_t L = size_t(g.pf_loop);
  const Spec& l = g.specs[L];
  const int64_t step = g.extent(L + 1, l.dim, 0);
  const int64_t cg = g.lane_cg ? g.lane_cg : sh.Cg();  // a packed block's channels (Lanes(g): its group's)
  g.pf_step = l.dim == Dim::c ? step * sh.R * sh.S * g.kb : step * cg * sh.R * sh.S;
  const int64_t nc = g.specs[g.ublock - 1].factor * std::max<int64_t>(1, g.lane_cg);
  const int64_t lines = (nc * sh.R * sh.S * g.cu * g.kb + g.isa.line_floats - 1) / g.isa.line_floats;
  int64_t calls = 1;
  for (size_t i = L + 1; i + 1 < g.ublock; ++i) {
    const Spec& s = g.specs[i];
    if (s.kind == SpecKind::Lseq) calls *= s.seq[0].first + s.seq[1].first;
    else if (s.kind == SpecKind::R) calls *= g.r_count(i);
    else calls *= s.factor;
  }
  g.pf_share = (lines + calls - 1) / calls;
  g.pf_np = (g.pf_share + nc - 1) / nc;
  g.pf_pn = (g.pf_share + g.pf_np - 1) / g.pf_np;
}

}  // namespace

int64_t packed_weight_floats(const Shape& sh, int64_t lanes) {
  if (has_group_loop(sh)) return sh.groups * packed_weight_floats(group_view(sh), lanes);  // a block per group
  return sh.padded_K(lanes) * sh.Cg() * sh.R * sh.S;
}

GeneratedKernel generate_conv(const Isa& isa, const CodegenInput& in) {
  const Shape& sh = in.shape;
  validate_config(in.config, sh, isa.lanes);
  const Shape view = tiled_shape(in.config, sh);
  const auto& specs = in.config.specs;
  size_t ublock = specs.size() - 1;
  while (ublock > 0 && specs[ublock - 1].kind == SpecKind::U) --ublock;
  const int64_t Kp = sh.padded_K(isa.lanes);

  const bool wino = in.config.wino();
  const int64_t block = in.config.view.block;
  // Wino(2): the loops are one of the 16 or 25 GEMMs, whose input is the transformed tiles (the view's own layout).
  // Under a g loop the loops below tile one group (config.h g); the layout keeps the real strides.
  const Shape loops = loop_shape(view);
  Gen g{isa, loops, wino ? view : sh, in.config.flat(), specs, ublock, {}, 0, 0, {}, {}, {}, {}, 0, {}, {}};
  g.groups = dim_size(view, Dim::g, isa.lanes);  // Lanes(g): none, the groups are in the lanes
  if (in.config.lanes()) {
    if (isa.lane_permute.empty())
      throw Error(fmt::format("config: Lanes(g) needs the ISA's lane_groups block, which {} has not; drop Lanes(g)",
                              isa.name));
    g.lane_cg = sh.Cg();
  }
  g.kb = isa.lanes;
  g.cu = 1;
  for (size_t i = ublock; i < specs.size(); ++i) {
    if (specs[i].kind != SpecKind::U) continue;
    if (specs[i].dim == Dim::k) g.kb = specs[i].factor * isa.lanes;
    if (specs[i].dim == Dim::c) g.cu = specs[i].factor;
  }
  g.layout.in_pix = sh.C;
  // Flat(hw): the view's rows are output pixels, ST input pixels apart within an output row.
  g.layout.in_row = in.config.flat() ? sh.stride_w * sh.C : wino ? sh.C : sh.W * sh.C;
  // Wino(2): the GEMM reads consecutive tiles.
  g.layout.stride = in.config.flat() || wino ? 1 : sh.stride_h;
  g.layout.stride_w = in.config.flat() || wino ? 1 : sh.stride_w;
  g.layout.dil_h = view.dil_h;
  g.layout.dil_w = view.dil_w;
  g.layout.w_c = g.kb;
  g.layout.w_s = g.cu * g.kb;
  g.layout.w_r = view.S * g.cu * g.kb;  // the view's filter: 1x1 under Flat(hw) and Wino(2)
  g.layout.w_it = view.R * view.S * g.cu * g.kb;
  g.layout.out_pix = sh.K;
  g.layout.out_row = view.Wo() * sh.K;
  g.epilogue = wino ? Epilogue::none : in.epilogue;  // Wino(2): the output transform applies it
  g.fence = in.config.fence;
  if (in.config.prefetch) plan_prefetch(g, in.config);  // after lane_cg: it counts a block's channels
  g.prefetch_out = in.config.prefetch_out;
  g.stream_out = in.config.stream_out;
  g.dw = depthwise_shape(loops);  // Lanes(g): its view's
  g.emit(0, 1, 0);
  // Nt(o): the caller may read the output as soon as the call returns.
  if (g.stream_out && !isa.stream_fence.empty()) g.body += "  " + isa.stream_fence + ";  /* Nt(o) */\n";

  const std::string cfg = to_string(in.config);
  const std::string fn = in.function_name, FN = upper(fn);
  const int64_t threads = config_threads(in.config);
  const int64_t packed = wino              ? wino_packed_floats(sh, isa.lanes, block, threads)
                         : in.config.lanes() ? Kp * sh.Cg() * sh.R * sh.S  // emit_pack's, no block per group
                                             : packed_weight_floats(sh, isa.lanes);
  // How many threads and how they are chosen: the header says it where a user reads it.
  const std::string threads_doc =
      wino ? (threads > 1 ? fmt::format("/* Threads: {0}, fixed by Wino(2,b,{0}) (OpenMP num_threads({0})): each takes a share\n"
                                        "   of the blocks and its own scratch at the end of the packed buffer (floats {1}\n"
                                        "   to {2}). Compile with -fopenmp; without it the threads' shares run in turn on\n"
                                        "   the calling thread. Threads that call it at the same time need a packed buffer\n"
                                        "   each. For the speed it was tuned at, bind the threads to {0} cores, e.g.\n"
                                        "   OMP_PROC_BIND=close OMP_PLACES=cores. */\n",
                                        threads, wino_weight_floats(sh, isa.lanes), packed)
                          : fmt::format("/* Threads: runs on the calling thread. Wino(2): the call writes the scratch at the end of\n"
                                        "   the packed buffer (floats {} to {}), so threads that call it at the same time need\n"
                                        "   a packed buffer each. */\n",
                                        wino_weight_floats(sh, isa.lanes), packed))
      : threads > 1 ? fmt::format(
                        "/* Threads: {0}, fixed by the configuration's P loops (OpenMP num_threads({0}); neither\n"
                        "   OMP_NUM_THREADS nor omp_set_num_threads changes it). Compile with -fopenmp; without it\n"
                        "   the pragma is ignored and the same code runs on the calling thread. Call it from one\n"
                        "   thread at a time: each call starts its own team of {0} threads (concurrent calls are\n"
                        "   correct but oversubscribe the cores). For the speed it was tuned at, bind the threads\n"
                        "   to {0} cores, e.g. OMP_PROC_BIND=close OMP_PLACES=cores. */\n",
                        threads)
                  : "/* Threads: runs on the calling thread (no P loop in the configuration); it keeps no state,\n"
                    "   so calls from several threads at once are safe. */\n";
  std::string comment = fmt::format(
      "/* Generated by convtune {} -- 2D convolution, f32.\n"
      " * shape:  {}{}\n"
      " *         output {}x{}x{} (Ho x Wo x K)\n"
      " * config: {}\n"
      " * threads: {}\n"
      " * isa:    {}\n"
      " * table:  {}\n"
      " * Layouts (element strides; see microkernels/CONTRACT.md):\n"
      " *   input   [N][H][W][C] = [{}][{}][{}][{}]  NHWC, not padded: padding taps are skipped\n"
      " *   weights {} = [{}][{}][{}][{}]  KCRS (PyTorch, ONNX), packed once by {}_pack\n"
      " *           into {} floats: {}\n"
      " *   output  [N][Ho][Wo][K] = [{}][{}][{}][{}]  NHWC, overwritten\n"
      "{}"
      " */\n",
      CONVTUNE_VERSION, sh.to_string(), sh.name.empty() ? "" : " (" + sh.name + ")", sh.Ho(), sh.Wo(), sh.K, cfg,
      threads > 1 ? fmt::format("{} (OpenMP; compile with -fopenmp)", threads) : std::string("1"), isa.name, in.provenance.empty() ? "(none)" : in.provenance, sh.N, sh.H, sh.W, sh.C,
      g.dw ? "[K][C/groups][R][S]" : g.groups > 1 ? "[K][C/G][R][S]" : "[K][C][R][S]", sh.K, sh.Cg(), sh.R, sh.S,
      fn, packed,
      wino ? fmt::format("Winograd {5}: [{6}][Kp/{0}][C/{1}][{1}][{0}] (G g G^T), Kp = {2},\n"
                         " *           then {3} floats of scratch: [{6}][{4}][C] and [{6}][{4}][K], {4} tiles a block{7}",
                         g.kb, g.cu, Kp, packed - wino_weight_floats(sh, isa.lanes), view.H,
                         wino_transform(sh).name, wino_points(sh),
                         threads > 1 ? fmt::format(", once per thread ({})", threads) : std::string())
           : g.groups > 1 ? group_pack_doc(sh, isa.lanes, g.kb, g.cu)
           : g.lane_cg ? fmt::format("[Kp/{0}][Cg][R][S][{0}], Kp = {1}, Cg = {2} (Lanes(g): output k's taps over input\n"
                                     " *           c of its group in lane k % {0})", g.kb, Kp, g.lane_cg)
           : g.dw ? fmt::format("[Kp/{0}][R][S][{0}], Kp = {1} (depthwise: channel k's taps in lane k % {0})", g.kb, Kp)
                  : fmt::format("[Kp/{0}][C/{1}][R][S][{1}][{0}], Kp = {2}", g.kb, g.cu, Kp),
      sh.N, sh.Ho(), sh.Wo(), sh.K, epilogue_doc(in.epilogue));
  // The entry point's parameters: bias and residual only with an epilogue.
  auto params_with = [&](const std::string& weights) {
    return in.epilogue == Epilogue::none
               ? "const float *restrict input, " + weights + ",\n    float *restrict output"
               : "const float *restrict input, " + weights +
                     ",\n    const float *restrict bias, const float *restrict residual, float *restrict output";
  };
  const std::string params = params_with("const float *restrict weights");

  GeneratedKernel out;
  out.packed_floats = packed;
  out.threads = threads;
  if (threads > 1) out.cflags = {"-fopenmp"};
  out.c_source = comment + generated_prelude(isa) + g.ukernel_code + g.tables + "\n" +
                 fmt::format("const unsigned long {}_packed_floats = {};\n\n", fn, packed);
  if (wino)  // the loops are one GEMM of 16 or 25, between the transforms
    out.c_source += fmt::format("static void {}_gemm(const float *restrict input, const float *restrict weights,\n"
                                "    float *restrict output)\n{{\n",
                                fn) +
                    g.body + "}\n\n" +
                    // The definition drops restrict from weights (top-level qualifiers of a
                    // parameter do not change the prototype): the call writes the scratch
                    // through a pointer based on it, which C11 6.7.3.1 forbids for a
                    // restrict pointer to const.
                    emit_wino(isa, sh, block, threads, g.kb, g.cu, in.epilogue, fn,
                              params_with("const float *weights"), fn + "_gemm");
  else
    out.c_source += (g.groups > 1 ? emit_group_pack(sh, isa.lanes, g.kb, g.cu, fn) : emit_pack(sh, Kp, g.kb, g.cu, fn)) +
                    "\n" + fmt::format("void {}({})\n{{\n", fn, params) + g.body + "}\n";
  out.header = comment + fmt::format(
      "#ifndef CT_{0}_H\n#define CT_{0}_H\n\n"
      "#define {0}_N {1}\n#define {0}_K {2}\n#define {0}_C {3}\n"
      "#define {0}_H {4}\n#define {0}_W {5}\n#define {0}_R {6}\n#define {0}_S {7}\n"
      "{8}#define {0}_HO {10}\n#define {0}_WO {11}\n"
      "#define {0}_PACKED_FLOATS {12}\n"
      "#define {0}_EPILOGUE \"{15}\"\n\n"
      "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n"
      "/* Floats of the packed weight buffer ({0}_PACKED_FLOATS). */\n"
      "extern const unsigned long {13}_packed_floats;\n"
      "/* Once per set of weights: kcrs {19} into packed ({0}_PACKED_FLOATS floats). */\n"
      "void {13}_pack(const float *restrict kcrs, float *restrict packed);\n"
      "/* input [N][H][W][C], not padded; weights as packed by {13}_pack; output\n"
      "   [N][HO][WO][K], overwritten. No alignment required; nothing is allocated{18}. */\n"
      "{16}"
      "{14}"
      "void {13}({17});\n"
      "#ifdef __cplusplus\n}}\n#endif\n#endif\n",
      FN, sh.N, sh.K, sh.C, sh.H, sh.W, sh.R, sh.S, window_defines(sh, FN), 0, sh.Ho(), sh.Wo(), packed, fn, threads_doc,
      to_string(in.epilogue), epilogue_header_doc(in.epilogue), params,
      wino ? " (Wino(2): the\n   scratch is part of the packed buffer)" : "",
      g.lane_cg ? "[K][C/G][R][S]" : g.dw ? "[K][1][R][S] (depthwise, groups = C = K)"
                                 : g.groups > 1 ? "[K][C/G][R][S]" : "[K][C][R][S]");
  return out;
}

}  // namespace convtune
