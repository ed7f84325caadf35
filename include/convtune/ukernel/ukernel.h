#pragma once
// Microkernel sizes, names and the offline space (000 §4.1).
// The contract every generated microkernel follows is microkernels/CONTRACT.md.
#include <cstdint>
#include <string>
#include <vector>

namespace convtune {

struct Isa;
struct Shape;

/// Unroll factors of [U_s,s U_r,r U_c,c U_w,w U_h,h U_k,k V_k]; k counts vectors.
/// `dw`: a depthwise microkernel (CONTRACT.md "Depthwise microkernels"):
/// channels in the lanes, each tap a vector load of the input at the
/// block's channels times that tap's weight vector; c is 1 and k counts
/// channel vectors. The same unroll factors name another microkernel then.
struct UkSizes {
  int k = 1, c = 1, w = 1, h = 1, r = 1, s = 1;
  bool dw = false;
  bool operator==(const UkSizes& o) const {
    return k == o.k && c == o.c && w == o.w && h == o.h && r == o.r && s == o.s && dw == o.dw;
  }
  bool operator!=(const UkSizes& o) const { return !(*this == o); }
  bool operator<(const UkSizes& o) const;
  /// Output accumulators in vector registers: w*h*k.
  int out_regs() const { return w * h * k; }
  /// Weight vectors loaded per c step: r*s*c*k.
  int weight_regs() const { return r * s * c * k; }
  /// Vector FMAs in one unrolled block: w*h*k*r*s*c.
  int64_t fmas() const { return int64_t(w) * h * k * r * s * c; }
  /// Same sizes ignoring h (the class key, 000 §4.1).
  bool same_class(const UkSizes& o) const {
    return k == o.k && c == o.c && w == o.w && r == o.r && s == o.s && dw == o.dw;
  }
};

/// A compiler fence between the taps of a microkernel (beyond 000; the
/// configuration's F(r) / F(s)). Without one, GCC keeps an input broadcast
/// live from one tap to every later tap that reads the same pixel; with many
/// accumulators that spills them (k2c1w2h6r3s3: 76 stack
/// accesses per 216 FMAs). A fence makes each tap reload its broadcasts:
///   r: before the first tap of every (c, r) row (broadcasts shared across s only);
///   s: before every tap.
/// The code stays correct with any choice; only its speed differs, so the
/// online search tunes it.
enum class TapFence { none, r, s };
/// True when a microkernel of these sizes can take the fence: F(r) needs
/// r >= 2 (rows to stand between), F(s) more than one tap.
bool fence_fits(TapFence f, const UkSizes& u);
/// "F(r)", "F(s)" (the configuration text), "" for none.
std::string fence_text(TapFence f);
/// Inverse of fence_text for "F(r)" and "F(s)"; false for any other text.
bool fence_from_text(const std::string& text, TapFence* f);

/// "k2c1w12h1r1s1" (the same for a depthwise one: the configuration's U sizes)
std::string sizes_text(const UkSizes& u);
/// "ct_ukernel_k2c1w12h1r1s1__avx512" (XNNPACK-style: shape, "__", ISA);
/// "ct_dwkernel_k2c1w4h1r3s3__avx512" for a depthwise one, so the two never collide.
std::string ukernel_name(const UkSizes& u, const std::string& isa);
/// Inverse of ukernel_name; returns false if the name is not one.
bool parse_ukernel_name(const std::string& name, UkSizes* u, std::string* isa);

// A family is an admission rule over sizes (microkernels/CONTRACT.md, "Space
// constraints per ISA"); the code of a microkernel depends on its sizes only.
//   "paper": 000 §4.1's bounds (Isa::space).
//   "taps":  a whole square filter reduced in registers, counting the
//            registers the emitted code keeps live (Isa::taps).
//   "depthwise": depthwise microkernels (UkSizes::dw), channels in the lanes
//            (Isa::depthwise); the other families admit none of them.

/// The dense family names, in the order that decides a microkernel's family.
/// "depthwise" is apart: only it admits a UkSizes::dw. `convtune profile`
/// measures all three (profile.h profiled_families).
const std::vector<std::string>& ukernel_families();
/// True when the family's rule admits the sizes (false for an unknown family).
bool family_admits(const Isa& isa, const std::string& family, const UkSizes& u);
/// The first family in ukernel_families() that admits the sizes, or "".
std::string ukernel_family(const Isa& isa, const UkSizes& u);

/// Every microkernel some dense family admits, in a stable order: each family's
/// (enumerate_ukernels(isa, family)) in the order of ukernel_families().
std::vector<UkSizes> enumerate_ukernels(const Isa& isa);
/// The microkernels whose family (ukernel_family) is `family`, in a stable order.
std::vector<UkSizes> enumerate_ukernels(const Isa& isa, const std::string& family);
/// True when some family admits the sizes.
bool ukernel_admitted(const Isa& isa, const UkSizes& u);

/// Whether a shape's kernels are built of depthwise microkernels: depthwise
/// with one output channel per group (groups = C = K). A channel multiplier
/// (Kg() > 1) and other groupings are not.
bool depthwise_shape(const Shape& shape);

}  // namespace convtune
