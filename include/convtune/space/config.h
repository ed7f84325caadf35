#pragma once
// The configuration language of 000 §3.3: a list of specifiers from the
// outermost loop inwards.
//
//   R(d)                      outer loop over d, count = what remains (at most once per d)
//   T(n,d)                    tile loop that iterates exactly n times along d
//   U(n,d) / U(a,h)           fully unrolled loop of n iterations (register tile);
//                             U(a,h) takes its size from the enclosing lambda_seq
//   V(k)                      vectorised loop of `lanes` iterations, innermost only
//   Lseq(h,[(a1,v1),(a2,v2)]) 000's lambda_seq_h alpha.[(a1,v1),(a2,v2)]: a1 tiles
//                             with alpha=v1 followed by a2 tiles with alpha=v2
//   P(n,d)                    parallel tile loop: like T(n,d), n iterations along d,
//                             run by n OpenMP threads, one iteration each
//   P(n,d,t)                  the same n iterations run by t threads, 2 <= t < n
//
// P(n,d) (beyond 000: issue 12). The code is `#pragma omp parallel for
// schedule(static) num_threads(n)`: exactly n threads, each runs one
// iteration (a contiguous 1/n of the dimension), so the configuration text
// fixes the thread count. Rules: only on n, k, h, w (never on the reduction
// dimensions c, r, s: every output is written by one thread only); above the
// T(n,c) + microkernel block and above any Lseq (not inside one of its
// branches); at most two P, and two must be adjacent: they become one
// `collapse(2)` loop of n1*n2 threads (e.g. [P(2,k), P(2,h), ...] on 4 cores).
// P(1,d) is a degenerate loop (no code, no thread).
// P(n,d,t): when no loop count along n, k, h or w has a factor of the thread
// count (yolo9000-23: Ho = Wo = 17, 1767 k vectors), the n iterations are
// split over t threads by `schedule(static) num_threads(t)`: contiguous
// chunks of ceil(n/t) or floor(n/t) iterations, as oneDNN's balance211
// splits work. The loop bounds stay constants, so border variants are
// chosen as for T. t = n is written P(n,d). In a collapse(2) pair the
// threads multiply and the n1*n2 iterations are split over them.
// Generated code with a P
// needs -fopenmp (GeneratedKernel::cflags); without it the pragma is ignored
// and the same code runs correctly on one thread.
//
// F(r) / F(s) (beyond 000): the last element, after V(k), when present: a
// compiler fence between the microkernel's filter rows (F(r)) or between all
// its taps (F(s)); see TapFence in ukernel/ukernel.h. It needs taps in the
// microkernel: U(n,r) with n >= 2 for F(r), more than one tap for F(s). It
// changes the code GCC emits, never the result.
//
// Pf(w) (beyond 000; issue 11): last of all, after V(k) and any fence: the
// calls prefetch the weights the next iteration of the innermost k or c loop
// above the microkernel will read, each call a share of that block spread
// over its c steps (codegen/conv.cpp plan_prefetch). A block's calls find it in cache
// instead of stalling on it (as on resnet18-12: 9.4 MB of weights from L3,
// read in bursts by the first of 7 columns).
// That loop must be a T or R (not a P: its next iteration is another thread's),
// with no P below it (its calls count their share in one variable).
//
// Pf(o) (beyond 000; issue 11): after Pf(w) if both: every call prefetches
// its own output block a fixed number of multiply-adds before the end of its
// reduction (the ISA's prefetch.output_ahead_fmas), so the stores that follow
// find their lines in L1 instead of waiting on them (CONTRACT.md "Prefetch").
// A tuned switch, not a rule: timed in one process, it makes some kernels
// a percent or so faster and others about as much slower.
// Any configuration may take it.
//
// Nt(o) (beyond 000; issue 11): last of all, after Pf(o) if both: the call
// that completes an output block's reduction (its last visit, as for the
// epilogue) writes it with non-temporal stores (the ISA's store_stream), so an
// output larger than L2 is not first read for ownership and does not evict
// the input and weights. Vectors whose address is not aligned
// to the vector (an unaligned user buffer, K not a multiple of the lanes) and
// the K tail store as before; one store fence ends the call (each thread's
// share, under P). A tuned switch: timed alone, it speeds up a kernel whose
// output is well beyond L2 by a few %, but under tune's protocol it loses on
// most layers (space.cpp): an output found in cache by ordinary stores,
// written again or read next by the caller, loses.
//
// Flat(hw) (beyond 000; issue 11): first of all, before the loops: the
// configuration tiles the output as one column of Ho*Wo pixels (h runs over
// them in NHWC order, w is 1), as oneDNN's 1x1 kernels treat the spatial
// dimensions as one (jit_avx2_1x1_conv_kernel_f32's bcast_dim = oh*ow). Only
// for 1x1 filters without padding (flat_eligible), where neighbouring
// outputs share no input: the pixel count then factors in ways neither side
// does (7x7 = 49 = 15*3 + 2*2 for an Lseq of 12-accumulator blocks), and a
// block may run across the end of an output row. At stride 1 the input is
// that column as well; at stride > 1 a block that crosses a row reads its
// rows through a variant with their own input offsets (CONTRACT.md "Flat").
//
// Wino(2) (beyond 000; issue 11): first of all, before the loops: the
// convolution runs as Winograd F(2x2,3x3) (Lavin and Gray 2016; NNPACK's and
// oneDNN's "non-fused" order): the input is transformed tile by tile (each
// 2x2 output block reads a 4x4 input patch, B^T d B), then 16 independent
// GEMMs, one per point of the 4x4 transform, multiply the tiles' C channels by
// the transformed weights (packed once by _pack: G g G^T), then the output
// transform (A^T m A) writes each 2x2 block with the epilogue. The loops tile
// those GEMMs: wino_view(shape) is a 1x1 convolution over one column of
// N*ceil(Ho/2)*ceil(Wo/2) tiles, the same loops and microkernels as Flat(hw).
// 2.25x fewer multiply-adds than the direct sum of a 3x3 filter, at a
// different rounding (it stays within the one output check's tolerance).
// At stride 2 the transform is F(2x2,3x3)'s polyphase form (5x5 patches, 25
// GEMMs against 36 direct products; wino_transform.h).
// Only for 3x3 filters at stride 1 or 2 (wino_eligible); no P loops: Wino(2,b,t)
// runs the blocks on t threads (View::threads). The
// tail's switches act on the GEMMs: Nt(o) streams their output to the scratch.
// Wino(2,b) is the fused order (NNPACK's "block-based" one): the input
// transform, the 16 GEMMs and the output transform run b tiles at a time, so
// the transformed tiles stay in cache instead of streaming through memory; b
// is fewer than the N*ceil(Ho/2)*ceil(Wo/2) tiles, and the loops tile b of
// them. Where b does not divide the tiles the last block is short: its GEMMs
// still run b rows, and the rows past the last tile are dropped.
//
// g (beyond 000): the group loop of a grouped convolution (has_group_loop:
// groups > 1, not depthwise with Kg = 1). Only R(g), T(n,g) and P(n,g[,t])
// name it, above every other loop; the loops below tile one group's dense
// problem (group_view: K = Kg padded to the lanes, C = Cg), and each
// iteration moves the input by Cg channels, the output by Kg and the
// weights by one group's packed block (codegen/conv.cpp), as oneDNN's
// grouped convolutions loop over g outside the per-group kernel
// (jit_avx512_common_conv_kernel's g loop in its driver). With groups = 1
// no configuration names g.
//   [P(2,g), R(g), T(7,h), T(2,w), T(3,s), T(3,r), T(4,c), U(7,w), U(2,h), V(k)]
//   (K=64,C=64,H=14,R=3,groups=16 on 8 lanes: Kg = Cg = 4, the K tail masked)
//
// Lanes(g) (beyond 000): first of all, before the loops: a grouped shape
// whose groups have Cg = Kg channels, 1 < Cg < lanes and Cg dividing the
// lanes (lanes_eligible), tiled as the depthwise shape of its channels
// (lanes_view): lanes/Cg groups in each vector, the depthwise microkernels,
// no g loop, c of 1; each call's c steps are its group's Cg inputs, the
// input vector's lanes moved by the ISA's shuffle (CONTRACT.md "Lanes(g)").
// Under the g loop such a group fills Kg/lanes of each vector (a quarter
// for ResNeXt-50's 4 per group on AVX-512).
//   [Lanes(g), P(2,k), T(2,k), T(14,h), T(2,w), T(1,c), U(3,s), U(3,r), U(7,w), V(k)]
//
// Stable text form (print/parse round-trips exactly):
//   [T(16,k), Lseq(h,[(2,11),(1,12)]), T(17,w), T(3,s), T(3,r), T(2,w), T(256,c), U(a,h), U(2,k), V(k)]
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "convtune/core/shape.h"
#include "convtune/ukernel/ukernel.h"

namespace convtune {

/// Loop dimensions of a convolution. h and w are *output* rows and columns;
/// g is the group loop of a grouped convolution (appended, so the others keep
/// their indices).
enum class Dim { n, k, c, h, w, r, s, g };
constexpr int kNumDims = 8;
/// Every dimension, in enum order (kDims[i] is Dim(i)).
inline constexpr Dim kDims[kNumDims] = {Dim::n, Dim::k, Dim::c, Dim::h, Dim::w, Dim::r, Dim::s, Dim::g};
char dim_char(Dim d);                 // 'n','k','c','h','w','r','s','g'
bool dim_from_char(char ch, Dim* d);  // false if ch is not a dimension
/// Whether a configuration of the shape has a group loop g: groups > 1, but
/// not depthwise with one output per group (that family tiles every channel
/// in the vector lanes, without g).
bool has_group_loop(const Shape& s);
/// One group's dense problem, what the loops below g tile: C = Cg, K = Kg,
/// groups 1; everything else unchanged.
Shape group_view(const Shape& s);
/// The shape the loops below any g loop tile: group_view(s) under a group
/// loop, else s.
inline Shape loop_shape(const Shape& s) { return has_group_loop(s) ? group_view(s) : s; }
/// The problem size of a dimension (k uses the padded K). Under a group loop
/// k and c are one group's (padded Kg, Cg) and g is the group count; without
/// one g is 1.
int64_t dim_size(const Shape& s, Dim d, int64_t lanes);

enum class SpecKind { R, T, U, V, Lseq, P };

struct Spec {
  SpecKind kind = SpecKind::T;
  Dim dim = Dim::k;
  int64_t factor = 1;  // T, U, P: the count; unused for R, V, Lseq
  int64_t threads = 0;  // P only: its thread count when below the count (P(n,d,t)); 0: one per iteration
  bool alpha = false;  // U(a,h): the size comes from the enclosing Lseq
  // Lseq only: {(repeats a1, alpha value v1), (a2, v2)}.
  std::array<std::pair<int64_t, int64_t>, 2> seq{};

  bool operator==(const Spec& o) const;
  bool operator!=(const Spec& o) const { return !(*this == o); }
};

/// What a configuration's loops tile (beyond 000): the convolution's own
/// rows, Flat(hw)'s column of output pixels, or Wino(2)'s column of 2x2
/// tiles; printed first, before the loops.
struct View {
  // lanes: Lanes(g), the groups in the vector lanes (lanes_eligible).
  enum Kind { rows, flat, wino, lanes };
  Kind kind = rows;
  // Wino(2,b): the transforms and the 16 GEMMs run b tiles at a time (the
  // fused order), so the scratch is a block's, not the image's; 0: all tiles
  // in one block (Wino(2), the non-fused order).
  int64_t block = 0;
  // Wino(2,b,t): t threads take the blocks, a contiguous share each, every
  // thread with its own scratch (issue 12 for Winograd: a P loop inside the
  // GEMMs would start a team per GEMM call, 16 per block). 1: the caller's thread.
  int64_t threads = 1;
  bool operator==(const View& o) const { return kind == o.kind && block == o.block && threads == o.threads; }
  bool operator!=(const View& o) const { return !(*this == o); }
};

struct Config {
  std::vector<Spec> specs;  // outermost first
  TapFence fence = TapFence::none;  // F(r) / F(s): printed after V(k), not a loop
  bool prefetch = false;            // Pf(w): printed after any fence, not a loop
  bool prefetch_out = false;        // Pf(o): printed after Pf(w), not a loop
  bool stream_out = false;          // Nt(o): printed last, not a loop
  View view;                        // Flat(hw), Wino(2), Wino(2,b): printed first; the loops tile view_shape
  bool flat() const { return view.kind == View::flat; }
  bool wino() const { return view.kind == View::wino; }
  bool lanes() const { return view.kind == View::lanes; }
  bool operator==(const Config& o) const {
    return specs == o.specs && fence == o.fence && prefetch == o.prefetch && prefetch_out == o.prefetch_out &&
           stream_out == o.stream_out && view == o.view;
  }
  bool operator!=(const Config& o) const { return !(*this == o); }
};

/// Whether Flat(hw) applies: a 1x1 filter without padding and more than one output column.
bool flat_eligible(const Shape& s);
/// The shape a Flat(hw) configuration tiles: Ho*Wo output rows of one column,
/// 1x1, stride 1, no padding; N, K, C and the name unchanged. At stride 1 its
/// input is the shape's input in memory as well; at stride > 1 only the
/// output is (codegen maps each output pixel to its input pixel).
Shape flat_view(const Shape& s);
/// Whether Wino(2) applies: a 3x3 filter at stride 1 or 2 (any padding, any C and K).
bool wino_eligible(const Shape& s);
/// Winograd F(2x2,3x3)'s 2x2 output tiles of one image: ceil(Ho/2) * ceil(Wo/2).
int64_t wino_tiles(const Shape& s);
/// The GEMM a Wino(2) configuration tiles (one of the 16 or 25): a 1x1 convolution
/// over one column of `block` tiles (0: all N * wino_tiles(s)), stride 1, no
/// padding; K, C and the name unchanged, N = 1.
Shape wino_view(const Shape& s, int64_t block = 0);
/// Wino(2,b)'s blocks: ceil(N * wino_tiles(s) / b), the last one short where
/// b does not divide the tiles; 1 for Wino(2) (b = 0).
int64_t wino_blocks(const Shape& s, int64_t block);
/// Whether Lanes(g) applies at `lanes` f32 lanes: groups of Cg = Kg channels,
/// 1 < Cg < lanes and Cg dividing the lanes (ResNeXt's 4 and 8 per group).
bool lanes_eligible(const Shape& s, int64_t lanes);
/// The shape a Lanes(g) configuration tiles: the depthwise shape of the same
/// K = C channels (groups = K), whose channel k stands for output k and its
/// group's Cg inputs; the microkernel's c steps run over those Cg.
Shape lanes_view(const Shape& s);
/// The shape a view's loops cover: s, flat_view(s), wino_view(s, block) or lanes_view(s).
Shape view_shape(const View& v, const Shape& s);
/// The shape whose dimensions a configuration's loops cover.
inline Shape tiled_shape(const Config& c, const Shape& s) { return view_shape(c.view, s); }

/// Canonical one-line text form (see the header comment).
std::string to_string(const Spec& s);
/// "" (rows), "Flat(hw)", "Wino(2)", "Wino(2,b)", "Wino(2,b,t)" (t >= 2) or "Lanes(g)".
std::string to_string(const View& v);
std::string to_string(const Config& c);

/// Parses the text form. Throws Error ("config: at column N: expected ...").
Config parse_config(const std::string& text);

/// Microkernel sizes described by the U/V suffix of a configuration; for a
/// configuration with Lseq, h is the first alternative (v1) and h2 the second.
struct UkSizes;

/// Threads a configuration runs on: the product of its P loops' threads (1 without P).
int64_t config_threads(const Config& c);

/// Threads of one P loop: t of P(n,d,t), else n.
inline int64_t spec_threads(const Spec& s) { return s.threads > 0 ? s.threads : s.factor; }

/// The loop Pf(w) prefetches for: the index of the innermost T or R over k
/// or c above the microkernel's T(n,c) (T(1,d) makes no loop), or -1 when
/// there is none, it is a P, or a P lies below it.
int prefetch_loop(const Config& c);

/// Checks a configuration against a shape and the vector length:
///  - exactly one V, the innermost specifier, on k;
///  - the U specifiers form the block directly above V, in the order
///    s, r, c, w, h, k, each dimension at most once;
///  - the specifier directly above the U block is T(n,c) (000 §4.2: c first
///    above the microkernel);
///  - at most one Lseq, on h, above the T(n,c), with two alternatives, and
///    then U(a,h) must be in the microkernel; U(a,h) without an Lseq is an error;
///  - R(d) at most once per d;
///  - P(n,d) only on n, k, h, w; above any Lseq; at most two, and two adjacent;
///  - divisibility: along every dimension the product of the T/P/U factors
///    (times lanes for k; times a1*v1+a2*v2 instead of U(a,h) for h) equals
///    the problem size, or divides it when the dimension has an R;
///  - all counts >= 1;
///  - g only on a shape with has_group_loop, only in R, T and P, and every
///    g loop above every other loop;
///  - F(r) only with U(n,r), n >= 2, in the microkernel; F(s) only with more
///    than one tap in it;
///  - Pf(w) only with a prefetch_loop;
///  - Flat(hw) only on a flat_eligible shape; the divisibility rules then
///    apply to flat_view(shape) (one output column: w is covered by 1);
///  - Wino(2) only on a wino_eligible shape, without P; Wino(2,b) with b
///    below the tiles' count (the last block short where b does not divide
///    them); Wino(2,b,t) with t no more than wino_blocks(shape, b); the
///    divisibility rules then apply to wino_view(shape, b).
/// Throws Error with a one-line message naming the rule and the dimension.
void validate_config(const Config& c, const Shape& shape, int64_t lanes);

}  // namespace convtune
