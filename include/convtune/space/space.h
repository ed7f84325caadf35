#pragma once
// The online search space of 000 §4.2 and Fig. 7, built from a class table
// for one shape: the microkernels (single or a pair of one class combined
// along h) that divide the problem, and the tilings above them.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "convtune/offline/class_table.h"
#include "convtune/space/config.h"
#include "convtune/core/shape.h"
#include "convtune/ukernel/ukernel.h"

namespace convtune {

/// A microkernel choice: one microkernel, or two of one class used
/// a times with h = uk.h and b times with h = uk2.h (000 §4.2: a*h1 + b*h2
/// divides Ho, e.g. 34 = 2*11 + 1*12).
struct UkChoice {
  UkSizes uk;
  bool pair = false;
  UkSizes uk2;            // pair only: same as uk except h
  int64_t a = 1, b = 0;   // pair only
  bool fallback = false;  // a non-selected or unprofiled microkernel used because nothing selected divides
  TapFence fence = TapFence::none;  // the fence of its profiled figure (UkRecord::fence): sampled candidates start with it
  View view;  // tiles view_shape(view, shape) (config.h): h counts rows, Ho*Wo pixels (Flat(hw)) or 2x2 tiles (Wino(2))
  /// Extent covered along h by one use of the choice: uk.h, or a*h1 + b*h2.
  int64_t h_extent() const { return pair ? a * uk.h + b * uk2.h : uk.h; }
  /// "k2c1w1h11r3s3" or "k2c1w1h{2x11+1x12}r3s3", with the view as a configuration spells it
  /// before it ("Flat(hw) ", "Wino(2) ", "Wino(2,68) ", "Wino(2,68,2) ")
  std::string text() const;
};

/// The parallel loops the space may put outermost (issue 12): P(count, dim),
/// or two nested ones, P(count, dim) P(count2, dim2), run as one collapse(2)
/// loop of count*count2 threads: the split of the threads over two dimensions
/// when no one dimension has enough tiles for them (many cores, 7x7 outputs).
struct ParOption {
  Dim dim = Dim::k;
  int64_t count = 1;
  Dim dim2 = Dim::n;   // the inner P of a pair; count2 1: none
  int64_t count2 = 1;
  int64_t threads1 = 0;  // the outer P's threads when fewer than count (P(count,dim,threads1)); 0: count
  /// Threads the option runs.
  int64_t threads() const { return (threads1 > 0 ? threads1 : count) * count2; }
  /// How many parts the option splits dimension d into (1: not split).
  int64_t on(Dim d) const { return (dim == d ? count : 1) * (count2 > 1 && dim2 == d ? count2 : 1); }
  bool operator==(const ParOption& o) const {
    return dim == o.dim && count == o.count && threads1 == o.threads1 && count2 == o.count2 &&
           (count2 == 1 || dim2 == o.dim2);
  }
};

struct Space {
  Shape shape;
  int64_t lanes = 16;
  /// Threads a candidate may use (--threads). With 1 no configuration has a
  /// P; with N > 1 every one has exactly one, outermost: P(p,d) with d one of
  /// n (batch > 1), k, h, w, p > 1 a divisor of N that divides the loop count
  /// left above the microkernel along d (so p = N uses every core; a smaller
  /// p is there for dimensions with no factor N). When no such option uses
  /// all N threads, a dimension whose count m is not a multiple of N but
  /// exceeds it adds P(m,d,N): all m iterations on N threads, chunks differing
  /// by one iteration (yolo9000-23 at 2 threads: Ho = Wo = 17). Choices with
  /// no option are left out (they would run on one core); when none has one,
  /// the space has no P and says so in `note`. A Wino(2,b,N) choice has no
  /// P: its one option is N threads over its blocks (count 1, threads1 N).
  /// On a grouped shape (config.h g) d may also be g, and R(g) stands above
  /// any P within a group (outer_specs).
  int threads = 1;
  std::vector<UkChoice> choices;
  /// Whether the choice's configurations have group loops (has_group_loop of
  /// its view's shape): a grouped shape's rows do, its Lanes(g) choices not.
  bool group_loops(const UkChoice& ch) const;
  /// Empty, or one line saying that the fallback microkernel was used and
  /// why, or that the pair choices were capped (10000; only for an Ho with
  /// very many divisors).
  std::string note;

  /// The remaining loop count above the microkernel choice along d
  /// (e.g. for k: padded_K / (uk.k * lanes); for h: Ho / h_extent()).
  int64_t remaining(const UkChoice& ch, Dim d) const;
  /// Number of distinct configurations (exact, as a double: it can be huge).
  double size() const;
  /// The P options of a choice: single P(p,d), d in g (a grouped shape), n, k, h, w order with
  /// ascending p, then nested pairs P(p1,d1) P(p2,d2) (d1 before d2 in that
  /// order, p1, p2 > 1). Every p, and p1*p2, divides threads and the tiles left
  /// along its dimension. Empty with threads 1 (or when the space has no P).
  std::vector<ParOption> parallel_options(const UkChoice& ch) const;
  bool parallel = false;  // whether configurations carry a P (threads > 1 and some option)
};

/// Wino(2,b)'s fused order keeps a block's scratch (points * b * (C + K) floats)
/// in L2: half of a 1 MiB L2 (AMD Zen 4/5; Intel's server cores have 1-2 MiB), leaving room
/// for the weights and the output rows the block writes.
constexpr int64_t kWinoBlockBytes = 512 * 1024;
/// Below this many tiles a block's GEMMs read the weights too often per tile.
constexpr int64_t kWinoMinBlock = 16;
/// The block the space offers for Wino(2,b) on a wino_eligible shape: the
/// most tiles, a divisor of N * wino_tiles, whose scratch fits kWinoBlockBytes;
/// 0 when all tiles fit already (Wino(2) is then the fused order) or when that
/// block would be below kWinoMinBlock tiles.
int64_t fused_wino_block(const Shape& shape);
/// The block the space offers for Wino(2,b,threads), at least kWinoMinBlock
/// tiles and at least `threads` blocks: the largest divisor of the tiles whose
/// scratch fits kWinoBlockBytes (each thread's is in its own core's L2) and
/// that leaves a multiple of `threads` blocks (no thread idles for the last
/// block); else the largest block within the budget that leaves a multiple of
/// `threads` blocks with the last one short (resnet18-4 on 2: 8 blocks of 25
/// for 196 tiles); else the largest divisor within the budget; else the
/// smallest divisor past it (yolo9000-12: 17); else the largest short-block
/// split past it (resnet18-9: 2 of 25 for 49 tiles); 0 when none has
/// kWinoMinBlock tiles (16 tiles on 2 threads).
int64_t threaded_wino_block(const Shape& shape, int64_t threads);

/// Builds the space: the choices that divide the shape, then, on a
/// flat_eligible shape, those that divide flat_view(shape) (flat); at one
/// thread on a wino_eligible shape, those that divide wino_view(shape) and,
/// where fused_wino_block gives a block, wino_view(shape, block); at more
/// threads, those that divide wino_view(shape, threaded_wino_block(shape,
/// threads)), as Wino(2,b,threads) (their ParOption: the threads, no P). When
/// none divides: the best non-selected microkernel or pair of the table, else
/// an unprofiled one (the ISA admits it, or it has fewer accumulators than the
/// ISA's latency rule wants), marked fallback and named in `note`; so every
/// valid shape has a space. Throws Error only for a table of an ISA this build
/// does not know that has no microkernel dividing the shape.
/// Fast on every shape validate_shape accepts (pairs are found per divisor of Ho).
Space build_space(const Shape& shape, const ClassTable& table, int64_t lanes, int threads = 1);

/// The microkernel part of a configuration for a choice, with the c reuse loop:
/// [T(c_reuse,c), U(s), U(r), U(c), U(w), U(h) or U(a,h), U(k), V(k)]
/// (U of size 1 omitted), plus, for a pair, nothing else: Lseq is placed by
/// the caller.
std::vector<Spec> microkernel_specs(const UkChoice& ch, int64_t c_reuse);
/// A pair choice's Lseq(h,[(a,h1),(b,h2)]) (000 §4.2), for the caller to place.
Spec lseq_spec(const UkChoice& ch);

/// 000 §6.1's random sampler: a microkernel choice uniformly (with several
/// views, first the view, each as often); a divisor
/// of the remaining c as the reuse loop directly above the microkernel; then,
/// outwards, (dimension, factor) pairs drawn uniformly among those that still
/// divide what remains, until every dimension is complete; for a pair, the
/// Lseq(h,...) specifier at a uniformly drawn level above the reuse loop.
/// With Space::parallel, first a P option of the choice uniformly, outermost
/// (the Lseq stays below it). Every result passes validate_config.
Config sample_config(const Space& space, std::mt19937_64& rng);

/// The P specifiers of an option, outermost first (one, or two adjacent).
std::vector<Spec> parallel_specs(const ParOption& o);
/// What a configuration of the space has above its tiles: parallel_specs(o),
/// and on a grouped shape (has_group_loop) the group loops first (config.h
/// g): P(t,g) when o splits g, R(g) for the groups left, then o's P within a
/// group: [R(g), P(2,k)], [P(2,g), R(g)], [P(32,g,2)].
/// The choice's view decides (Space::group_loops): Lanes(g) has no group loops.
std::vector<Spec> outer_specs(const Space& space, const UkChoice& ch, const ParOption& o);

/// Which choice a configuration uses (by its U/Lseq specifiers); -1 if none.
int choice_of(const Space& space, const Config& c);

/// For a configuration a resumed log holds: a pair choice the cap on pairs
/// left out of the space (older versions filled it in class order) is added
/// when its two microkernels are selected members of one class of the table
/// and it divides the view. The configuration's choice, or -1.
int add_capped_pair(Space& space, const ClassTable& table, const Config& c);

}  // namespace convtune
