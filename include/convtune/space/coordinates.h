#pragma once
// A coordinate view of the structured space (000 §4.2) for the
// neighbourhood-based strategies, with OpEvo's parameter types (002 §3):
//   - per dimension, a factorization parameter: the ordered tile factors of
//     the dimension above the microkernel, in a fixed number of slots (the
//     largest count of prime factors any microkernel choice leaves; empty
//     slots hold 1 and print nothing). For c, slot 0 is the reuse loop T(n,c)
//     directly above the microkernel (000 §4.2);
//   - the loop order: a permutation of the slots above the reuse loop;
//   - the microkernel choice: ordered by h inside a class (same sizes but h),
//     categorical across classes (002 §3 discrete / categorical);
//   - the Lseq position (pair choices only);
//   - with Space::parallel (--threads > 1), the outermost P(count,dim): one of
//     the choice's Space::parallel_options (categorical); the factors of dim
//     then multiply to what remains after it;
//   - the tap fence F(r) / F(s) (categorical; config.h), when some choice's
//     microkernel holds more than one tap. A choice without taps prints none;
//   - Pf(w), on or off (config.h), printed where the configuration has a loop
//     for it (prefetch_loop);
//   - Pf(o), on or off (config.h), printed wherever it is on.
// On a grouped shape the group loops come first, fixed by the P option
// (space.h outer_specs): g has no factorization parameter.
// Every point prints as a valid configuration; every step keeps the
// products right, so no invalid point is ever built. Several points may
// print the same configuration (empty slots); strategies key on the text.
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "convtune/core/divisors.h"  // prime_factors, which this view and warm_start use
#include "convtune/space/config.h"
#include "convtune/space/space.h"

namespace convtune {

struct Point {
  int choice = 0;
  std::vector<std::vector<int64_t>> factors;  // [dim][slot]; product = Space::remaining
  std::vector<int> order;                     // slot ids above the reuse loop, outermost first
  int lseq = 0;                               // Lseq goes before order[lseq] (0..order.size())
  ParOption par{Dim::n, 1};                   // the outermost P; count 1: none
  TapFence fence = TapFence::none;            // F(r) / F(s); printed only where the choice allows it
  bool prefetch = false;                      // Pf(w); printed only where the configuration has its loop
  bool prefetch_out = false;                  // Pf(o)
  bool stream_out = false;                    // Nt(o)
};

/// The parameters of a point (002 §3: mu of them).
enum class Param { factor, order, choice, lseq, fence, parallel, prefetch, prefetch_out, stream_out };
struct ParamId {
  Param kind = Param::factor;
  Dim dim = Dim::n;  // factor only
};

/// One step along one parameter, kept so that a descent can go on in the
/// same direction (003 §3.4).
struct Move {
  ParamId param;
  int from = -1, to = -1;  // factor: slot ids; order: the slot moved
  int64_t prime = 0;       // factor
  int dir = 0;             // order, lseq, choice (inside a class): -1 outwards/lower, +1 inwards/higher
  int choice = -1;         // choice: the target
};

struct Neighbor {
  Point point;
  Move move;
};

class CoordinateView {
 public:
  explicit CoordinateView(const Space& space);
  const Space& space() const { return space_; }

  Config to_config(const Point& p) const;
  /// The point of a configuration of the space (T levels above T(n,c), at
  /// most one Lseq, the microkernel of a choice); nullopt for anything else
  /// (R, T(1,d) above the reuse loop, unknown microkernel).
  std::optional<Point> from_config(const Config& c) const;
  /// A point of 000 §6.1's sampler.
  Point random_point(std::mt19937_64& rng) const;

  /// The parameters: 7 factorizations (every dimension but g), the order, the choice, the Lseq, the
  /// fence when some choice allows one, the P option when the space has one,
  /// Pf(w), Pf(o) and Nt(o).
  std::vector<ParamId> params() const;
  int slot_id(Dim d, int slot) const { return offset_[static_cast<int>(d)] + slot; }
  int num_slots(Dim d) const { return nu_[static_cast<int>(d)]; }

  /// The local neighbourhood used by coordinate descent (003 §3.1, 004 §3.2):
  /// a prime moved between two levels of a dimension adjacent in loop order
  /// (or split off into a new level just inside), two adjacent levels
  /// swapped, the previous/next microkernel of the class, the nearest-h
  /// member of up to `classes` other classes (drawn with rng), the Lseq
  /// across one level, every other fence and every other P option of the
  /// choice, and Pf(w), Pf(o) and Nt(o) switched. Only points whose configuration differs from p's,
  /// each configuration once.
  std::vector<Neighbor> neighbors(const Point& p, std::mt19937_64& rng, int classes = 4) const;
  /// The same move again from p (the next value along that direction), or
  /// nullopt when it no longer applies.
  std::optional<Point> repeat(const Point& p, const Move& m) const;

  /// One step of 002 §3's adjacency on one parameter, drawn uniformly among
  /// the adjacent values (factor: any prime between any two slots; order:
  /// any two-cycle; choice: previous/next in the class or the nearest-h
  /// member of any other class; Lseq: across one level; fence: any other
  /// fence the choice allows; parallel: any other P option; prefetch,
  /// prefetch_out and stream_out: switched). Unchanged if the
  /// parameter has no neighbour.
  Point random_step(const Point& p, ParamId param, std::mt19937_64& rng) const;
  /// 002 §4.3's q-random walk on one parameter: steps while uniform < q.
  Point q_walk(const Point& p, ParamId param, double q, std::mt19937_64& rng) const;

  /// p with another microkernel choice; each dimension's factors follow the
  /// new remaining sizes, changing the innermost levels first (so the outer
  /// tile sizes stay).
  Point with_choice(const Point& p, int choice) const;
  /// p with the fence f when p's choice allows it (else p unchanged).
  Point with_fence(const Point& p, TapFence f) const;
  /// p with the P option `par` when p's choice has it (else p unchanged),
  /// the factors of both dimensions repaired.
  Point with_parallel(const Point& p, const ParOption& par) const;
  /// p with dimension d's factors taken from `factors` and repaired to p's
  /// choice (for recombination, 002 §4.2).
  Point with_factors(const Point& p, Dim d, const std::vector<int64_t>& factors) const;

  /// Choices adjacent to c (002 §3): previous and next in the class by h,
  /// then the nearest-h member of every other class.
  std::vector<int> choice_neighbors(int c) const;
  int class_of(int c) const { return class_of_[size_t(c)]; }
  int num_classes() const { return int(classes_.size()); }

 private:
  int dim_of(int id) const;
  int64_t factor(const Point& p, int id) const;  // the factor in a slot
  std::vector<int> slots_in_order(const Point& p, Dim d) const;  // d's slots, outermost first; c: reuse last
  void fit(Point& p, Dim d) const;  // repairs d's factors to p.choice and p.par
  int64_t target(const Point& p, Dim d) const;  // what d's factors multiply to
  // The choice's option whose outer_specs begin c (the longest): its option and their count.
  bool match_outer(const Config& c, const UkChoice& ch, ParOption& par, size_t& first) const;
  int lseq_step(const Point& p, int dir) const;  // -1 when none
  std::vector<int> nearest_in_other_classes(int c) const;
  std::vector<TapFence> other_fences(const Point& p) const;  // the fences p's microkernel takes, but p's

  const Space& space_;
  int nu_[kNumDims] = {};
  int offset_[kNumDims] = {};
  int total_slots_ = 0;
  std::vector<std::vector<int>> classes_;  // choices of a class, by h
  std::vector<int> class_of_, pos_in_class_;
  std::vector<double> h_of_;  // mean h of a choice
};

}  // namespace convtune
