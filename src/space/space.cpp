// The online search space of 000 §4.2 (Fig. 7) and its random sampler (000 §6.1).
#include "convtune/space/space.h"

#include <algorithm>
#include <array>
#include <climits>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "convtune/core/divisors.h"
#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/space/wino_transform.h"

namespace convtune {

namespace {

// Pair choices beyond this many (only for a tall output with a highly
// composite Ho) would make the space and its size() slow without adding
// configurations anyone measures; the zoo's layers have at most a few hundred. Per
// view: rows, Flat(hw), Wino(2) and Wino(2,b) each have their own.
constexpr size_t kMaxPairChoices = 10000;

// The first `limit` pairs (a, b), both >= 1, with a*h1 + b*h2 dividing Ho,
// ordered by a then b. For each a only the divisors of Ho are tried, not
// every b: about Ho/h1 * divisors(Ho) steps at worst, never Ho squared.
std::vector<std::pair<int64_t, int64_t>> pair_counts(int64_t h1, int64_t h2,
                                                     const std::vector<int64_t>& ho_divisors,
                                                     size_t limit) {
  std::vector<std::pair<int64_t, int64_t>> out;
  std::vector<int64_t> es;  // a*h1 + b*h2 is a multiple of gcd(h1, h2)
  const int64_t g = std::gcd(h1, h2);
  for (int64_t e : ho_divisors)
    if (e % g == 0 && e >= h1 + h2) es.push_back(e);
  for (int64_t a = 1; !es.empty() && a * h1 + h2 <= es.back(); ++a)
    for (auto it = std::lower_bound(es.begin(), es.end(), a * h1 + h2); it != es.end(); ++it) {
      if ((*it - a * h1) % h2 != 0) continue;
      if (out.size() == limit) return out;
      out.emplace_back(a, (*it - a * h1) / h2);
    }
  return out;
}

Spec make_spec(SpecKind kind, Dim d, int64_t factor = 1) {
  Spec s;
  s.kind = kind;
  s.dim = d;
  s.factor = factor;
  return s;
}

// 000 §3.2 divisibility: the microkernel (h covering h_extent) divides every problem size.
bool divides(const UkSizes& u, int64_t h_extent, const Shape& sh, int64_t lanes) {
  if (u.k < 1 || u.c < 1 || u.w < 1 || u.h < 1 || u.r < 1 || u.s < 1 || h_extent < 1) return false;
  return sh.padded_K(lanes) % (u.k * lanes) == 0 && sh.C % u.c == 0 && sh.Wo() % u.w == 0 &&
         sh.Ho() % h_extent == 0 && sh.R % u.r == 0 && sh.S % u.s == 0;
}

// Sequences of (d, f > 1) levels that complete `rem` to all ones (000 Fig. 7:
// ordered factorizations per dimension, interleaved): how many, and the sum
// of their lengths (for the Lseq placements). A sequence is one ordered
// factorization per dimension plus an interleaving of them, so with a_d(L)
// factorizations of length L the count is a sum of a_d(L) products times
// multinomials: polynomial work in the lengths (at most 20 per dimension),
// not a walk over every tuple of remaining sizes (which took minutes when
// every dimension had many divisors). Integer-valued doubles: exact below 2^53.
class SequenceCounter {
 public:
  using Rem = std::array<int64_t, kNumDims>;
  std::pair<double, double> count(const Rem& rem) {
    std::vector<double> seqs{1.0};  // seqs[T]: interleaved sequences of total length T so far
    for (int64_t v : rem) {
      const std::vector<double>& a = by_length(v);
      std::vector<double> next(seqs.size() + a.size() - 1, 0.0);
      for (size_t t = 0; t < seqs.size(); ++t)
        for (size_t l = 0; l < a.size(); ++l)
          if (seqs[t] != 0 && a[l] != 0) next[t + l] += seqs[t] * a[l] * binomial(t + l, l);
      seqs = std::move(next);
    }
    double n = 0, len = 0;
    for (size_t t = 0; t < seqs.size(); ++t) {
      n += seqs[t];
      len += double(t) * seqs[t];
    }
    return {n, len};
  }

 private:
  // Ordered factorizations of v into exactly L factors > 1, indexed by L.
  const std::vector<double>& by_length(int64_t v) {
    auto it = memo_.find(v);
    if (it != memo_.end()) return it->second;
    std::vector<double> out{v == 1 ? 1.0 : 0.0};
    for (int64_t f : divisors(v)) {
      if (f == 1) continue;
      const std::vector<double>& rest = by_length(v / f);  // std::map entries stay put
      if (out.size() < rest.size() + 1) out.resize(rest.size() + 1, 0.0);
      for (size_t l = 0; l < rest.size(); ++l) out[l + 1] += rest[l];
    }
    return memo_[v] = out;
  }
  double binomial(size_t n, size_t k) {
    while (pascal_.size() <= n) {
      std::vector<double> row(pascal_.size() + 1, 1.0);
      for (size_t i = 1; i + 1 < row.size(); ++i) row[i] = pascal_.back()[i - 1] + pascal_.back()[i];
      pascal_.push_back(std::move(row));
    }
    return pascal_[n][k];
  }
  std::map<int64_t, std::vector<double>> memo_;
  std::vector<std::vector<double>> pascal_{{1.0}};
};

// What a microkernel must divide, for the messages below.
std::string needed_sizes(const Shape& shape, int64_t lanes) {
  return fmt::format("k divides padded K/lanes={}/{}={}, c divides C={}, w divides Wo={}, h divides Ho={}, r divides "
                     "R={}, s divides S={}",
                     shape.padded_K(lanes), lanes, shape.padded_K(lanes) / lanes, shape.C, shape.Wo(), shape.Ho(),
                     shape.R, shape.S);
}

// A table of an ISA this build does not know: nothing but the table to go by.
Error no_microkernel_error(const Shape& shape, int64_t lanes) {
  return Error(fmt::format("no microkernel in the class table divides this shape (it needs {}); profile more "
                           "microkernels (convtune profile) or use a table that covers these sizes",
                           needed_sizes(shape, lanes)));
}

// The relaxed microkernels of unprofiled_choice: c = r = s = 1 (channels and
// taps in the loops above), k | K/lanes, w | Wo, and h | Ho or a pair
// h1 < h2 of one class with a*h1 + b*h2 | Ho; each at most max_unroll and
// within the ISA's upper bounds (000 §4.1: out_max accumulators, total_max
// registers with the k weight vectors), its lower bound on accumulators
// dropped. The most accumulators in the smaller member first (as the table's
// pairs go by their slower one), then a single before a pair, then the larger k
// (fewer broadcasts per FMA). Microkernels the profile saw fail are left out
// (`failed`); k1c1w1h1r1s1 divides every shape.
UkChoice relaxed_choice(const Shape& shape, const IsaSpace& sp, int64_t lanes,
                        const std::function<bool(const UkSizes&)>& failed) {
  struct Rows {
    int h1, h2;  // h2 0: a single microkernel of h1 rows
    int64_t a, b;
  };
  const int64_t Ho = shape.Ho();
  const std::vector<int64_t> ho_divisors = divisors(Ho);
  std::vector<Rows> rows;
  for (int h = 1; h <= sp.max_unroll; ++h)
    if (Ho % h == 0) rows.push_back({h, 0, 1, 0});
  for (int h1 = 1; h1 <= sp.max_unroll; ++h1)
    for (int h2 = h1 + 1; h2 <= sp.max_unroll; ++h2)
      for (const auto& [a, b] : pair_counts(h1, h2, ho_divisors, 1)) rows.push_back({h1, h2, a, b});
  UkChoice best;
  std::tuple<int, bool, int> best_score{0, false, 0};
  for (int k = 1; k <= sp.max_unroll; ++k)
    for (int w = 1; w <= sp.max_unroll; ++w) {
      if ((shape.padded_K(lanes) / lanes) % k != 0 || shape.Wo() % w != 0) continue;
      for (const Rows& r : rows) {
        const int most = w * std::max(r.h1, r.h2) * k;
        const std::tuple<int, bool, int> score{w * r.h1 * k, r.h2 == 0, k};
        if (most > sp.out_max || most + k > sp.total_max || score <= best_score) continue;
        UkChoice ch;
        ch.uk = UkSizes{k, 1, w, r.h1, 1, 1};
        if (r.h2) {
          ch.pair = true;
          ch.uk2 = ch.uk;
          ch.uk2.h = r.h2;
          ch.a = r.a;
          ch.b = r.b;
        }
        if (failed(ch.uk) || (ch.pair && failed(ch.uk2))) continue;
        best_score = score;
        best = ch;
      }
    }
  return best;
}

// The microkernel some family of the ISA admits with the most accumulators
// that divides the shape (the first of c, r, s ascending among equals), none
// that `failed`. Over the divisors of the shape only: enumerate_ukernels
// lists every admitted microkernel, a tenth of a second per call.
std::optional<UkSizes> admitted_fit(const Shape& shape, const Isa& isa, int64_t lanes,
                                    const std::function<bool(const UkSizes&)>& failed) {
  const int most = std::max(isa.space.out_max, isa.taps.out_max);
  const int unroll = std::max(isa.space.max_unroll, isa.taps.max_unroll);
  auto upto = [unroll](int64_t n) {
    std::vector<int> v;
    for (int64_t d : divisors(n))
      if (d <= unroll) v.push_back(int(d));
    return v;
  };
  const std::vector<int> ks = upto(shape.padded_K(lanes) / lanes), cs = upto(shape.C), ws = upto(shape.Wo()),
                         hs = upto(shape.Ho()), rs = upto(shape.R), ss = upto(shape.S);
  std::optional<UkSizes> fit;
  for (int k : ks)
    for (int w : ws)
      for (int h : hs) {
        if (w * h * k > most || (fit && w * h * k <= fit->out_regs())) continue;
        for (int c : cs)
          for (int r : rs)
            for (int sv : ss) {
              const UkSizes u{k, c, w, h, r, sv};
              if ((!fit || u.out_regs() > fit->out_regs()) && ukernel_admitted(isa, u) && !failed(u)) fit = u;
            }
      }
  return fit;
}

// Nothing the table profiled tiles the shape (an Ho and Wo of 17 with one K
// vector on AVX-512, a 3x3 filter over a 1x1 input): an unprofiled
// microkernel, which the code generator builds from its sizes alone
// (microkernels/CONTRACT.md). The one the ISA admits with the most
// accumulators when one divides (then profiling it would give a measured
// choice), else relaxed_choice; never one the table records as failed
// (crashed, wrong or timed out). Marked fallback; `note` says which and why.
UkChoice unprofiled_choice(const Shape& shape, const ClassTable& table, const Isa& isa, int64_t lanes,
                           std::string* note) {
  const std::string head =
      fmt::format("no microkernel in the class table divides this shape (it needs {})", needed_sizes(shape, lanes));
  auto failed = [&table](const UkSizes& u) {
    const UkRecord* r = table.find(u);
    return r && r->status != Status::ok;
  };
  std::optional<UkSizes> fit = admitted_fit(shape, isa, lanes, failed);
  UkChoice ch;
  if (fit) {
    ch.uk = *fit;
    *note = fmt::format("{}; using {}, which the ISA admits but the table has not profiled (profile it: convtune "
                        "profile, without --quick)",
                        head, ukernel_name(*fit, isa.name));
  } else {
    ch = relaxed_choice(shape, isa.space, lanes, failed);
    const int accumulators = ch.uk.out_regs();
    *note = fmt::format("{}; no {} microkernel with the {} accumulators its latency rule wants tiles it, so it uses "
                        "{}, unprofiled, with {} accumulators{}",
                        head, isa.name, isa.space.out_min, ch.text(), accumulators,
                        ch.pair ? " in the smaller of the two" : "");
  }
  ch.fallback = true;
  return ch;
}

}  // namespace

std::string UkChoice::text() const {
  // The view as the configuration spells it (config.h to_string).
  const std::string prefix = view.kind == View::rows ? "" : to_string(view) + " ";
  if (!pair) return prefix + sizes_text(uk);
  return prefix + fmt::format("k{}c{}w{}h{{{}x{}+{}x{}}}r{}s{}", uk.k, uk.c, uk.w, a, uk.h, b, uk2.h, uk.r, uk.s);
}

int64_t Space::remaining(const UkChoice& ch, Dim d) const {
  const int64_t size = dim_size(view_shape(ch.view, shape), d, lanes);
  switch (d) {
    case Dim::n: return size;
    case Dim::k: return size / (ch.uk.k * lanes);
    case Dim::c: return size / ch.uk.c;
    case Dim::h: return size / ch.h_extent();
    case Dim::w: return size / ch.uk.w;
    case Dim::r: return size / ch.uk.r;
    case Dim::s: return size / ch.uk.s;
    case Dim::g: return size;  // the group loops are outside every microkernel
  }
  return 1;
}

std::vector<ParOption> Space::parallel_options(const UkChoice& ch) const {
  std::vector<ParOption> v;
  if (threads <= 1) return v;
  // Wino(2,b,t): the threads are the view's; its GEMMs take no P loop.
  if (ch.view.threads > 1) return {ParOption{Dim::n, 1, Dim::n, 1, ch.view.threads}};
  const std::vector<Dim> dims = shape.N > 1 ? std::vector<Dim>{Dim::n, Dim::k, Dim::h, Dim::w}
                                            : std::vector<Dim>{Dim::k, Dim::h, Dim::w};
  // A grouped shape's groups split over the threads too, outermost (config.h g),
  // alone: a P(n,g) pair with a P inside the group would have R(g) between them.
  std::vector<Dim> singles = dims;
  if (group_loops(ch)) singles.insert(singles.begin(), Dim::g);
  for (Dim d : singles)
    for (int64_t p : divisors(threads))
      if (p > 1 && remaining(ch, d) % p == 0) v.push_back({d, p});
  // Nested pairs (a collapse(2) loop): only a composite thread count has them.
  for (size_t i = 0; i < dims.size(); ++i)
    for (size_t j = i + 1; j < dims.size(); ++j)
      for (int64_t p1 : divisors(threads))
        for (int64_t p2 : divisors(threads / p1))
          if (p1 > 1 && p2 > 1 && remaining(ch, dims[i]) % p1 == 0 && remaining(ch, dims[j]) % p2 == 0)
            v.push_back({dims[i], p1, dims[j], p2});
  // Uneven splits (config.h P(n,d,t)) only where no even one uses every
  // thread: at the same thread count an even split is never slower.
  if (std::none_of(v.begin(), v.end(), [&](const ParOption& o) { return o.threads() == threads; }))
    for (Dim d : singles) {
      const int64_t m = remaining(ch, d);
      if (m > threads && m % threads != 0) v.push_back({d, m, Dim::n, 1, threads});
    }
  return v;
}

std::vector<Spec> parallel_specs(const ParOption& o) {
  std::vector<Spec> v;
  if (o.count > 1) v.push_back(make_spec(SpecKind::P, o.dim, o.count));
  if (o.count > 1 && o.threads1 > 0) v.back().threads = o.threads1;
  if (o.count2 > 1) v.push_back(make_spec(SpecKind::P, o.dim2, o.count2));
  return v;
}

bool Space::group_loops(const UkChoice& ch) const { return has_group_loop(view_shape(ch.view, shape)); }

std::vector<Spec> outer_specs(const Space& space, const UkChoice& ch, const ParOption& o) {
  if (!space.group_loops(ch)) return parallel_specs(o);
  // config.h g: the group loops first; a P over g, then R(g) for the groups each iteration leaves.
  std::vector<Spec> v;
  if (o.dim == Dim::g && o.count > 1) v = parallel_specs(o);
  if (space.shape.groups / o.on(Dim::g) > 1) v.push_back(make_spec(SpecKind::R, Dim::g));
  if (o.dim != Dim::g)
    for (const Spec& s : parallel_specs(o)) v.push_back(s);
  return v;
}

double Space::size() const {
  SequenceCounter counter;
  double total = 0;
  for (const UkChoice& ch : choices) {
    std::vector<ParOption> pars = parallel ? parallel_options(ch) : std::vector<ParOption>{};
    if (pars.empty()) pars.push_back({Dim::n, 1});  // no P: one "option" that divides nothing
    for (const ParOption& par : pars)
      for (int64_t reuse : divisors(remaining(ch, Dim::c))) {
        SequenceCounter::Rem rem;
        for (int i = 0; i < kNumDims; ++i) rem[i] = remaining(ch, kDims[i]);
        rem[static_cast<int>(Dim::c)] /= reuse;
        for (int i = 0; i < kNumDims; ++i) rem[i] /= par.on(kDims[i]);
        rem[static_cast<int>(Dim::g)] = 1;  // outer_specs fixes the group loops
        auto [n, len] = counter.count(rem);
        // Each with and without Pf(w) where it has a T on k or c above the
        // reuse loop (config.h prefetch_loop): always, unless both are covered.
        // And each with and without Pf(o), and with and without Nt(o).
        const double pf = (rem[static_cast<int>(Dim::k)] > 1 || rem[static_cast<int>(Dim::c)] > 1 ? 2 : 1) * 2 * 2;
        // 000 §4.2: an Lseq may go at any of the (levels + 1) slots above the reuse loop.
        total += pf * (ch.pair ? len + n : n);
      }
  }
  return total;
}

// Issue 12: with threads > 1 keep the choices that can run a P loop (space.h).
static void restrict_to_parallel(Space& sp) {
  if (sp.threads <= 1) return;
  std::vector<UkChoice> keep;
  int64_t most = 1;  // the most threads any option runs
  for (const UkChoice& ch : sp.choices) {
    const std::vector<ParOption> pars = sp.parallel_options(ch);
    if (!pars.empty()) keep.push_back(ch);
    for (const ParOption& o : pars) most = std::max(most, o.threads());
  }
  const std::string why =
      fmt::format("no loop of n, k, h or w has a count divisible by a divisor of --threads {} or above it for {}; "
                  "candidates run on one thread",
                  sp.threads, keep.empty() ? "any microkernel choice" : "some microkernel choices (left out)");
  if (keep.size() != sp.choices.size()) {
    sp.note += (sp.note.empty() ? "" : "; ") + why;
    if (keep.empty()) return;
    sp.choices = std::move(keep);
  }
  sp.parallel = true;
  // More cores than independent work (issue 12): say so once, in tune and space.
  if (most < sp.threads)
    sp.note += (sp.note.empty() ? "" : "; ") +
               fmt::format("no split uses all {} threads: candidates run at most {} and leave {} idle (a P count "
                           "divides --threads and the tiles left along its dimension, or exceeds --threads)",
                           sp.threads, most, sp.threads - most);
}

// A pair's members are of one class (the same taps): the fence either was
// profiled fastest in, the first's when both have one.
static TapFence pair_fence(const UkRecord& m1, const UkRecord& m2) {
  return m1.fence != TapFence::none ? m1.fence : m2.fence;
}

// The choice of a times m1 then b times m2 along h, over `view`.
static UkChoice pair_choice(const UkRecord& m1, const UkRecord& m2, int64_t a, int64_t b, const View& view) {
  UkChoice ch;
  ch.uk = m1.sizes;
  ch.pair = true;
  ch.uk2 = m2.sizes;
  ch.a = a;
  ch.b = b;
  ch.fence = pair_fence(m1, m2);
  ch.view = view;
  return ch;
}

// 000 §4.2: every selected microkernel that divides `shape`, then the pairs
// of one class along h, as choices over the shape `view` tiles.
static void add_choices(Space& sp, const ClassTable& table, const View& view) {
  const Shape shape = loop_shape(view_shape(view, sp.shape));
  const int64_t lanes = sp.lanes, Ho = shape.Ho();
  for (const UkRecord& r : table.microkernels) {
    if (r.sizes.dw || !r.selected || r.status != Status::ok || !divides(r.sizes, r.sizes.h, shape, lanes)) continue;
    UkChoice ch;
    ch.uk = r.sizes;
    ch.fence = r.fence;
    ch.view = view;
    sp.choices.push_back(ch);
  }

  // 000 §4.2: pairs h1 < h2 of one class with (a*h1 + b*h2) | Ho.
  struct Combo {
    const UkRecord *m1, *m2;
    std::vector<std::pair<int64_t, int64_t>> counts;
    bool complete = false;  // every count found (fewer than the quota)
  };
  std::vector<Combo> combos;
  for (const UkClass& cls : table.classes) {
    if (cls.sizes.dw) continue;  // a depthwise shape's space is build_depthwise_space's
    auto member = [&](int h) -> const UkRecord* {
      UkSizes u = cls.sizes;
      u.h = h;
      const UkRecord* r = table.find(u);
      return r && r->selected && r->status == Status::ok ? r : nullptr;
    };
    std::vector<int> hs = cls.h;  // a table read from a file may be unsorted
    std::sort(hs.begin(), hs.end());
    hs.erase(std::unique(hs.begin(), hs.end()), hs.end());
    for (size_t i = 0; i < hs.size(); ++i) {
      const UkRecord* m1 = member(hs[i]);
      if (!m1 || !divides(m1->sizes, 1, shape, lanes)) continue;  // h checked below
      for (size_t j = i + 1; j < hs.size(); ++j)
        if (const UkRecord* m2 = member(hs[j]); m2 && hs[i] >= 1) combos.push_back({m1, m2, {}});
    }
  }
  // The cap is shared evenly: each pair of microkernels keeps its first
  // `quota` counts (fewest repeats of the smaller one first), the quota
  // raised while room is left. A cap filled in class order gave a long Ho's
  // first classes (k1) every place and k4 none: yolo9000-9's Ho*Wo = 4624
  // had no k4 x h{5,6} pair, the tile oneDNN's 1x1 kernel uses (csa.cpp).
  const std::vector<int64_t> ho_divisors = divisors(Ho);
  bool trimmed = false;
  if (!combos.empty()) {
    size_t quota = std::max<size_t>(1, kMaxPairChoices / combos.size());
    for (;;) {
      size_t used = 0, open = 0;
      for (Combo& c : combos) {
        if (!c.complete) {
          c.counts = pair_counts(c.m1->sizes.h, c.m2->sizes.h, ho_divisors, quota + 1);
          c.complete = c.counts.size() <= quota;
          if (!c.complete) {
            c.counts.resize(quota);
            ++open;
          }
        }
        used += c.counts.size();
      }
      trimmed = open > 0;
      const size_t more = open && used < kMaxPairChoices ? (kMaxPairChoices - used) / open : 0;
      if (more == 0) break;
      quota += more;
    }
  }
  if (trimmed)  // the cap only trims; this note says so
    sp.note = fmt::format("{}={} admits more than {} pairs of microkernels along h; the space keeps at most {} "
                          "(each pair of microkernels its fewest repeats of the smaller one first)",
                          view.kind == View::flat   ? "Ho*Wo"
                          : view.kind == View::wino ? "the tile count"
                                                    : "Ho",
                          Ho, kMaxPairChoices, kMaxPairChoices);
  for (const Combo& c : combos)
    for (const auto& [a, b] : c.counts) sp.choices.push_back(pair_choice(*c.m1, *c.m2, a, b, view));
}

namespace {

// One tile's scratch: its transformed input and the GEMMs' output, every point.
int64_t wino_tile_bytes(const Shape& shape) {
  return wino_points(shape) * (shape.C + shape.K) * int64_t(sizeof(float));
}

}  // namespace

int64_t fused_wino_block(const Shape& shape) {
  const int64_t tiles = shape.N * wino_tiles(shape), tile_bytes = wino_tile_bytes(shape);
  if (tiles * tile_bytes <= kWinoBlockBytes) return 0;  // the whole scratch fits already: Wino(2) is the fused order
  int64_t best = 0;
  for (int64_t b : divisors(tiles))
    if (b * tile_bytes <= kWinoBlockBytes) best = b;
  return best >= kWinoMinBlock ? best : 0;
}

int64_t threaded_wino_block(const Shape& shape, int64_t threads) {
  const int64_t tiles = shape.N * wino_tiles(shape), tile_bytes = wino_tile_bytes(shape);
  const int64_t budget = kWinoBlockBytes / tile_bytes;  // tiles a block's scratch may hold
  int64_t best = 0, even = 0, over = 0;
  for (int64_t b : divisors(tiles)) {
    if (b < kWinoMinBlock || tiles / b < threads) continue;
    if (b > budget) {
      if (!over) over = b;  // the smallest block over the budget
      continue;
    }
    best = b;
    if ((tiles / b) % threads == 0) even = b;
  }
  if (even) return even;
  // No divisor gives every thread as many blocks: blocks of ceil(tiles / nb)
  // for nb a multiple of the threads, the last one short (its missing tiles
  // are computed and dropped, fewer than nb of them): resnet18-4 on 2 threads
  // runs 8 blocks of 25 for its 196 tiles, not 7 of 28 (4 and 3 a thread).
  auto balanced = [&](bool within) {
    for (int64_t nb = threads; nb <= tiles / kWinoMinBlock; nb += threads) {
      const int64_t b = (tiles + nb - 1) / nb;
      if ((tiles + b - 1) / b == nb && b >= kWinoMinBlock && (!within || b <= budget)) return b;
    }
    return int64_t(0);
  };
  if (const int64_t b = balanced(true)) return b;
  // One thread runs Wino(2) whatever its scratch; so do the threads, over
  // the smallest block past the budget when none fits it (yolo9000-12: 17
  // tiles of 32 KiB, 544 KiB), or a short last block where no divisor of at
  // least kWinoMinBlock leaves a block a thread (resnet18-9: 2 blocks of 25
  // for 49 tiles).
  return best ? best : over ? over : balanced(false);
}

namespace {

// A depthwise shape (depthwise_shape, ukernel.h) is tiled by depthwise
// microkernels only (CONTRACT.md "Depthwise microkernels"): k vectors over
// the channels, w over Wo, h over Ho, c = 1, r = R and s = S (the taps in
// registers, as oneDNN's jit_uni_dw_conv_kernel and XNNPACK's dwconv
// unroll them). The table's selected depthwise microkernels that tile the
// shape; without any (a table profiled without the family, or a quick one
// without this filter), every one the ISA's depthwise family admits that
// does, unmeasured (marked fallback): the loops above, the cache tiling these
// memory-bound layers depend on, are what the search tunes. One view: Flat(hw)
// and Wino(2) are not eligible with groups.
Space build_depthwise_space(const Shape& shape, const ClassTable& table, int64_t lanes, int threads) {
  Space sp;
  sp.shape = shape;
  sp.lanes = lanes;
  sp.threads = threads;
  auto tiles = [&](const UkSizes& u) {
    return u.dw && u.c == 1 && u.r == shape.R && u.s == shape.S && divides(u, u.h, shape, lanes);
  };
  for (const UkRecord& r : table.microkernels)
    if (r.selected && r.status == Status::ok && tiles(r.sizes)) {
      UkChoice ch;
      ch.uk = r.sizes;
      ch.fence = r.fence;
      sp.choices.push_back(ch);
    }
  if (sp.choices.empty()) {
    Isa isa;
    try {
      isa = load_isa(table.isa);
    } catch (const Error&) {
      throw Error(fmt::format("shape {}: the class table has no depthwise microkernel and its ISA {} is unknown to "
                              "this build; use a table of a known ISA",
                              shape.to_string(), table.isa));
    }
    for (const UkSizes& u : enumerate_ukernels(isa, "depthwise"))
      if (tiles(u)) {
        UkChoice ch;
        ch.uk = u;
        ch.fallback = true;
        sp.choices.push_back(ch);
      }
    // A filter the family has no r, s for (2x1, 11x1 in benchdnn's lists):
    // microkernels over part of it (r | R, s | S), the rest of the taps in
    // loops above them, as dense configurations tile r and s.
    bool partial = false;
    if (sp.choices.empty())
      for (const UkSizes& u : enumerate_ukernels(isa, "depthwise"))
        if (u.c == 1 && divides(u, u.h, shape, lanes)) {
          UkChoice ch;
          ch.uk = u;
          ch.fallback = true;
          sp.choices.push_back(ch);
          partial = true;
        }
    if (sp.choices.empty()) {
      std::string rs;
      for (int v : isa.depthwise.rs_values) rs += (rs.empty() ? "" : ", ") + std::to_string(v);
      throw Error(fmt::format("shape {}: no {} depthwise microkernel tiles this shape: its filter is {}x{} and the "
                              "depthwise family takes r and s in {{{}}} (depthwise_space.rs_values); use one of "
                              "those filter sizes",
                              shape.to_string(), isa.name, shape.R, shape.S, rs));
    }
    sp.note = fmt::format("the class table has no depthwise microkernel that tiles this shape (profiled without "
                          "the depthwise family, or not for this filter): the space holds the {} unmeasured ones "
                          "of the {} depthwise family that tile this shape{}",
                          sp.choices.size(), isa.name,
                          partial ? fmt::format(", each over part of the {}x{} filter", shape.R, shape.S) : "");
  }
  restrict_to_parallel(sp);
  return sp;
}

// config.h Lanes(g): groups of Cg = Kg < lanes channels waste lanes/Kg of
// every vector under the g loop (ResNeXt-50's 4 per group: a quarter of the
// lanes busy). The depthwise microkernels over lanes_view put lanes/Cg groups
// in a vector instead, one shuffle per input vector (oneDNN's and XNNPACK's
// depthwise layout), where the ISA has the shuffle (its lane_groups block).
void add_lanes_choices(Space& sp, const ClassTable& table) {
  if (!lanes_eligible(sp.shape, sp.lanes)) return;
  try {
    if (load_isa(table.isa).lane_permute.empty()) return;
  } catch (const Error&) {
    return;  // an ISA this build does not know: no Lanes(g), the g loop's choices stay
  }
  const Space dw = build_depthwise_space(lanes_view(sp.shape), table, sp.lanes, sp.threads);
  for (UkChoice ch : dw.choices) {
    ch.view = View{View::lanes, 0};
    sp.choices.push_back(ch);
  }
  if (!dw.note.empty()) sp.note += (sp.note.empty() ? "Lanes(g): " : "; Lanes(g): ") + dw.note;
}

}  // namespace

Space build_space(const Shape& shape, const ClassTable& table, int64_t lanes, int threads) {
  if (lanes < 1) throw Error(fmt::format("the vector length is {}; it must be >= 1", lanes));
  if (threads < 1) throw Error(fmt::format("--threads is {}; give at least 1", threads));
  validate_shape(shape);
  // Depthwise with one output per group: channels in the vector lanes, a
  // microkernel family of its own; every other grouping tiles one group
  // under the g loop (config.h g), and Cg = Kg below the lanes the depthwise
  // view as well (Lanes(g), add_lanes_choices).
  if (depthwise_shape(shape)) return build_depthwise_space(shape, table, lanes, threads);
  Space sp;
  sp.shape = shape;
  sp.lanes = lanes;
  sp.threads = threads;
  const int64_t Ho = shape.Ho();
  const Shape dense = loop_shape(shape);  // one group's problem: what the microkernels divide
  add_choices(sp, table, View{});
  // config.h Flat(hw): the same microkernels over the Ho*Wo pixels as one
  // column. Whether its streams beat the rows' is a matter of the whole
  // layer, not of the profile (on the 1x1 Yolo layers both come near the
  // peak, flat ahead on yolo9000-13 and the rows ahead on -9):
  // the search decides, and the sampler gives each view half its trials.
  if (flat_eligible(shape)) add_choices(sp, table, View{View::flat, 0});
  // config.h Wino(2): the 1x1 microkernels over the tiles of Winograd
  // F(2x2,3x3), 2.25x fewer multiply-adds than the rows', which can beat a
  // direct convolution such as oneDNN's brgconv on 3x3 layers like
  // yolo9000-12. With --threads > 1: Wino(2,b,threads), the
  // blocks shared among the threads (View::threads).
  if (threads == 1 && wino_eligible(shape)) {
    add_choices(sp, table, View{View::wino, 0});
    if (const int64_t b = fused_wino_block(shape)) add_choices(sp, table, View{View::wino, b});
  } else if (wino_eligible(shape)) {
    if (const int64_t b = threaded_wino_block(shape, threads)) add_choices(sp, table, View{View::wino, b, threads});
  }
  add_lanes_choices(sp, table);
  if (!sp.choices.empty()) {
    restrict_to_parallel(sp);
    return sp;
  }
  const std::vector<int64_t> ho_divisors = divisors(Ho);

  // 000 §4.2 / Fig. 7: otherwise fall back to a sub-optimal microkernel, the fastest that divides.
  const UkRecord* best = nullptr;
  for (const UkRecord& r : table.microkernels)
    if (!r.sizes.dw && r.status == Status::ok && divides(r.sizes, r.sizes.h, dense, lanes) &&
        (!best || r.gflops > best->gflops))
      best = &r;
  if (!best) {
    // Nothing divides alone (an Ho like 17 has no divisor up to the unroll
    // bound): the best pair of one class among all that ran, selected or not.
    std::map<std::tuple<int, int, int, int, int>, std::vector<const UkRecord*>> classes;
    for (const UkRecord& r : table.microkernels)
      if (!r.sizes.dw && r.status == Status::ok && divides(r.sizes, 1, dense, lanes))
        classes[{r.sizes.k, r.sizes.c, r.sizes.w, r.sizes.r, r.sizes.s}].push_back(&r);
    UkChoice pick;
    double pick_gflops = 0;
    for (auto& [key, members] : classes)
      for (const UkRecord* m1 : members)
        for (const UkRecord* m2 : members) {
          const double g = std::min(m1->gflops, m2->gflops);
          if (m1->sizes.h >= m2->sizes.h || g <= pick_gflops) continue;
          const auto counts = pair_counts(m1->sizes.h, m2->sizes.h, ho_divisors, 1);
          if (counts.empty()) continue;
          pick = UkChoice{m1->sizes, true, m2->sizes, counts[0].first, counts[0].second, true, pair_fence(*m1, *m2), View{}};
          pick_gflops = g;
        }
    if (pick_gflops <= 0) {
      Isa isa;
      try {
        isa = load_isa(table.isa);
      } catch (const Error&) {
        throw no_microkernel_error(dense, lanes);
      }
      sp.choices.push_back(unprofiled_choice(dense, table, isa, lanes, &sp.note));
      restrict_to_parallel(sp);
      return sp;
    }
    sp.choices.push_back(pick);
    sp.note = fmt::format(
        "no selected microkernel or pair divides this shape; using the best pair of non-selected ones that "
        "does: {} (at least {:.1f}% of peak)",
        pick.text(), 100 * pick_gflops / table.peak_gflops);
    return sp;
  }
  UkChoice ch;
  ch.uk = best->sizes;
  ch.fallback = true;
  ch.fence = best->fence;
  sp.choices.push_back(ch);
  sp.note = fmt::format(
      "no selected microkernel or pair divides this shape; using the best non-selected one that "
      "does: {} ({:.1f}% of peak)",
      ukernel_name(best->sizes, table.isa), best->percent_peak);
  restrict_to_parallel(sp);
  return sp;
}

Spec lseq_spec(const UkChoice& ch) {
  Spec l = make_spec(SpecKind::Lseq, Dim::h);
  l.seq = {{{ch.a, ch.uk.h}, {ch.b, ch.uk2.h}}};
  return l;
}

std::vector<Spec> microkernel_specs(const UkChoice& ch, int64_t c_reuse) {
  // 000 §4.1 microkernel [U_s, U_r, U_c, U_w, U_h, U_k, V_k] under the c reuse loop (000 §4.2).
  std::vector<Spec> v{make_spec(SpecKind::T, Dim::c, c_reuse)};
  auto unroll = [&](Dim d, int64_t n) {
    if (n > 1) v.push_back(make_spec(SpecKind::U, d, n));
  };
  unroll(Dim::s, ch.uk.s);
  unroll(Dim::r, ch.uk.r);
  unroll(Dim::c, ch.uk.c);
  unroll(Dim::w, ch.uk.w);
  if (ch.pair) {
    Spec u = make_spec(SpecKind::U, Dim::h);
    u.alpha = true;  // U(a,h): size from the Lseq (000 §3.3)
    v.push_back(u);
  } else {
    unroll(Dim::h, ch.uk.h);
  }
  unroll(Dim::k, ch.uk.k);
  v.push_back(make_spec(SpecKind::V, Dim::k));
  return v;
}

Config sample_config(const Space& space, std::mt19937_64& rng) {
  if (space.choices.empty()) throw Error("the search space has no microkernel choice");
  auto draw = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  // 000 §6.1: a choice uniformly, then a divisor of the remaining c for the
  // reuse loop. With the Flat(hw) view beside the rows, first a view, each
  // half the time: the flat view has far more (a, b) counts (every
  // a*h1 + b*h2 dividing Ho*Wo), and drawn among all choices they would take
  // nearly every sample of a 1x1 layer such as yolo9000-9, none of them faster.
  // Wino(2) is a third view, drawn likewise: each view that has choices, uniformly.
  // A view's choices are contiguous (add_choices adds one view at a time).
  // One view draws nothing here and two draw(2), as if Wino(2) did not exist,
  // so a layer without it keeps its samples for a seed.
  std::vector<std::vector<size_t>> views;
  for (size_t i = 0; i < space.choices.size(); ++i) {
    if (views.empty() || space.choices[views.back()[0]].view != space.choices[i].view) views.emplace_back();
    views.back().push_back(i);
  }
  const std::vector<size_t>& view = views.size() == 1 ? views[0] : views[draw(views.size())];
  const UkChoice& ch = space.choices[view[draw(view.size())]];
  std::vector<int64_t> reuses = divisors(space.remaining(ch, Dim::c));
  const int64_t reuse = reuses[draw(reuses.size())];
  std::array<int64_t, kNumDims> rem;
  for (int i = 0; i < kNumDims; ++i) rem[i] = space.remaining(ch, kDims[i]);
  rem[static_cast<int>(Dim::c)] /= reuse;
  std::optional<ParOption> par;  // issue 12: the P option, uniformly
  if (space.parallel) {
    const std::vector<ParOption> pars = space.parallel_options(ch);
    if (!pars.empty()) {
      par = pars[draw(pars.size())];
      for (int i = 0; i < kNumDims; ++i) rem[i] /= par->on(kDims[i]);
    }
  }
  rem[static_cast<int>(Dim::g)] = 1;  // outer_specs places the group loops

  // 000 §6.1: (dimension, factor) pairs uniformly among those that still divide, outwards.
  std::vector<Spec> outer;  // innermost first while building
  std::vector<std::pair<int, int64_t>> cand;
  while (true) {
    cand.clear();
    for (int i = 0; i < kNumDims; ++i)
      for (int64_t f : divisors(rem[i]))
        if (f > 1) cand.emplace_back(i, f);
    if (cand.empty()) break;
    auto [i, f] = cand[draw(cand.size())];
    outer.push_back(make_spec(SpecKind::T, kDims[i], f));
    rem[i] /= f;
  }
  std::reverse(outer.begin(), outer.end());

  // 000 §4.2: the Lseq at any of the outer.size() + 1 slots above the reuse loop.
  if (ch.pair) outer.insert(outer.begin() + static_cast<std::ptrdiff_t>(draw(outer.size() + 1)), lseq_spec(ch));
  if (par || space.group_loops(ch)) {  // outermost, above any Lseq
    const std::vector<Spec> ps = outer_specs(space, ch, par ? *par : ParOption{Dim::n, 1});
    outer.insert(outer.begin(), ps.begin(), ps.end());
  }
  Config c;
  c.view = ch.view;
  c.specs = std::move(outer);
  for (const Spec& s : microkernel_specs(ch, reuse)) c.specs.push_back(s);
  c.fence = ch.fence;  // the form the profile measured fastest; local searches tune it from there
  // Pf(w) half the time where it applies: it pays where weights stream from
  // beyond L2 (resnet18-12's, config.h) and costs a little elsewhere.
  c.prefetch = prefetch_loop(c) >= 0 && draw(2) == 1;
  // Pf(o) half the time: a switch that gains some layers and costs others
  // (config.h). Drawn last, so the rest of a sample comes from the same draws
  // as without the switch (a seed keeps its loops).
  c.prefetch_out = draw(2) == 1;
  // Nt(o) one time in eight, drawn after Pf(o) for the same reason. It loses
  // on nearly every ResNet-18 and Yolo-9000 layer (the same configuration
  // with and without it, up to 15 % slower with it), so half the random
  // samples would spend trials on it; every configuration with it stays
  // reachable (size() counts them).
  c.stream_out = draw(8) == 0;
  return c;
}

namespace {

// The microkernel part of a configuration: the U sizes (h 1 for U(a,h)),
// whether it has U(a,h), and its Lseq along h; nullopt for a U factor out
// of range or a U along n.
struct UkPart {
  UkSizes u;
  bool alpha = false;
  const Spec* lseq = nullptr;
};
std::optional<UkPart> uk_part(const Config& c) {
  UkPart p;
  for (const Spec& s : c.specs) {
    if (s.kind == SpecKind::Lseq && s.dim == Dim::h) p.lseq = &s;
    if (s.kind != SpecKind::U) continue;
    if (s.alpha) {
      p.alpha = true;
      continue;
    }
    if (s.factor < 1 || s.factor > INT_MAX) return std::nullopt;
    const int f = static_cast<int>(s.factor);
    switch (s.dim) {
      case Dim::k: p.u.k = f; break;
      case Dim::c: p.u.c = f; break;
      case Dim::w: p.u.w = f; break;
      case Dim::h: p.u.h = f; break;
      case Dim::r: p.u.r = f; break;
      case Dim::s: p.u.s = f; break;
      case Dim::n:
      case Dim::g: return std::nullopt;
    }
  }
  return p;
}

}  // namespace

int choice_of(const Space& space, const Config& c) {
  const std::optional<UkPart> p = uk_part(c);
  if (!p) return -1;
  UkSizes u = p->u;
  u.dw = depthwise_shape(view_shape(c.view, space.shape));  // the U sizes name a depthwise microkernel there
  for (size_t i = 0; i < space.choices.size(); ++i) {
    const UkChoice& ch = space.choices[i];
    if (ch.view != c.view) continue;
    if (!ch.pair) {
      if (!p->lseq && !p->alpha && ch.uk == u) return static_cast<int>(i);
      continue;
    }
    UkSizes e = ch.uk;
    e.h = 1;
    if (p->lseq && p->alpha && e == u && p->lseq->seq[0] == std::make_pair(ch.a, int64_t(ch.uk.h)) &&
        p->lseq->seq[1] == std::make_pair(ch.b, int64_t(ch.uk2.h)))
      return static_cast<int>(i);
  }
  return -1;
}

int add_capped_pair(Space& space, const ClassTable& table, const Config& c) {
  if (const int i = choice_of(space, c); i >= 0) return i;
  const std::optional<UkPart> p = uk_part(c);
  if (!p || !p->lseq || !p->alpha) return -1;
  if (std::none_of(space.choices.begin(), space.choices.end(), [&](const UkChoice& ch) { return ch.view == c.view; }))
    return -1;
  // Plain variables, not a structured binding: C++17 lambdas cannot capture those (clang).
  const int64_t a = p->lseq->seq[0].first, h1 = p->lseq->seq[0].second;
  const int64_t b = p->lseq->seq[1].first, h2 = p->lseq->seq[1].second;
  if (a < 1 || b < 1 || h1 < 1 || h2 <= h1 || h2 > INT_MAX) return -1;
  UkSizes u1 = p->u, u2 = p->u;
  u1.h = int(h1);
  u2.h = int(h2);
  const UkRecord *m1 = table.find(u1), *m2 = table.find(u2);
  auto usable = [](const UkRecord* m) { return m && m->selected && m->status == Status::ok; };
  if (!usable(m1) || !usable(m2)) return -1;
  // One class: the same sizes but h (pairs are of one class, 000 §4.2).
  const bool one_class = std::any_of(table.classes.begin(), table.classes.end(), [&](const UkClass& cls) {
    UkSizes s = cls.sizes;
    s.h = 1;
    return s == p->u && std::count(cls.h.begin(), cls.h.end(), int(h1)) && std::count(cls.h.begin(), cls.h.end(), int(h2));
  });
  if (!one_class || !divides(u1, a * h1 + b * h2, loop_shape(view_shape(c.view, space.shape)), space.lanes)) return -1;
  const UkChoice ch = pair_choice(*m1, *m2, a, b, c.view);
  if (space.parallel && space.parallel_options(ch).empty()) return -1;
  space.choices.push_back(ch);
  return int(space.choices.size() - 1);
}

}  // namespace convtune
