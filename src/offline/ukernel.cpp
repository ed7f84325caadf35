// Microkernel sizes, the naming scheme and the offline space (000 §4.1).
#include "convtune/offline/ukernel.h"

#include <cstdio>
#include <tuple>

#include <fmt/format.h>

#include "convtune/core/isa.h"

namespace convtune {

bool UkSizes::operator<(const UkSizes& o) const {
  return std::tie(k, c, w, h, r, s) < std::tie(o.k, o.c, o.w, o.h, o.r, o.s);
}

std::string sizes_text(const UkSizes& u) {
  return fmt::format("k{}c{}w{}h{}r{}s{}", u.k, u.c, u.w, u.h, u.r, u.s);
}

std::string ukernel_name(const UkSizes& u, const std::string& isa) {
  return "ct_ukernel_" + sizes_text(u) + "__" + isa;
}

bool parse_ukernel_name(const std::string& name, UkSizes* u, std::string* isa) {
  const std::string prefix = "ct_ukernel_";
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
  *u = v;
  *isa = name.substr(sep + 2);
  return true;
}

bool ukernel_admitted(const Isa& isa, const UkSizes& u) {
  const IsaSpace& sp = isa.space;
  auto in_rs = [&](int v) {
    for (int x : sp.rs_values)
      if (x == v) return true;
    return false;
  };
  if (u.k < 1 || u.c < 1 || u.w < 1 || u.h < 1) return false;
  if (u.k > sp.max_unroll || u.c > sp.max_unroll || u.w > sp.max_unroll || u.h > sp.max_unroll)
    return false;
  if (!in_rs(u.r) || !in_rs(u.s)) return false;
  if (sp.rs_square_when_both_above_1 && u.r > 1 && u.s > 1 && u.r != u.s) return false;
  int out = u.out_regs(), total = out + u.weight_regs();
  return out >= sp.out_min && out <= sp.out_max && total >= sp.total_min && total <= sp.total_max;
}

std::vector<UkSizes> enumerate_ukernels(const Isa& isa) {
  std::vector<UkSizes> all;
  const int m = isa.space.max_unroll;
  for (int r : isa.space.rs_values)
    for (int s : isa.space.rs_values)
      for (int k = 1; k <= m; ++k)
        for (int c = 1; c <= m; ++c)
          for (int w = 1; w <= m; ++w)
            for (int h = 1; h <= m; ++h) {
              UkSizes u{k, c, w, h, r, s};
              if (ukernel_admitted(isa, u)) all.push_back(u);
            }
  return all;
}

}  // namespace convtune
