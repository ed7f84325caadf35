// 002 §4, Algorithm 1: OpEvo over the coordinate view. lambda random
// configurations first; then each generation takes the top lambda measured
// as parents, builds rho children by fitness-proportional choice of a parent
// per parameter (002 Eq. 2), mutates every parameter by a q-random walk
// (002 Eq. 3) and mutates again while the child was already sampled.
// Fitness is GFLOP/s, 0 for a failed candidate (002 §4.2).
#include <algorithm>
#include <deque>
#include <set>

#include "convtune/space/coordinates.h"
#include "convtune/search/search.h"

namespace convtune {

namespace {

class OpEvoSearch : public SearchStrategy {
 public:
  OpEvoSearch(const Space& space, uint64_t seed, const SearchOptions& opt) : view_(space), rng_(seed), opt_(opt) {}
  std::string name() const override { return "opevo"; }

  std::vector<Config> propose(size_t n) override {
    std::vector<Config> out;
    while (out.size() < n) {
      // A generation needs the previous one measured (Algorithm 1 lines 4-6).
      if (serve_.empty() && (!in_flight_.empty() || !generation())) break;
      Config c = view_.to_config(serve_.front());
      serve_.pop_front();
      const std::string t = to_string(c);
      if (observed_.count(t)) continue;
      in_flight_.insert(t);
      out.push_back(c);
    }
    return out;
  }

  void observe(const Config& c, const Observation& o) override {
    const std::string t = to_string(c);
    seen_.insert(t);
    in_flight_.erase(t);
    if (!observed_.insert(t).second) return;
    if (auto p = view_.from_config(c)) pop_.push_back({*p, o.ok ? o.gflops : 0});
  }

  nlohmann::json info() const override {
    return {{"parents", opt_.parents}, {"offspring", opt_.offspring}, {"mutation_rate", opt_.mutation_rate},
            {"generation", generation_}};
  }

 private:
  struct Member {
    Point point;
    double fitness;
  };

  bool fresh(const Point& p) { return seen_.insert(to_string(view_.to_config(p))).second; }

  bool add_random() {
    for (int tries = 0; tries < 2000; ++tries) {
      Point p = view_.random_point(rng_);
      if (fresh(p)) {
        serve_.push_back(p);
        return true;
      }
    }
    return false;
  }

  // One batch of new individuals: the initial lambda (Algorithm 1 line 1),
  // random ones while everything failed, else rho children (lines 4-5).
  bool generation() {
    const size_t lambda = size_t(opt_.parents), rho = size_t(opt_.offspring);
    double best = 0;
    for (const Member& m : pop_) best = std::max(best, m.fitness);
    if (pop_.size() < lambda || best <= 0) {
      const size_t want = pop_.size() < lambda ? lambda - pop_.size() : rho;
      for (size_t i = 0; i < want; ++i)
        if (!add_random()) break;
      return !serve_.empty();
    }
    ++generation_;
    std::vector<const Member*> parents;
    for (const Member& m : pop_) parents.push_back(&m);
    std::stable_sort(parents.begin(), parents.end(), [](const Member* a, const Member* b) { return a->fitness > b->fitness; });
    parents.resize(std::min(parents.size(), lambda));
    std::vector<double> w;
    for (const Member* m : parents) w.push_back(m->fitness);
    std::discrete_distribution<size_t> pick(w.begin(), w.end());
    for (size_t i = 0; i < rho; ++i) {
      // 002 Eq. 2: every parameter from its own fitness-proportional parent.
      Point x = parents[pick(rng_)]->point;  // the microkernel choice
      x.order = parents[pick(rng_)]->point.order;
      x.lseq = parents[pick(rng_)]->point.lseq;
      x = view_.with_fence(x, parents[pick(rng_)]->point.fence);  // kept when x's choice allows it
      x.prefetch = parents[pick(rng_)]->point.prefetch;
      x.prefetch_out = parents[pick(rng_)]->point.prefetch_out;
      x.stream_out = parents[pick(rng_)]->point.stream_out;
      if (view_.space().parallel)  // the P option too, kept when x's choice has it
        x = view_.with_parallel(x, parents[pick(rng_)]->point.par);
      for (const ParamId& p : view_.params())
        if (p.kind == Param::factor) x = view_.with_factors(x, p.dim, parents[pick(rng_)]->point.factors[size_t(p.dim)]);
      // 002 §4.3-4.4: mutate, and again while already sampled.
      bool ok = false;
      for (int tries = 0; tries < 1000 && !ok; ++tries) {
        for (const ParamId& p : view_.params()) x = view_.q_walk(x, p, opt_.mutation_rate, rng_);
        ok = fresh(x);
      }
      if (ok) serve_.push_back(x);
      else if (!add_random()) break;
    }
    return !serve_.empty();
  }

  CoordinateView view_;
  std::mt19937_64 rng_;
  SearchOptions opt_;
  std::set<std::string> seen_, observed_, in_flight_;  // seen: generated or observed
  std::vector<Member> pop_;
  std::deque<Point> serve_;
  int64_t generation_ = 0;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_opevo_search(const Space& space, uint64_t seed, const SearchOptions& opt) {
  return std::make_unique<OpEvoSearch>(space, seed, opt);
}

}  // namespace convtune
