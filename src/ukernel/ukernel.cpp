// Microkernel sizes, the naming scheme and the offline space (000 §4.1).
#include "convtune/ukernel/ukernel.h"

#include <cstdio>
#include <tuple>

#include <fmt/format.h>

#include "convtune/core/isa.h"
#include "convtune/core/shape.h"

namespace convtune {

bool UkSizes::operator<(const UkSizes& o) const {
  return std::tie(dw, k, c, w, h, r, s) < std::tie(o.dw, o.k, o.c, o.w, o.h, o.r, o.s);
}

bool fence_fits(TapFence f, const UkSizes& u) {
  switch (f) {
    case TapFence::none: return true;
    case TapFence::r: return u.r >= 2;
    case TapFence::s: return int64_t(u.r) * u.s >= 2;
  }
  return false;
}

std::string fence_text(TapFence f) { return f == TapFence::r ? "F(r)" : f == TapFence::s ? "F(s)" : ""; }

bool fence_from_text(const std::string& text, TapFence* f) {
  for (TapFence x : {TapFence::r, TapFence::s})
    if (text == fence_text(x)) {
      *f = x;
      return true;
    }
  return false;
}

std::string sizes_text(const UkSizes& u) {
  return fmt::format("k{}c{}w{}h{}r{}s{}", u.k, u.c, u.w, u.h, u.r, u.s);
}

std::string ukernel_name(const UkSizes& u, const std::string& isa) {
  return (u.dw ? "ct_dwkernel_" : "ct_ukernel_") + sizes_text(u) + "__" + isa;
}

bool parse_ukernel_name(const std::string& name, UkSizes* u, std::string* isa) {
  const bool dw = name.rfind("ct_dwkernel_", 0) == 0;
  const std::string prefix = dw ? "ct_dwkernel_" : "ct_ukernel_";
  if (name.rfind(prefix, 0) != 0) return false;
  size_t sep = name.find("__", prefix.size());
  if (sep == std::string::npos || sep + 2 >= name.size()) return false;
  std::string sizes = name.substr(prefix.size(), sep - prefix.size());
  UkSizes v;
  int consumed = 0;
  if (std::sscanf(sizes.c_str(), "k%dc%dw%dh%dr%ds%d%n", &v.k, &v.c, &v.w, &v.h, &v.r, &v.s,
                  &consumed) != 6 ||
      consumed != int(sizes.size()))
    return false;
  if (v.k < 1 || v.c < 1 || v.w < 1 || v.h < 1 || v.r < 1 || v.s < 1) return false;
  if (sizes_text(v) != sizes) return false;  // no leading zeros or signs
  v.dw = dw;
  *u = v;
  *isa = name.substr(sep + 2);
  return true;
}

namespace {

bool contains(const std::vector<int>& v, int x) {
  for (int y : v)
    if (y == x) return true;
  return false;
}

// 000 §4.1: w*h*k accumulators and r*s*c*k weight vectors counted as registers.
bool paper_admits(const IsaSpace& sp, const UkSizes& u) {
  if (u.dw) return false;
  if (u.k < 1 || u.c < 1 || u.w < 1 || u.h < 1) return false;
  if (u.k > sp.max_unroll || u.c > sp.max_unroll || u.w > sp.max_unroll || u.h > sp.max_unroll)
    return false;
  if (!contains(sp.rs_values, u.r) || !contains(sp.rs_values, u.s)) return false;
  if (sp.rs_square_when_both_above_1 && u.r > 1 && u.s > 1 && u.r != u.s) return false;
  int out = u.out_regs(), total = out + u.weight_regs();
  return out >= sp.out_min && out <= sp.out_max && total >= sp.total_min && total <= sp.total_max;
}

// The taps family: the emitted code (ukernel/codegen.cpp) loads the k weight
// vectors of one tap at a time and broadcasts one input element at a time, so
// only w*h*k + k + broadcast_registers registers are live however many taps
// r*s*c it reduces (AVX-512 reserves none and overcommits, CONTRACT.md), less
// the reread_weights vectors it may re-read at each use (one stays live);
// r*s*c only grows the code, hence max_taps.
bool taps_admits(const Isa& isa, const UkSizes& u) {
  const IsaTapsSpace& tp = isa.taps;
  if (u.dw) return false;
  if (u.k < 1 || u.w < 1 || u.h < 1) return false;
  if (u.k > tp.max_unroll || u.w > tp.max_unroll || u.h > tp.max_unroll) return false;
  if (u.r != u.s || !contains(tp.filters, u.r)) return false;
  if (!contains(tp.c_values, u.c)) return false;
  if (u.c != 1 && u.r * u.s * u.c > tp.max_taps) return false;
  const int out = u.out_regs();
  const int weights = std::max(1, u.k - tp.reread_weights);
  return out >= tp.out_min && out <= tp.out_max && out + weights + tp.broadcast_registers <= isa.vector_registers;
}

// The depthwise family (CONTRACT.md "Depthwise microkernels"): the emitted
// code keeps w*h*k accumulators and one tap's k weight vectors live (less
// reread_weights re-read at each use, one stays) and loads each input vector
// for its multiply-add, a register for it where input_registers is 1 (x86
// FMAs may fold the load; oneDNN's jit_uni_dw_conv_kernel keeps ur_w*ch
// accumulators and one weight vector the same way). c is 1: a depthwise
// output channel reads its own input channel only.
bool depthwise_admits(const Isa& isa, const UkSizes& u) {
  const IsaDepthwiseSpace& dp = isa.depthwise;
  if (!u.dw || u.c != 1) return false;
  if (u.k < 1 || u.w < 1 || u.h < 1) return false;
  if (u.k > dp.max_unroll || u.w > dp.max_unroll || u.h > dp.max_unroll) return false;
  if (!contains(dp.rs_values, u.r) || !contains(dp.rs_values, u.s)) return false;
  const int out = u.out_regs();
  const int weights = std::max(1, u.k - dp.reread_weights);
  return out >= dp.out_min && out <= dp.out_max && out + weights + dp.input_registers <= isa.vector_registers;
}

}  // namespace

const std::vector<std::string>& ukernel_families() {
  static const std::vector<std::string> names{"paper", "taps"};
  return names;
}

bool family_admits(const Isa& isa, const std::string& family, const UkSizes& u) {
  if (family == "paper") return paper_admits(isa.space, u);
  if (family == "taps") return taps_admits(isa, u);
  if (family == "depthwise") return depthwise_admits(isa, u);
  return false;
}

std::string ukernel_family(const Isa& isa, const UkSizes& u) {
  if (u.dw) return depthwise_admits(isa, u) ? "depthwise" : "";
  for (const std::string& f : ukernel_families())
    if (family_admits(isa, f, u)) return f;
  return "";
}

bool ukernel_admitted(const Isa& isa, const UkSizes& u) { return !ukernel_family(isa, u).empty(); }

bool depthwise_shape(const Shape& shape) { return shape.depthwise() && shape.Kg() == 1; }

std::vector<UkSizes> enumerate_ukernels(const Isa& isa, const std::string& family) {
  std::vector<UkSizes> all;
  auto add = [&](const UkSizes& u) {
    if (ukernel_family(isa, u) == family) all.push_back(u);
  };
  if (family == "paper") {
    const int m = isa.space.max_unroll;
    for (int r : isa.space.rs_values)
      for (int s : isa.space.rs_values)
        for (int k = 1; k <= m; ++k)
          for (int c = 1; c <= m; ++c)
            for (int w = 1; w <= m; ++w)
              for (int h = 1; h <= m; ++h) add(UkSizes{k, c, w, h, r, s});
  } else if (family == "taps") {
    const int m = isa.taps.max_unroll;
    for (int f : isa.taps.filters)
      for (int k = 1; k <= m; ++k)
        for (int c : isa.taps.c_values)
          for (int w = 1; w <= m; ++w)
            for (int h = 1; h <= m; ++h) add(UkSizes{k, c, w, h, f, f});
  } else if (family == "depthwise") {
    const int m = isa.depthwise.max_unroll;
    for (int r : isa.depthwise.rs_values)
      for (int s : isa.depthwise.rs_values)
        for (int k = 1; k <= m; ++k)
          for (int w = 1; w <= m; ++w)
            for (int h = 1; h <= m; ++h) add(UkSizes{k, 1, w, h, r, s, true});
  }
  return all;
}

std::vector<UkSizes> enumerate_ukernels(const Isa& isa) {
  std::vector<UkSizes> all;
  for (const std::string& f : ukernel_families()) {
    std::vector<UkSizes> some = enumerate_ukernels(isa, f);
    all.insert(all.end(), some.begin(), some.end());
  }
  return all;
}

}  // namespace convtune
