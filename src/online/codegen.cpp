// 000 §3.4. The configuration is walked from the outermost specifier inwards;
// the sizes of every sub-configuration (what one iteration of a loop covers)
// are known first, which is what the paper's innermost-outwards pass computes.
// Lseq(h,[(a1,v1),(a2,v2)]) becomes Seq([T(a1,h), S[alpha/v1]], [T(a2,h), S[alpha/v2]]).
#include "convtune/online/codegen.h"

#include <array>
#include <map>
#include <set>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/offline/ukernel.h"
#include "convtune/offline/ukernel_codegen.h"

namespace convtune {

namespace {

int di(Dim d) { return static_cast<int>(d); }

struct Gen {
  const Isa& isa;
  const Shape& sh;
  const std::vector<Spec>& specs;
  int64_t Kp;
  size_t ublock;  // index of the first U/V specifier (the microkernel)
  UkLayout layout;
  std::set<std::string> emitted_ukernels;
  std::string ukernel_code;
  std::string body;
  // Offset terms per dimension, in units of that dimension's iterations.
  std::array<std::vector<std::string>, kNumDims> terms;
  std::array<int, kNumDims> level{};  // loop-variable counters per dimension

  // Extent along d covered by specs[from..], with U(a,h) = alpha.
  int64_t extent(size_t from, Dim d, int64_t alpha) const {
    int64_t e = 1;
    for (size_t i = from; i < specs.size(); ++i) {
      const Spec& s = specs[i];
      if (s.dim != d && s.kind != SpecKind::Lseq) continue;
      switch (s.kind) {
        case SpecKind::T: e *= s.factor; break;
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

  // R(d): the count that completes the dimension.
  int64_t r_count(size_t at) const {
    Dim d = specs[at].dim;
    int64_t others = 1;
    for (size_t i = 0; i < specs.size(); ++i) {
      if (i == at) continue;
      const Spec& s = specs[i];
      if (s.kind == SpecKind::Lseq && d == Dim::h) {
        // Lseq's own extent already includes what lies below it.
        return dim_size(sh, d, isa.lanes) / (others * extent(i, d, 1));
      }
      if (s.dim != d) continue;
      if (s.kind == SpecKind::T || (s.kind == SpecKind::U && !s.alpha)) others *= s.factor;
      if (s.kind == SpecKind::V) others *= isa.lanes;
    }
    return dim_size(sh, d, isa.lanes) / others;
  }

  std::string offset(Dim d) const {
    const auto& t = terms[di(d)];
    if (t.empty()) return "0";
    std::string s;
    for (const auto& x : t) s += (s.empty() ? "" : " + ") + x;
    return s;
  }

  std::string ind(int depth) const { return std::string(2 * depth, ' '); }

  void emit_ukernel_once(const UkSizes& u) {
    std::string name = ukernel_name(u, isa.name);
    if (emitted_ukernels.insert(name).second) ukernel_code += emit_ukernel(isa, u, layout, name) + "\n";
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
    emit_ukernel_once(u);
    const int64_t nc = specs[ublock - 1].factor;
    const int64_t C = sh.C, S = sh.S, Wp = sh.Wp(), Hp = sh.Hp(), Wo = sh.Wo(), Ho = sh.Ho();
    std::string n = offset(Dim::n), h = offset(Dim::h), w = offset(Dim::w), k = offset(Dim::k),
                c = offset(Dim::c), r = offset(Dim::r), s = offset(Dim::s);
    std::string o;
    o += ind(depth) + "{\n";
    o += ind(depth + 1) + fmt::format("const long n = {}, h = {}, w = {}, k = {};\n", n, h, w, k);
    o += ind(depth + 1) + fmt::format("const long c = {}, r = {}, s = {};\n", c, r, s);
    o += ind(depth + 1) +
         fmt::format("{}(input + n * {} + (h * {} + r) * {} + (w * {} + s) * {} + c,\n", ukernel_name(u, isa.name),
                     Hp * Wp * C, sh.stride, Wp * C, sh.stride, C);
    o += ind(depth + 3) + fmt::format("weights + r * {} + s * {} + c * {} + k,\n", S * C * Kp, C * Kp, Kp);
    o += ind(depth + 3) + fmt::format("output + n * {} + h * {} + w * {} + k,\n", Ho * Wo * Kp, Wo * Kp, Kp);
    o += ind(depth + 3) + fmt::format("{}, (c | r | s) != 0);\n", nc);
    o += ind(depth) + "}\n";
    body += o;
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
        std::string term = part == 0 ? fmt::format("{} * {}", var, sz)
                                     : fmt::format("({} + {} * {})", s.seq[0].first * sz1, var, sz);
        if (reps == 1) {  // a single block: no loop (its index is 0)
          term = part == 0 ? "" : fmt::format("{}", s.seq[0].first * sz1);
          body += ind(depth) + fmt::format("{{  /* {} h-block of {} */\n", part == 0 ? "first" : "second", sz);
        } else {
          body += ind(depth) + fmt::format("for (long {0} = 0; {0} < {1}; ++{0}) {{\n", var, reps);
        }
        if (!term.empty()) terms[di(d)].push_back(term);
        emit(i + 1, depth + 1, s.seq[part].second);
        if (!term.empty()) terms[di(d)].pop_back();
        body += ind(depth) + "}\n";
      }
      --level[di(d)];
      return;
    }
    int64_t count = s.kind == SpecKind::R ? r_count(i) : s.factor;
    int64_t step = extent(i + 1, s.dim, alpha);
    if (count == 1) {  // degenerate loop (000 §2): no code
      emit(i + 1, depth, alpha);
      return;
    }
    int lv = ++level[di(s.dim)];
    std::string var = fmt::format("{}{}", dim_char(s.dim), lv);
    body += ind(depth) + fmt::format("for (long {0} = 0; {0} < {1}; ++{0}) {{  /* {2} */\n", var, count,
                                     to_string(s));
    terms[di(s.dim)].push_back(step == 1 ? var : fmt::format("{} * {}", var, step));
    emit(i + 1, depth + 1, alpha);
    terms[di(s.dim)].pop_back();
    --level[di(s.dim)];
    body += ind(depth) + "}\n";
  }
};

}  // namespace

GeneratedKernel generate_conv(const Isa& isa, const CodegenInput& in) {
  const Shape& sh = in.shape;
  validate_config(in.config, sh, isa.lanes);
  const auto& specs = in.config.specs;
  size_t ublock = specs.size() - 1;
  while (ublock > 0 && specs[ublock - 1].kind == SpecKind::U) --ublock;
  const int64_t Kp = sh.padded_K(isa.lanes);

  Gen g{isa, sh, specs, Kp, ublock, {}, {}, {}, {}, {}, {}};
  g.layout.in_pix = sh.C;
  g.layout.in_row = sh.Wp() * sh.C;
  g.layout.stride = sh.stride;
  g.layout.w_c = Kp;
  g.layout.w_s = sh.C * Kp;
  g.layout.w_r = sh.S * sh.C * Kp;
  g.layout.out_pix = Kp;
  g.layout.out_row = sh.Wo() * Kp;
  g.emit(0, 1, 0);

  const std::string cfg = to_string(in.config);
  const std::string fn = in.function_name;
  std::string comment = fmt::format(
      "/* Generated by convtune {} -- 2D convolution, f32.\n"
      " * shape:  {}{}\n"
      " *         output {}x{}x{} (Ho x Wo x K){}\n"
      " * config: {}\n"
      " * isa:    {}\n"
      " * table:  {}\n"
      " * Layouts (element strides; see {}.h and microkernels/CONTRACT.md):\n"
      " *   input   [N][{}][{}][{}]  NHWC, zero-padded by the caller\n"
      " *   weights [R][S][C][Kp] = [{}][{}][{}][{}]  RSCK, k innermost\n"
      " *   output  [N][Ho][Wo][Kp] = [{}][{}][{}][{}]  NHWK, overwritten\n"
      " */\n",
      CONVTUNE_VERSION, sh.to_string(), sh.name.empty() ? "" : " (" + sh.name + ")", sh.Ho(),
      sh.Wo(), sh.K,
      Kp != sh.K ? fmt::format("; K padded to Kp={} for {}-lane vectors (000 Fig. 8)", Kp, isa.lanes) : "",
      cfg, isa.name, in.provenance.empty() ? "(none)" : in.provenance, fn, sh.Hp(), sh.Wp(), sh.C, sh.R,
      sh.S, sh.C, Kp, sh.N, sh.Ho(), sh.Wo(), Kp);

  GeneratedKernel out;
  out.c_source = comment + fmt::format("#include <{}>\n\n", isa.header) + g.ukernel_code +
                 fmt::format("void {}(const float *restrict input, const float *restrict weights,\n"
                             "    float *restrict output)\n{{\n",
                             fn) +
                 g.body + "}\n";
  std::string guard = "CT_" + fn + "_H";
  for (auto& ch : guard) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  out.header = comment + fmt::format(
      "#ifndef {0}\n#define {0}\n\n"
      "#define {1}_N {2}\n#define {1}_K {3}\n#define {1}_KP {4}\n#define {1}_C {5}\n"
      "#define {1}_H {6}\n#define {1}_W {7}\n#define {1}_R {8}\n#define {1}_S {9}\n"
      "#define {1}_STRIDE {10}\n#define {1}_PAD {11}\n#define {1}_HO {12}\n#define {1}_WO {13}\n\n"
      "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n"
      "/* input [N][H+2*PAD][W+2*PAD][C] zero-padded; weights [R][S][C][KP] with zero\n"
      "   columns K..KP-1; output [N][HO][WO][KP], overwritten. No alignment required. */\n"
      "void {14}(const float *restrict input, const float *restrict weights,\n"
      "    float *restrict output);\n"
      "#ifdef __cplusplus\n}}\n#endif\n#endif\n",
      guard, [&] { std::string u = fn; for (auto& ch : u) ch = char(std::toupper(static_cast<unsigned char>(ch))); return u; }(),
      sh.N, sh.K, Kp, sh.C, sh.H, sh.W, sh.R, sh.S, sh.stride, sh.pad, sh.Ho(), sh.Wo(), fn);
  return out;
}

}  // namespace convtune
