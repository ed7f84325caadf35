// 001 §4.1: SConv's Convolution Slicing Analysis, mapped into our space.
// A CSA tile is what one microkernel call covers (N_win = w*h output
// windows, N_f = k*lanes filters) over N_c channels and the filter taps the
// accumulators stay in registers for. SConv's microkernel holds them over the
// full R x S filter; ours holds them over the c reuse loop only (000 §4.2),
// with the R/r x S/s filter loops above it, so a call covers r x s taps and
// Eq. 1 uses r*s, not R*S. Keeping R*S there would make N_c 9x too small on
// 3x3 layers: accumulators reloaded every few FMAs, far below the best the
// searches find. N_c, K2 and K3 come from the L1/L2/L3
// capacity constraints (Eq. 1-5); input- or weight-stationary from the cost
// model (Eq. 6-14).
// Our space has no partial tiles (000 §3.2), so every count is the largest
// *divisor* that fits, not the largest value plus "extra" tiles.
#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "convtune/core/divisors.h"
#include "convtune/core/error.h"
#include "convtune/search/search.h"

namespace convtune {

namespace {

constexpr double kAlpha = 0.8, kBeta = 0.8, kGamma = 0.8;  // 001 Eq. 2, 4, 5 (the values)
constexpr double kLine = 64;                               // cache line (bytes)
constexpr double kCostL2 = 10, kCostL3 = 30, kCostDram = 300;  // cycles, SConv CSA.cpp defaults
constexpr double kDt = 4;                                  // float32

// The largest divisor of n for which fits() holds, else 1.
template <typename F>
int64_t largest(int64_t n, F fits) {
  const std::vector<int64_t> ds = divisors(n);
  for (auto d = ds.rbegin(); d != ds.rend(); ++d)
    if (fits(*d)) return *d;
  return 1;
}

struct Schedule {
  bool input_stationary = true;
  int64_t k2 = 1, k3 = 1;
  double cost = 0;
};

struct Plan {
  size_t choice = 0;
  ParOption par{Dim::n, 1};  // issue 12: the outermost P (count 1: none)
  int64_t nc = 1, nwin = 1, nf = 1, n_in = 1, n_fs = 1;
  double in = 0, fs = 0, out = 0;
  bool l1_fits = true;
  Schedule is, ws;
  const Schedule& best() const { return ws.cost < is.cost ? ws : is; }
};

// Eq. 4-5 and 6-14 for one schedule. X is the stationary tile (IN for IS),
// Y the streamed one; the WS equations swap the two (001 §4.1.1).
Schedule schedule(bool is, const Plan& p, int64_t channel_sets, double l2, double l3) {
  Schedule s;
  s.input_stationary = is;
  const double sx = is ? p.in : p.fs, sy = is ? p.fs : p.in;
  const int64_t nx = is ? p.n_in : p.n_fs, ny = is ? p.n_fs : p.n_in;
  s.k2 = largest(ny, [&](int64_t k2) { return sx + double(k2) * (sy + p.out) <= l2 * kBeta; });  // Eq. 4
  s.k3 = largest(nx, [&](int64_t k3) {
    return double(k3) * sx + double(s.k2) * sy + double(s.k2 * k3) * p.out <= l3 * kGamma;  // Eq. 5
  });
  const double sets = double(channel_sets);
  const double dram1 = sets * (double(p.n_in) * p.in + double(p.n_fs) * p.fs) / kLine;              // Eq. 8
  const double y_fitmin = std::min(double(ny) / double(s.k2) - 1, 1.0);                              // Eq. 9
  const double x_fit = double(nx) / double(s.k3) - 1;                                                // Eq. 10
  const double dram2 = sets * y_fitmin * x_fit * double(ny) * sy / kLine;                            // Eq. 11
  const double y_fit = double(ny) / double(s.k2) - 1;                                                // Eq. 12
  const double l3_loads = sets * y_fit * double(nx) * sx / kLine;                                    // Eq. 13
  const double l2_loads = sets * double(nx - 1) * double(ny) * sy / kLine;                           // Eq. 14
  s.cost = kCostDram * (dram1 + dram2) + kCostL3 * l3_loads + kCostL2 * l2_loads;                    // Eq. 6, 7
  return s;
}

// Issue 12: SConv splits the work over cores along the dimension with the
// most independent work; here the P option with the most threads, then the
// most tiles left along its dimension (each thread then runs CSA on its share).
ParOption split(const Space& space, const UkChoice& ch) {
  ParOption best{Dim::n, 1};
  if (!space.parallel) return best;
  // Most threads; then one P before a nested pair (one dimension split, as
  // SConv does); then the most tiles left along the (outer) split dimension.
  auto key = [&](const ParOption& o) {
    return std::make_tuple(o.threads(), o.count2 == 1, space.remaining(ch, o.dim));
  };
  for (const ParOption& o : space.parallel_options(ch))
    if (key(o) > key(best)) best = o;
  return best;
}

Spec tile(Dim d, int64_t f) {
  Spec s;
  s.kind = SpecKind::T;
  s.dim = d;
  s.factor = f;
  return s;
}

// The nest of the plans below, in their order: the P split, the `outer`
// tiles, the pair's Lseq, the `inner` tiles, the r and s tiles the
// microkernel leaves, the microkernel with `reuse` steps of C (factors of 1
// left out); the fence the profile measured fastest, and Pf(w) where asked
// and the nest has a loop to prefetch for.
Config nest(const Space& space, const UkChoice& ch, const ParOption& par, const std::vector<Spec>& outer,
            const std::vector<Spec>& inner, int64_t reuse, bool prefetch) {
  Config c;
  for (const Spec& ps : outer_specs(space, ch, par)) c.specs.push_back(ps);
  auto add = [&](const std::vector<Spec>& tiles) {
    for (const Spec& t : tiles)
      if (t.factor > 1) c.specs.push_back(t);
  };
  add(outer);
  if (ch.pair) c.specs.push_back(lseq_spec(ch));
  add(inner);
  // The taps here unless a plan placed them higher (taps_outside).
  auto placed = [&](Dim d) {
    return std::any_of(c.specs.begin(), c.specs.end(), [&](const Spec& t) { return t.kind == SpecKind::T && t.dim == d; });
  };
  for (Dim d : {Dim::r, Dim::s})
    if (!placed(d)) add({tile(d, space.remaining(ch, d))});
  for (const Spec& t : microkernel_specs(ch, reuse)) c.specs.push_back(t);
  c.fence = ch.fence;
  c.view = ch.view;
  c.prefetch = prefetch && prefetch_loop(c) >= 0;
  validate_config(c, space.shape, space.lanes);
  return c;
}

// CSA's channel sets are its outermost loop: every output tile is reloaded
// and stored C/N_c times (yolo9000-12: 16 times its 2.3 MB output). oneDNN's
// brgconv instead reduces the whole C (and the filter) under one output tile
// and streams the weights from L2. With the same microkernels that order
// can beat the descents from CSA's plan by several % (yolo9000-2, -4, -12),
// so the descents measure it too. Nest: the P
// split; k blocks whose weights fit L2 (beta as Eq. 4); the output tiles, h
// then w (the pair's rows last); the k tiles of a block; the taps the
// microkernel leaves; the whole C in the microkernel's reuse loop.
Config output_stationary(const Space& space, const UkChoice& ch, const ParOption& par, double l2) {
  const Shape sh = loop_shape(space.shape);  // one group's problem under a g loop
  auto share = [&](Dim d) { return space.remaining(ch, d) / par.on(d); };
  const double block_bytes =
      double(ch.uk.k * space.lanes) * double(dim_size(space.shape, Dim::c, space.lanes)) * double(sh.R * sh.S) * kDt;
  const int64_t kin = largest(share(Dim::k), [&](int64_t f) { return double(f) * block_bytes <= l2 * kBeta; });
  return nest(space, ch, par,
              {tile(Dim::n, share(Dim::n)), tile(Dim::k, share(Dim::k) / kin), tile(Dim::h, share(Dim::h)),
               tile(Dim::w, share(Dim::w))},
              {tile(Dim::k, kin)}, space.remaining(ch, Dim::c), false);
}

// Where one k tile's weights over the whole C outgrow L1 (3x3 layers with C
// of 256 and more), each output-stationary call streams them from L2. oneDNN's
// brgconv blocks the input channels as well; here the C loop goes above the
// output tiles in blocks whose weights fit L1, the output tiles of one k tile
// stay in L2 across the blocks, and Pf(w) brings the next block in while the
// calls of this one run (config.h). On yolo9000-18 this plan with the
// search winner's microkernel, [T(16,k), T(32,c), T(17,w), Lseq(h,..),
// T(16,c), ...,Pf(w)], runs a few % ahead of that winner (the whole C under
// each call), where blocks of 8 channels gain nothing; resnet18-12's winner
// has the same form. Empty where the block would be the
// whole C or one k tile's output does not fit L2.
Config c_blocked(const Space& space, const UkChoice& ch, const ParOption& par, double l1, double l2) {
  const Shape sh = loop_shape(space.shape);  // one group's problem under a g loop
  auto share = [&](Dim d) { return space.remaining(ch, d) / par.on(d); };
  const double nf = double(ch.uk.k * space.lanes);
  const int64_t steps = space.remaining(ch, Dim::c);  // reuse steps of ch.uk.c channels
  const int64_t reuse = largest(steps, [&](int64_t r) { return nf * double(r * ch.uk.c * sh.R * sh.S) * kDt <= l1; });
  const double out_bytes = nf * double(share(Dim::h) * ch.h_extent() * share(Dim::w) * ch.uk.w) * kDt;
  if (reuse == steps || out_bytes > l2 * kBeta) return {};
  return nest(space, ch, par,
              {tile(Dim::n, share(Dim::n)), tile(Dim::k, share(Dim::k)), tile(Dim::c, steps / reuse),
               tile(Dim::h, share(Dim::h)), tile(Dim::w, share(Dim::w))},
              {}, reuse, true);
}

// A layer with few MACs per output (yolo9000-0: C = 3, 27 per output, a
// 38 MB output) is bound by its stores. A one-row microkernel holding all K
// stores w*K contiguous floats per call; CSA's pick there, k2w2h{5,6}, stores
// 2 pixels on each of 6 rows 68 KiB apart. k2c1w8h1r3s3 in this order comes
// near oneDNN there, well ahead of the descents from CSA's plan. Only for
// C*R*S <= 32 MACs per output, where a 64-byte output vector takes at most
// 16 cycles of FMAs: on resnet18-1 (147) and yolo9000-2 (288) the k4 one-row
// kernels this would pick run below half the peak.
// The widest such whole-filter choice, or -1.
int streaming_choice(const Space& space) {
  const Shape sh = loop_shape(space.shape);  // one group's problem under a g loop
  if (dim_size(space.shape, Dim::c, space.lanes) * sh.R * sh.S > 32) return -1;
  int best = -1;
  for (size_t i = 0; i < space.choices.size(); ++i) {
    const UkChoice& c = space.choices[i];
    if (c.pair || c.fallback || c.uk.h != 1 || int64_t(c.uk.k) * space.lanes != sh.K || c.uk.r != sh.R || c.uk.s != sh.S)
      continue;
    if (best < 0 || c.uk.w > space.choices[size_t(best)].uk.w) best = int(i);
  }
  return best;
}

// A depthwise layer (ukernel.h dw) is bound by moving its tensors. On one
// with many output pixels, 30-trial searches on MobileNet-v2 and
// EfficientNet-B0 ended on 2D blocks of 8 pixels (w2 x h4, w4 x h2) under
// the spatial tiles, the channel vectors inside them, on AVX2 and on AVX-512
// (bench/results/zen4-092264c-kinds-30); the largest tile that CSA's key
// picks, a 14-row column, ran at two thirds of their speed on AVX2. On
// 14x14 and 7x7 outputs the winners were larger blocks or those columns.
// The whole-filter block of at most 8 pixels, the squarest, the taller of
// two, for at least 28x28 outputs; on smaller ones (small_depthwise) of at
// most 14, the squarest, the wider of two; or -1.
// A Lanes(g) shape (config.h) takes the 8-pixel block among its Lanes(g)
// choices at any output size: its g loop's choices waste most lanes.
bool small_depthwise(const Space& space) {
  const Shape& sh = space.shape;
  return sh.depthwise() && !lanes_eligible(sh, space.lanes) && sh.Ho() * sh.Wo() < 28 * 28;
}

int depthwise_choice(const Space& space) {
  const Shape& sh = space.shape;
  const bool lanes = lanes_eligible(sh, space.lanes), small = small_depthwise(space);
  if (!lanes && !sh.depthwise()) return -1;
  const int64_t most = small ? 14 : 8;
  int best = -1;
  std::tuple<int64_t, int64_t, int64_t> best_key;
  for (size_t i = 0; i < space.choices.size(); ++i) {
    const UkChoice& c = space.choices[i];
    if (lanes && c.view.kind != View::lanes) continue;
    // A table without the family offers only the family's fallbacks (space.h), fine kernels all the same.
    if (c.pair || c.uk.k != 1 || c.uk.r != sh.R || c.uk.s != sh.S || c.uk.w * c.uk.h > most) continue;
    const std::tuple<int64_t, int64_t, int64_t> key{c.uk.w * c.uk.h, std::min(c.uk.w, c.uk.h), small ? c.uk.w : c.uk.h};
    if (best < 0 || key > best_key) {
      best = int(i);
      best_key = key;
    }
  }
  return best;
}

// The depthwise plan: the output-stationary order, except on outputs below
// 28x28 (small_depthwise), where the channel vectors go outermost, each one's
// whole plane under it. The channels-inside order there strides a call's
// pixels a whole row of channels apart: on MobileNet-v2's 14x14 layers
// (576 and 192 channels, 2 threads) the os plans ran at 0.6-0.9 of oneDNN and
// w7 x h2 blocks under the channel loop at 1.5-1.6. On 7x7 outputs single
// timings of either order spread too widely (0.6-1.4) to rank them; they
// take the same order.
Config depthwise_plan(const Space& space, const UkChoice& ch, const ParOption& par, double l2) {
  if (!small_depthwise(space)) return output_stationary(space, ch, par, l2);
  auto share = [&](Dim d) { return space.remaining(ch, d) / par.on(d); };
  return nest(space, ch, par,
              {tile(Dim::n, share(Dim::n)), tile(Dim::k, share(Dim::k)), tile(Dim::h, share(Dim::h)),
               tile(Dim::w, share(Dim::w))},
              {}, space.remaining(ch, Dim::c), false);
}

// The register block of brgemm_choice (below) among the choices `in` admits, with
// the most threads first (a Wino(2,b,t) view over one that runs alone), then
// a blocked Winograd view (Wino(2,b): a block's transformed tiles stay in
// cache, config.h) over the unblocked one.
template <typename F>
int register_block_choice(const Space& space, int registers, F in) {
  int best = -1;
  std::tuple<int64_t, bool, double, int, bool> best_key;
  for (size_t i = 0; i < space.choices.size(); ++i) {
    const UkChoice& c = space.choices[i];
    const int64_t rows = c.pair ? std::max(c.uk.h, c.uk2.h) : c.uk.h;
    if (!in(c) || c.fallback || c.uk.w * rows * c.uk.k + c.uk.k + 1 > registers) continue;
    const double px = double(c.uk.w * c.h_extent()) / double(c.pair ? c.a + c.b : 1), k = double(c.uk.k);
    const std::tuple<int64_t, bool, double, int, bool> key{split(space, c).threads(), c.view.block > 0,
                                                           k * px / (k + px), c.uk.c, !c.pair};
    if (best < 0 || key > best_key) {
      best = int(i);
      best_key = key;
    }
  }
  return best;
}

// oneDNN's 1x1 brgconv blocks its registers as bd_block pixels x ld_block2
// K vectors, the block that loads the fewest vectors per FMA, (bd + ld) /
// (bd * ld), with bd*ld accumulators, ld weight vectors and a broadcast in
// the register file (brgemm_utils.cpp). CSA's key takes the largest tile
// instead: k2 x h13 on yolo9000-19, 15 loads per 26 FMAs, where k4 x h6 loads
// 10 per 24. That k4 x h{6,5} pair over Flat(hw), the whole C in its reuse
// loop, runs a few % ahead of the searches' winners on yolo9000-9/-19 and
// resnet18-3. Only on 1x1 layers, where it was measured. A
// pair counts its larger part's registers and its mean pixels per call; ties
// go to the larger c step, then a single microkernel. The choice, or -1.
int brgemm_choice(const Space& space, int registers) {
  const Shape sh = loop_shape(space.shape);  // one group's problem under a g loop
  if (sh.R != 1 || sh.S != 1) return -1;
  return register_block_choice(space, registers, [](const UkChoice&) { return true; });
}

// A Winograd view (config.h Wino(2)) does 16 multiplies per 2x2 output tile
// where the direct loops do 36: on 3x3 layers at stride 1 it runs near twice
// the direct plans (resnet18-6), beyond what the FMA peak allows them. Its 16
// GEMMs are 1x1 convolutions over tile columns, so the register block is
// brgemm_choice's, among the view's choices. The choice, or -1.
int winograd_choice(const Space& space, int registers) {
  return register_block_choice(space, registers, [](const UkChoice& c) { return c.view.kind == View::wino; });
}

// A layer whose k tile's weights over the whole C and filter outgrow L2
// (DeepLabv3's ASPP: C = 2048, dilation 12, 4.7 MB per 64 filters) streams
// them from L3 in every call of the output-stationary plan and of the
// whole-filter microkernels' plans: those ran at 0.42-0.68 of oneDNN there.
// oneDNN's brgconv batches its brgemm over the taps instead
// (jit_brgemm_conv.cpp). Here the taps go above the output tiles: per tap
// a block of channels whose weights (nf x block x 4 B) stay in L2 beside the
// k tile's output, which stays there across taps and blocks; a 1x1-tap
// register block (brgemm_choice's rule) under them. On deeplabv3-dilated-1
// and -5 such nests ran at 0.97-1.05 of oneDNN (1024- and 512-channel blocks
// alike); a dilated layer starts on it (csa_plan). Empty where the
// output-stationary weights fit L2 or the shape has one tap.
Config taps_outside(const Space& space, int registers, double l2) {
  const Shape sh = loop_shape(space.shape);  // one group's problem under a g loop
  if (sh.R * sh.S == 1 || space.shape.depthwise() || lanes_eligible(space.shape, space.lanes)) return {};
  const int64_t channels = dim_size(space.shape, Dim::c, space.lanes);
  const int i = register_block_choice(space, registers, [](const UkChoice& c) {
    return c.uk.r == 1 && c.uk.s == 1 && c.view.kind == View::rows;
  });
  if (i < 0) return {};
  const UkChoice& ch = space.choices[size_t(i)];
  const double nf = double(ch.uk.k * space.lanes);
  if (nf * double(channels * sh.R * sh.S) * kDt <= l2 * kBeta) return {};
  const ParOption par = split(space, ch);
  auto share = [&](Dim d) { return space.remaining(ch, d) / par.on(d); };
  const double row_bytes = nf * double(ch.h_extent() * share(Dim::w) * ch.uk.w) * kDt;  // one tile row's output
  const int64_t rows = largest(share(Dim::h), [&](int64_t r) { return double(r) * row_bytes <= l2 * kBeta / 2; });
  const double room = l2 * kBeta - double(rows) * row_bytes;
  const int64_t steps = space.remaining(ch, Dim::c);  // reuse steps of ch.uk.c channels
  const int64_t reuse = largest(steps, [&](int64_t r) { return nf * double(r * ch.uk.c) * kDt <= room / 2; });
  return nest(space, ch, par,
              {tile(Dim::n, share(Dim::n)), tile(Dim::k, share(Dim::k)), tile(Dim::h, share(Dim::h) / rows),
               tile(Dim::c, steps / reuse), tile(Dim::r, space.remaining(ch, Dim::r)),
               tile(Dim::s, space.remaining(ch, Dim::s)), tile(Dim::h, rows), tile(Dim::w, share(Dim::w))},
              {}, reuse, false);
}

}  // namespace

CsaPlan csa_plan(const Space& space, const SearchOptions& opt) {
  if (space.choices.empty()) throw Error("the search space has no microkernel choice");
  const Shape sh = loop_shape(space.shape);  // one group's problem under a g loop
  // A choice's c loop: Cg (C without groups), but 1 on a depthwise shape and
  // under Lanes(g) (each output reads its own channels, in the lanes of the
  // k loop; ukernel.h dw, config.h).
  auto channels_of = [&](const UkChoice& c) { return dim_size(view_shape(c.view, space.shape), Dim::c, space.lanes); };
  const double l1 = double(opt.l1d_bytes > 0 ? opt.l1d_bytes : 32 << 10);
  const double l2 = double(opt.l2_bytes > 0 ? opt.l2_bytes : 1 << 20);
  const double l3 = double(opt.l3_bytes > 0 ? opt.l3_bytes : 4 << 20);

  std::vector<Plan> plans;
  for (size_t i = 0; i < space.choices.size(); ++i) {
    const UkChoice& ch = space.choices[i];
    Plan p;
    p.choice = i;
    p.par = split(space, ch);
    // What one thread covers: the remaining tiles, with the P dimension's share.
    auto share = [&](Dim d) { return space.remaining(ch, d) / p.par.on(d); };
    p.nwin = ch.uk.w * ch.h_extent();  // windows of one microkernel call (a pair acts as one)
    p.nf = ch.uk.k * space.lanes;
    p.n_in = share(Dim::h) * share(Dim::w);  // Eq. 3 (per image)
    p.n_fs = share(Dim::k);
    const double rs = double(ch.uk.r * ch.uk.s);  // taps under the accumulators (see top)
    auto bytes = [&](int64_t nc) {  // Eq. 1
      return std::make_tuple(double(p.nwin * nc) * rs * kDt, double(p.nf * nc) * rs * kDt, double(p.nwin * p.nf) * kDt);
    };
    const int64_t reuse = largest(space.remaining(ch, Dim::c), [&](int64_t r) {  // Eq. 2, N_c as large as fits
      auto [in, fs, out] = bytes(r * ch.uk.c);
      return in + fs + out <= l1 * kAlpha;
    });
    p.nc = reuse * ch.uk.c;
    std::tie(p.in, p.fs, p.out) = bytes(p.nc);
    p.l1_fits = p.in + p.fs + p.out <= l1 * kAlpha;
    p.is = schedule(true, p, channels_of(ch) / p.nc, l2, l3);
    p.ws = schedule(false, p, channels_of(ch) / p.nc, l2, l3);
    plans.push_back(p);
  }
  // CSA takes the microkernel as given (001 §4.1, §5); here every choice is a
  // fast one (000 §4.1). The cost model leaves out the output reloads that a
  // small N_c brings, so it cannot rank microkernels: take one whose tiles
  // fit L1 (Eq. 2), one that holds the accumulators over the whole R x S
  // filter as SConv's does (the taps family), the largest register tile (most
  // reuse; a pair counts its smaller part), a single microkernel before a pair
  // of the same tile (000 §4.2), the most k vectors (a broadcast feeds k
  // FMAs), then the lowest cost. The tile comes before "single": on a prime
  // Ho (yolo9000-18's 17) the only singles are 1-row tiles of k vectors.
  auto key = [&](const Plan& x) {
    const UkChoice& c = space.choices[x.choice];
    const bool whole_filter = c.uk.r == sh.R && c.uk.s == sh.S;
    return std::make_tuple(!x.l1_fits, !whole_filter,
                           -int64_t(c.uk.w) * (c.pair ? std::min(c.uk.h, c.uk2.h) : c.uk.h) * c.uk.k, c.pair, -c.uk.k,
                           x.best().cost, x.choice);
  };
  const Plan& p = *std::min_element(plans.begin(), plans.end(), [&](const Plan& a, const Plan& b) { return key(a) < key(b); });
  const UkChoice& ch = space.choices[p.choice];
  const Schedule& s = p.best();

  // 001 §4.2 Fig. 5 loop nest (IS): channel sets; sets of K3 IN tiles; sets
  // of K2 FS tiles; the K3 IN tiles; the K2 FS tiles; then the full filter.
  // WS swaps IN and FS. IN tiles split over w first (kw | Wo/w), the rest on h.
  auto share = [&](Dim d) { return space.remaining(ch, d) / p.par.on(d); };
  const int64_t hq = share(Dim::h), wq = share(Dim::w);
  const int64_t in_inner = s.input_stationary ? s.k3 : s.k2, fs_inner = s.input_stationary ? s.k2 : s.k3;
  const int64_t kw = std::gcd(in_inner, wq), kh = in_inner / kw;
  std::vector<Spec> in_outer{tile(Dim::h, hq / kh), tile(Dim::w, wq / kw)}, in_in{tile(Dim::h, kh), tile(Dim::w, kw)};
  std::vector<Spec> fs_outer{tile(Dim::k, p.n_fs / fs_inner)}, fs_in{tile(Dim::k, fs_inner)};
  std::vector<Spec> nest{tile(Dim::n, share(Dim::n)), tile(Dim::c, channels_of(ch) / p.nc)};
  for (const auto* part : s.input_stationary ? std::vector<const std::vector<Spec>*>{&in_outer, &fs_outer, &in_in, &fs_in}
                                             : std::vector<const std::vector<Spec>*>{&fs_outer, &in_outer, &fs_in, &in_in})
    nest.insert(nest.end(), part->begin(), part->end());
  nest.push_back(tile(Dim::r, space.remaining(ch, Dim::r)));
  nest.push_back(tile(Dim::s, space.remaining(ch, Dim::s)));
  Config c;
  for (const Spec& ps : outer_specs(space, ch, p.par)) c.specs.push_back(ps);
  for (const Spec& t : nest)
    if (t.factor > 1) c.specs.push_back(t);
  if (ch.pair) c.specs.push_back(lseq_spec(ch));  // the pair acts as one microkernel of h_extent rows
  for (const Spec& t : microkernel_specs(ch, p.nc / ch.uk.c)) c.specs.push_back(t);
  c.fence = ch.fence;
  c.view = ch.view;
  validate_config(c, space.shape, space.lanes);
  const Config os = output_stationary(space, ch, p.par, l2);
  const Config blocked = c_blocked(space, ch, p.par, l1, l2);
  Config stream;
  if (const int sc = streaming_choice(space); sc >= 0) {
    const UkChoice& sch = space.choices[size_t(sc)];
    stream = output_stationary(space, sch, split(space, sch), l2);
    if (stream == os) stream = Config{};
  }
  Config brgemm;
  if (const int bc = brgemm_choice(space, opt.vector_registers); bc >= 0) {
    const UkChoice& bch = space.choices[size_t(bc)];
    brgemm = output_stationary(space, bch, split(space, bch), l2);
    if (brgemm == os) brgemm = Config{};
  }

  Config depthwise;
  if (const int dc = depthwise_choice(space); dc >= 0) {
    const UkChoice& dch = space.choices[size_t(dc)];
    depthwise = depthwise_plan(space, dch, split(space, dch), l2);
    if (depthwise == os && !lanes_eligible(space.shape, space.lanes)) depthwise = Config{};
  }

  const Config taps = taps_outside(space, opt.vector_registers, l2);

  Config winograd;
  if (const int wc = winograd_choice(space, opt.vector_registers); wc >= 0) {
    const UkChoice& wch = space.choices[size_t(wc)];
    winograd = output_stationary(space, wch, split(space, wch), l2);
  }

  nlohmann::json info;
  info["l1d_bytes"] = int64_t(l1);
  info["l2_bytes"] = int64_t(l2);
  info["l3_bytes"] = int64_t(l3);
  info["caches"] = opt.l1d_bytes > 0 && opt.l2_bytes > 0 && opt.l3_bytes > 0
                       ? "machine (" + opt.cache_source + ")"
                       : "not all known (source: " + opt.cache_source +
                             "); assumed 32 KiB L1, 1 MiB L2, 4 MiB L3 for the missing ones";
  info["alpha"] = kAlpha;
  info["beta"] = kBeta;
  info["gamma"] = kGamma;
  info["choice"] = ch.text();
  std::string par;
  for (const Spec& ps : parallel_specs(p.par)) par += (par.empty() ? "" : " ") + to_string(ps);
  info["parallel"] = par.empty() ? "none" : par;
  info["schedule"] = s.input_stationary ? "input-stationary" : "weight-stationary";
  info["N_win"] = p.nwin;
  info["N_f"] = p.nf;
  info["N_c"] = p.nc;
  info["in_tiles"] = p.n_in;
  info["fs_tiles"] = p.n_fs;
  info["K2"] = s.k2;
  info["K3"] = s.k3;
  info["tile_bytes"] = {{"in", p.in}, {"fs", p.fs}, {"out", p.out}};
  info["l1_fits"] = p.l1_fits;
  info["cost_is"] = p.is.cost;
  info["cost_ws"] = p.ws.cost;
  info["output_stationary"] = to_string(os);
  if (!stream.specs.empty()) info["streaming"] = to_string(stream);
  if (!blocked.specs.empty()) info["c_blocked"] = to_string(blocked);
  if (!brgemm.specs.empty()) info["brgemm"] = to_string(brgemm);
  if (!winograd.specs.empty()) info["winograd"] = to_string(winograd);
  if (!depthwise.specs.empty()) info["depthwise"] = to_string(depthwise);
  if (!taps.specs.empty()) info["taps_outside"] = to_string(taps);
  // The first plan measured is the one expected fastest, so that one trial
  // is already a sound kernel: brgemm, streaming and Winograd where they
  // apply (Winograd at stride 1, where its gain was measured; at stride 2
  // it is one of the other plans), the depthwise block, else
  // output-stationary, which was ahead of CSA's own pick on the layers of
  // bench/results/convergence; on a dilated layer the taps-outside plan
  // where it applies (measured there only).
  Config first = os;
  const bool dilated = sh.dil_h > 1 || sh.dil_w > 1;
  if (!depthwise.specs.empty() && lanes_eligible(space.shape, space.lanes)) first = depthwise;
  else if (!taps.specs.empty() && dilated) first = taps;
  else if (!brgemm.specs.empty()) first = brgemm;
  else if (!stream.specs.empty()) first = stream;
  else if (!depthwise.specs.empty()) first = depthwise;
  else if (!winograd.specs.empty() && sh.stride_h == 1 && sh.stride_w == 1) first = winograd;
  info["first"] = to_string(first);
  return {c, os, stream, blocked, brgemm, winograd, depthwise, taps, first, info};
}

namespace {

// `--search csa`: the one CSA configuration, measured once.
class CsaSearch : public SearchStrategy {
 public:
  CsaSearch(const Space& space, const SearchOptions& opt) : plan_(csa_plan(space, opt)) {}
  std::string name() const override { return "csa"; }
  std::vector<Config> propose(size_t n) override {
    if (done_ || n == 0) return {};
    done_ = true;
    if (seen_.count(to_string(plan_.config))) return {};
    return {plan_.config};
  }
  void observe(const Config& c, const Observation&) override { seen_.insert(to_string(c)); }
  nlohmann::json info() const override { return {{"csa", plan_.info}}; }

 private:
  CsaPlan plan_;
  bool done_ = false;
  std::set<std::string> seen_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_csa_search(const Space& space, uint64_t, const SearchOptions& opt) {
  return std::make_unique<CsaSearch>(space, opt);
}

}  // namespace convtune
