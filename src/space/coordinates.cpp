// The coordinate view of the structured space (002 §3 parameter types over
// 000 §4.2's space).
#include "convtune/space/coordinates.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "convtune/core/error.h"

namespace convtune {

namespace {

constexpr int kC = static_cast<int>(Dim::c);
constexpr int kG = static_cast<int>(Dim::g);

std::vector<int64_t> distinct_primes(int64_t n) {
  std::vector<int64_t> v = prime_factors(n);
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

int exponent(int64_t n, int64_t p) {
  int e = 0;
  for (; n % p == 0; n /= p) ++e;
  return e;
}

size_t draw(std::mt19937_64& rng, size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }

}  // namespace

CoordinateView::CoordinateView(const Space& space) : space_(space) {
  if (space.choices.empty()) throw Error("the search space has no microkernel choice");
  for (const UkChoice& ch : space.choices)
    for (int d = 0; d < kNumDims; ++d)
      // g has no slots: outer_specs fixes the group loops (config.h g).
      if (d != kG) nu_[d] = std::max(nu_[d], int(prime_factors(space.remaining(ch, kDims[d])).size()) + (d == kC));
  for (int d = 0; d < kNumDims; ++d) {
    offset_[d] = total_slots_;
    total_slots_ += nu_[d];
  }
  // Classes: same sizes but h (000 §4.1) and the same view (rows, Flat(hw), Wino(2)), members by mean h.
  std::map<std::tuple<int, int, int, int, int, int, int64_t>, int> key_to_class;
  class_of_.resize(space.choices.size());
  pos_in_class_.resize(space.choices.size());
  for (size_t i = 0; i < space.choices.size(); ++i) {
    const UkChoice& ch = space.choices[i];
    h_of_.push_back(ch.pair ? double(ch.h_extent()) / double(ch.a + ch.b) : double(ch.uk.h));
    auto key = std::make_tuple(ch.uk.k, ch.uk.c, ch.uk.w, ch.uk.r, ch.uk.s, int(ch.view.kind), ch.view.block);
    auto it = key_to_class.emplace(key, int(classes_.size())).first;
    if (it->second == int(classes_.size())) classes_.emplace_back();
    classes_[size_t(it->second)].push_back(int(i));
    class_of_[i] = it->second;
  }
  for (auto& members : classes_) {
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return h_of_[size_t(a)] < h_of_[size_t(b)]; });
    for (size_t j = 0; j < members.size(); ++j) pos_in_class_[size_t(members[j])] = int(j);
  }
}

int CoordinateView::dim_of(int id) const {
  for (int d = 0; d < kNumDims; ++d)
    if (id >= offset_[d] && id < offset_[d] + nu_[d]) return d;
  throw Error("coordinates: slot id out of range (internal error)");
}

int64_t CoordinateView::factor(const Point& p, int id) const {
  const int d = dim_of(id);
  return p.factors[size_t(d)][size_t(id - offset_[d])];
}

std::vector<ParamId> CoordinateView::params() const {
  std::vector<ParamId> v;
  for (Dim d : kDims)
    if (d != Dim::g) v.push_back({Param::factor, d});
  v.push_back({Param::order, Dim::n});
  v.push_back({Param::choice, Dim::n});
  v.push_back({Param::lseq, Dim::n});
  v.push_back({Param::prefetch, Dim::n});
  v.push_back({Param::prefetch_out, Dim::n});
  v.push_back({Param::stream_out, Dim::n});
  if (std::any_of(space_.choices.begin(), space_.choices.end(),
                  [](const UkChoice& ch) { return fence_fits(TapFence::s, ch.uk); }))
    v.push_back({Param::fence, Dim::n});
  if (space_.parallel) v.push_back({Param::parallel, Dim::n});
  return v;
}

Config CoordinateView::to_config(const Point& p) const {
  const UkChoice& ch = space_.choices[size_t(p.choice)];
  Config c;
  c.view = ch.view;
  for (const Spec& ps : outer_specs(space_, ch, p.par)) c.specs.push_back(ps);
  for (size_t i = 0; i <= p.order.size(); ++i) {
    if (ch.pair && int(i) == p.lseq) c.specs.push_back(lseq_spec(ch));
    if (i == p.order.size()) break;
    const int id = p.order[i], d = dim_of(id);
    const int64_t f = factor(p, id);
    if (f > 1) {
      Spec t;
      t.kind = SpecKind::T;
      t.dim = kDims[d];
      t.factor = f;
      c.specs.push_back(t);
    }
  }
  for (const Spec& s : microkernel_specs(ch, p.factors[kC][0])) c.specs.push_back(s);
  if (fence_fits(p.fence, ch.uk)) c.fence = p.fence;
  c.prefetch = p.prefetch && prefetch_loop(c) >= 0;
  c.prefetch_out = p.prefetch_out;
  c.stream_out = p.stream_out;
  return c;
}

std::optional<Point> CoordinateView::from_config(const Config& c) const {
  const int ci = choice_of(space_, c);
  if (ci < 0 || c.specs.empty()) return std::nullopt;
  const UkChoice& ch = space_.choices[size_t(ci)];
  size_t m = c.specs.size();
  while (m > 0 && (c.specs[m - 1].kind == SpecKind::U || c.specs[m - 1].kind == SpecKind::V)) --m;
  if (m == 0 || c.specs[m - 1].kind != SpecKind::T || c.specs[m - 1].dim != Dim::c) return std::nullopt;
  const int64_t reuse = c.specs[m - 1].factor;
  std::vector<Spec> suffix = microkernel_specs(ch, reuse);
  if (suffix.size() != c.specs.size() - m + 1 || !std::equal(suffix.begin(), suffix.end(), c.specs.begin() + long(m - 1)))
    return std::nullopt;

  if (!fence_fits(c.fence, ch.uk) || (c.prefetch && prefetch_loop(c) < 0)) return std::nullopt;
  Point p;
  p.choice = ci;
  p.fence = c.fence;
  p.prefetch = c.prefetch;
  p.prefetch_out = c.prefetch_out;
  p.stream_out = c.stream_out;
  size_t first = 0;  // issue 12: the outermost P, exactly when the space has them
  if (space_.group_loops(ch)) {  // the group loops and any P: one of the choice's outer_specs
    if (!match_outer(c, ch, p.par, first)) return std::nullopt;
  } else if (space_.parallel && ch.view.threads > 1) {  // Wino(2,b,t): the view's threads, no P loop
    p.par = space_.parallel_options(ch).at(0);
  } else if (space_.parallel) {
    if (c.specs[0].kind != SpecKind::P) return std::nullopt;
    ParOption par{c.specs[0].dim, c.specs[0].factor};
    par.threads1 = c.specs[0].threads;
    first = 1;
    if (c.specs.size() > 1 && c.specs[1].kind == SpecKind::P) {  // a nested pair
      par.dim2 = c.specs[1].dim;
      par.count2 = c.specs[1].factor;
      first = 2;
    }
    const std::vector<ParOption> pars = space_.parallel_options(ch);
    if (std::find(pars.begin(), pars.end(), par) == pars.end()) return std::nullopt;
    p.par = par;
  }
  p.factors.resize(kNumDims);
  for (int d = 0; d < kNumDims; ++d) p.factors[size_t(d)].assign(size_t(nu_[d]), 1);
  if (nu_[kC] < 1) return std::nullopt;
  p.factors[kC][0] = reuse;
  int used[kNumDims] = {};
  used[kC] = 1;
  std::vector<bool> taken(size_t(total_slots_), false);
  bool lseq = false;
  for (size_t i = first; i + 1 < m; ++i) {
    const Spec& s = c.specs[i];
    if (s.kind == SpecKind::Lseq) {
      if (lseq || !ch.pair) return std::nullopt;
      lseq = true;
      p.lseq = int(p.order.size());
      continue;
    }
    const int d = static_cast<int>(s.dim);
    if (s.kind != SpecKind::T || s.factor < 2 || used[d] >= nu_[d]) return std::nullopt;
    p.factors[size_t(d)][size_t(used[d])] = s.factor;
    p.order.push_back(slot_id(s.dim, used[d]));
    taken[size_t(p.order.back())] = true;
    ++used[d];
  }
  if (ch.pair != lseq) return std::nullopt;
  for (int d = 0; d < kNumDims; ++d) {
    int64_t prod = 1;
    const int64_t want = target(p, kDims[d]);
    for (int64_t f : p.factors[size_t(d)]) {
      if (f > want / prod) return std::nullopt;  // no overflow
      prod *= f;
    }
    if (prod != want) return std::nullopt;
  }
  // Empty slots go innermost, in id order (they print nothing).
  for (int id = 0; id < total_slots_; ++id)
    if (!taken[size_t(id)] && id != slot_id(Dim::c, 0)) p.order.push_back(id);
  return p;
}

Point CoordinateView::random_point(std::mt19937_64& rng) const {
  Config c = sample_config(space_, rng);
  std::optional<Point> p = from_config(c);
  if (!p) throw Error("coordinates: a sampled configuration has no point (internal error): " + to_string(c));
  return *p;
}

std::vector<int> CoordinateView::slots_in_order(const Point& p, Dim d) const {
  std::vector<int> v;
  for (int id : p.order)
    if (dim_of(id) == static_cast<int>(d)) v.push_back(id);
  if (d == Dim::c) v.push_back(slot_id(Dim::c, 0));
  return v;
}

bool CoordinateView::match_outer(const Config& c, const UkChoice& ch, ParOption& par, size_t& first) const {
  std::vector<ParOption> pars{ParOption{Dim::n, 1}};
  if (space_.parallel) pars = space_.parallel_options(ch);
  bool found = false;
  for (const ParOption& o : pars) {  // the longest prefix: P(2,k) P(2,h) is not P(2,k) and a T(2,h)
    const std::vector<Spec> v = outer_specs(space_, ch, o);
    if (v.size() > c.specs.size() || (found && v.size() <= first) || !std::equal(v.begin(), v.end(), c.specs.begin()))
      continue;
    found = true;
    par = o;
    first = v.size();
  }
  return found;
}

int64_t CoordinateView::target(const Point& p, Dim d) const {
  if (d == Dim::g) return 1;  // no slots: the group loops are outer_specs'
  const int64_t rem = space_.remaining(space_.choices[size_t(p.choice)], d);
  return rem / p.par.on(d);
}

void CoordinateView::fit(Point& p, Dim dim) const {
  const int d = static_cast<int>(dim);
  auto& f = p.factors[size_t(d)];
  const int64_t target = this->target(p, dim);
  int64_t prod = 1;
  for (int64_t x : f) prod *= x;
  if (prod == target) return;
  std::vector<int> inner = slots_in_order(p, dim);  // innermost first below
  std::reverse(inner.begin(), inner.end());
  auto at = [&](int id) -> int64_t& { return f[size_t(id - offset_[d])]; };
  std::set<int64_t> primes;
  for (int64_t q : prime_factors(prod)) primes.insert(q);
  for (int64_t q : prime_factors(target)) primes.insert(q);
  for (int64_t q : primes) {
    int extra = exponent(prod, q) - exponent(target, q);
    for (int id : inner)  // take from the innermost levels first
      while (extra > 0 && at(id) % q == 0) {
        at(id) /= q;
        --extra;
      }
    if (extra < 0) {  // give to the innermost level (c: the reuse loop)
      int dest = inner.empty() ? -1 : inner.front();
      for (int id : inner)
        if (at(id) > 1 || (dim == Dim::c && id == slot_id(Dim::c, 0))) {
          dest = id;
          break;
        }
      if (dest < 0) throw Error("coordinates: no slot for a factor (internal error)");
      for (; extra < 0; ++extra) at(dest) *= q;
    }
  }
}

Point CoordinateView::with_choice(const Point& p, int choice) const {
  Point q = p;
  q.choice = choice;
  if (space_.parallel) {  // keep the P where the new choice has it, else the nearest: same dimension, most threads
    const std::vector<ParOption> pars = space_.parallel_options(space_.choices[size_t(choice)]);
    if (std::find(pars.begin(), pars.end(), p.par) == pars.end()) {
      // The option of most threads, preferring the same split dimension(s).
      auto key = [&p](const ParOption& o) {
        return std::make_tuple(o.dim == p.par.dim && (o.on(p.par.dim2) > 1) == (p.par.count2 > 1), o.threads());
      };
      q.par = ParOption{Dim::n, 1};
      for (const ParOption& o : pars)
        if (q.par.count == 1 || key(o) > key(q.par)) q.par = o;
    }
  }
  if (!fence_fits(q.fence, space_.choices[size_t(choice)].uk)) q.fence = TapFence::none;
  for (Dim d : kDims) fit(q, d);
  return q;
}

Point CoordinateView::with_fence(const Point& p, TapFence f) const {
  if (!fence_fits(f, space_.choices[size_t(p.choice)].uk)) return p;
  Point q = p;
  q.fence = f;
  return q;
}

Point CoordinateView::with_parallel(const Point& p, const ParOption& par) const {
  const std::vector<ParOption> pars = space_.parallel_options(space_.choices[size_t(p.choice)]);
  if (!space_.parallel || std::find(pars.begin(), pars.end(), par) == pars.end()) return p;
  Point q = p;
  q.par = par;
  for (Dim d : {p.par.dim, p.par.dim2, par.dim, par.dim2}) fit(q, d);
  return q;
}

Point CoordinateView::with_factors(const Point& p, Dim d, const std::vector<int64_t>& factors) const {
  Point q = p;
  q.factors[size_t(static_cast<int>(d))] = factors;
  fit(q, d);
  return q;
}

std::vector<int> CoordinateView::nearest_in_other_classes(int c) const {
  std::vector<int> v;
  for (size_t k = 0; k < classes_.size(); ++k) {
    if (int(k) == class_of_[size_t(c)]) continue;
    int best = classes_[k][0];
    for (int m : classes_[k])
      if (std::abs(h_of_[size_t(m)] - h_of_[size_t(c)]) < std::abs(h_of_[size_t(best)] - h_of_[size_t(c)])) best = m;
    v.push_back(best);
  }
  return v;
}

std::vector<TapFence> CoordinateView::other_fences(const Point& p) const {
  std::vector<TapFence> v;
  for (TapFence f : {TapFence::none, TapFence::r, TapFence::s})
    if (f != p.fence && fence_fits(f, space_.choices[size_t(p.choice)].uk)) v.push_back(f);
  return v;
}

std::vector<int> CoordinateView::choice_neighbors(int c) const {
  std::vector<int> v;
  const auto& own = classes_[size_t(class_of_[size_t(c)])];
  const int pos = pos_in_class_[size_t(c)];
  if (pos > 0) v.push_back(own[size_t(pos - 1)]);
  if (pos + 1 < int(own.size())) v.push_back(own[size_t(pos + 1)]);
  for (int m : nearest_in_other_classes(c)) v.push_back(m);
  return v;
}

int CoordinateView::lseq_step(const Point& p, int dir) const {
  auto filled = [&](int i) { return factor(p, p.order[size_t(i)]) > 1; };
  const int n = int(p.order.size());
  if (dir > 0) {
    for (int j = p.lseq; j < n; ++j)
      if (filled(j)) return j + 1;
  } else {
    for (int j = std::min(p.lseq, n) - 1; j >= 0; --j)
      if (filled(j)) return j;
  }
  return -1;
}

std::vector<Neighbor> CoordinateView::neighbors(const Point& p, std::mt19937_64& rng, int classes) const {
  std::vector<Neighbor> out;
  std::set<std::string> seen{to_string(to_config(p))};
  auto add = [&](const Point& q, const Move& m) {
    if (seen.insert(to_string(to_config(q))).second) out.push_back({q, m});
  };
  const int reuse_id = slot_id(Dim::c, 0);
  auto ref = [&](Point& q, int id) -> int64_t& { return q.factors[size_t(dim_of(id))][size_t(id - offset_[dim_of(id)])]; };
  auto val = [&](const Point& q, int id) { return factor(q, id); };

  // Factorizations (002 §3): one prime between adjacent levels, or split off inwards.
  for (Dim d : kDims) {
    std::vector<int> levels;
    for (int id : slots_in_order(p, d))
      if (val(p, id) > 1 || id == reuse_id) levels.push_back(id);
    auto transfer = [&](int from, int to) {
      for (int64_t q : distinct_primes(val(p, from))) {
        Point x = p;
        ref(x, from) /= q;
        ref(x, to) *= q;
        add(x, {{Param::factor, d}, from, to, q});
      }
    };
    for (size_t i = 0; i + 1 < levels.size(); ++i) {
      transfer(levels[i], levels[i + 1]);
      transfer(levels[i + 1], levels[i]);
    }
    int empty = -1;
    for (int s = 0; s < nu_[static_cast<int>(d)] && empty < 0; ++s)
      if (slot_id(d, s) != reuse_id && val(p, slot_id(d, s)) == 1) empty = slot_id(d, s);
    if (empty < 0) continue;
    for (int from : levels)
      for (int64_t q : distinct_primes(val(p, from))) {
        if (val(p, from) == q && from != reuse_id) continue;  // that is a swap, not a split
        Point x = p;  // the empty slot moves just inside `from` (the reuse loop: innermost)
        const auto e = std::find(x.order.begin(), x.order.end(), empty);
        if (e - x.order.begin() < x.lseq) --x.lseq;
        x.order.erase(e);
        auto at = from == reuse_id ? x.order.end() : std::find(x.order.begin(), x.order.end(), from) + 1;
        if (at - x.order.begin() < x.lseq) ++x.lseq;
        x.order.insert(at, empty);
        ref(x, from) /= q;
        ref(x, empty) *= q;
        add(x, {{Param::factor, d}, from, empty, q});
      }
  }
  // Loop order: two adjacent levels swapped (002 §3 permutation, restricted to neighbours).
  std::vector<int> filled;
  for (int i = 0; i < int(p.order.size()); ++i)
    if (val(p, p.order[size_t(i)]) > 1) filled.push_back(i);
  for (size_t i = 0; i + 1 < filled.size(); ++i) {
    Point x = p;
    std::swap(x.order[size_t(filled[i])], x.order[size_t(filled[i + 1])]);
    Move m;
    m.param = {Param::order, Dim::n};
    m.from = p.order[size_t(filled[i])];
    m.dir = +1;
    add(x, m);
  }
  // Microkernel: previous/next in the class, and a few other classes.
  const auto& own = classes_[size_t(class_of_[size_t(p.choice)])];
  for (int dir : {-1, +1}) {
    const int j = pos_in_class_[size_t(p.choice)] + dir;
    if (j < 0 || j >= int(own.size())) continue;
    Move m;
    m.param = {Param::choice, Dim::n};
    m.dir = dir;
    m.choice = own[size_t(j)];
    add(with_choice(p, m.choice), m);
  }
  std::vector<int> others = nearest_in_other_classes(p.choice);
  std::shuffle(others.begin(), others.end(), rng);
  for (size_t i = 0; i < others.size() && int(i) < classes; ++i) {
    Move m;
    m.param = {Param::choice, Dim::n};
    m.choice = others[i];
    add(with_choice(p, m.choice), m);
  }
  // Issue 12: every other P option of the choice.
  if (space_.parallel)
    for (const ParOption& o : space_.parallel_options(space_.choices[size_t(p.choice)])) {
      Move m;
      m.param = {Param::parallel, Dim::n};
      add(with_parallel(p, o), m);
    }
  // Every other fence the microkernel can take.
  for (TapFence f : other_fences(p)) {
    Move m;
    m.param = {Param::fence, Dim::n};
    add(with_fence(p, f), m);
  }
  // Pf(w) switched.
  {
    Point x = p;
    x.prefetch = !p.prefetch;
    Move m;
    m.param = {Param::prefetch, Dim::n};
    add(x, m);
  }
  // Pf(o) switched.
  {
    Point x = p;
    x.prefetch_out = !p.prefetch_out;
    Move m;
    m.param = {Param::prefetch_out, Dim::n};
    add(x, m);
  }
  // Nt(o) switched.
  {
    Point x = p;
    x.stream_out = !p.stream_out;
    Move m;
    m.param = {Param::stream_out, Dim::n};
    add(x, m);
  }
  // Lseq across one level.
  if (space_.choices[size_t(p.choice)].pair)
    for (int dir : {-1, +1}) {
      const int l = lseq_step(p, dir);
      if (l < 0) continue;
      Point x = p;
      x.lseq = l;
      Move m;
      m.param = {Param::lseq, Dim::n};
      m.dir = dir;
      add(x, m);
    }
  return out;
}

std::optional<Point> CoordinateView::repeat(const Point& p, const Move& m) const {
  Point x = p;
  switch (m.param.kind) {
    case Param::factor: {
      const int d = dim_of(m.from);
      auto& f = x.factors[size_t(d)];
      if (f[size_t(m.from - offset_[d])] % m.prime != 0) return std::nullopt;
      f[size_t(m.from - offset_[d])] /= m.prime;
      f[size_t(m.to - offset_[d])] *= m.prime;
      return x;
    }
    case Param::order: {
      auto it = std::find(x.order.begin(), x.order.end(), m.from);
      if (it == x.order.end()) return std::nullopt;
      int a = int(it - x.order.begin());
      for (int b = a + m.dir; b >= 0 && b < int(x.order.size()); b += m.dir) {
        if (factor(x, x.order[size_t(b)]) > 1) {
          std::swap(x.order[size_t(a)], x.order[size_t(b)]);
          return x;
        }
      }
      return std::nullopt;
    }
    case Param::choice: {
      if (m.dir == 0) return std::nullopt;
      const auto& own = classes_[size_t(class_of_[size_t(p.choice)])];
      const int j = pos_in_class_[size_t(p.choice)] + m.dir;
      if (j < 0 || j >= int(own.size())) return std::nullopt;
      return with_choice(p, own[size_t(j)]);
    }
    case Param::lseq: {
      if (!space_.choices[size_t(p.choice)].pair) return std::nullopt;
      const int l = lseq_step(p, m.dir);
      if (l < 0) return std::nullopt;
      x.lseq = l;
      return x;
    }
    case Param::fence:
    case Param::parallel:
    case Param::prefetch:
    case Param::prefetch_out:
    case Param::stream_out: return std::nullopt;  // categorical: no direction to go on in
  }
  return std::nullopt;
}

Point CoordinateView::random_step(const Point& p, ParamId param, std::mt19937_64& rng) const {
  Point x = p;
  switch (param.kind) {
    case Param::factor: {
      const int d = static_cast<int>(param.dim);
      auto& f = x.factors[size_t(d)];
      std::vector<std::tuple<int, int, int64_t>> acts;  // 002 §3: prime z from slot i to slot j
      for (int i = 0; i < nu_[d]; ++i)
        for (int64_t q : distinct_primes(f[size_t(i)]))
          for (int j = 0; j < nu_[d]; ++j)
            if (j != i) acts.emplace_back(i, j, q);
      if (acts.empty()) return x;
      auto [i, j, q] = acts[draw(rng, acts.size())];
      f[size_t(i)] /= q;
      f[size_t(j)] *= q;
      return x;
    }
    case Param::order: {
      std::vector<std::pair<int, int>> swaps;  // 002 §3: any two-cycle that moves a level
      auto filled = [&](int i) { return factor(x, x.order[size_t(i)]) > 1; };
      for (int i = 0; i < int(x.order.size()); ++i)
        for (int j = i + 1; j < int(x.order.size()); ++j)
          if (filled(i) || filled(j)) swaps.emplace_back(i, j);
      if (swaps.empty()) return x;
      auto [i, j] = swaps[draw(rng, swaps.size())];
      std::swap(x.order[size_t(i)], x.order[size_t(j)]);
      return x;
    }
    case Param::choice: {
      std::vector<int> v = choice_neighbors(p.choice);
      if (v.empty()) return x;
      return with_choice(p, v[draw(rng, v.size())]);
    }
    case Param::lseq: {
      if (!space_.choices[size_t(p.choice)].pair) return x;
      std::vector<int> to;
      for (int dir : {-1, +1})
        if (int l = lseq_step(p, dir); l >= 0) to.push_back(l);
      if (to.empty()) return x;
      x.lseq = to[draw(rng, to.size())];
      return x;
    }
    case Param::fence: {
      const std::vector<TapFence> others = other_fences(p);
      if (others.empty()) return x;
      return with_fence(p, others[draw(rng, others.size())]);
    }
    case Param::prefetch:
      x.prefetch = !p.prefetch;
      return x;
    case Param::prefetch_out:
      x.prefetch_out = !p.prefetch_out;
      return x;
    case Param::stream_out:
      x.stream_out = !p.stream_out;
      return x;
    case Param::parallel: {
      if (!space_.parallel) return x;
      std::vector<ParOption> others;
      for (const ParOption& o : space_.parallel_options(space_.choices[size_t(p.choice)]))
        if (!(o == p.par)) others.push_back(o);
      if (others.empty()) return x;
      return with_parallel(p, others[draw(rng, others.size())]);
    }
  }
  return x;
}

Point CoordinateView::q_walk(const Point& p, ParamId param, double q, std::mt19937_64& rng) const {
  Point x = p;
  std::uniform_real_distribution<double> u(0, 1);
  for (int steps = 0; u(rng) < q && steps < 1000; ++steps) x = random_step(x, param, rng);
  return x;
}

}  // namespace convtune
