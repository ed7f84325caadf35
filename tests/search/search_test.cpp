// The coordinate view (002 §3) and the strategies (003, 002, 004, 001 §4.1)
// on synthetic objectives: a cost function stands in for measurement, so
// nothing here is timed.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "convtune/offline/class_table.h"
#include "convtune/space/coordinates.h"
#include "convtune/tune/records.h"
#include "convtune/search/search.h"
#include "test_util.h"

namespace convtune::search_test {
namespace {

using test::uk;
using test::uk_record;

// Two classes: k1c1w1 with h {2,3} (pairs 1x2+1x3, 2x2+2x3 for Ho = 10) and
// k2c1w2 with h {1,2}: 11 choices, 3 singles and 8 pairs.
ClassTable small_table() {
  ClassTable t;
  t.isa = "avx512";
  t.peak_gflops = 150;
  t.microkernels = {uk_record(uk(1, 1, 1, 2), 90), uk_record(uk(1, 1, 1, 3), 90), uk_record(uk(2, 1, 2, 1), 90), uk_record(uk(2, 1, 2, 2), 85)};
  t.select_and_classify();
  return t;
}

Space space_of(const std::string& shape) { return build_space(parse_shape(shape), small_table(), 16); }

// 1x1, so each also has the Flat(hw) view's choices (config.h):
const std::string kMid = "K=64,C=4,H=10,W=4,R=1";   // 18516 configurations without Pf(w) over 10x4 outputs
const std::string kTiny = "K=32,C=4,H=10,W=2,R=1";  // 7776 over 10x2 (3888 without Nt(o)), 13840 with Flat(hw)
// The strategies' exhaustion: kTiny with 6 rows, 10 choices (both classes, singles and pairs, Flat(hw)).
const std::string kExhaust = "K=32,C=4,H=6,W=2,R=1";  // 2464 over 6x2 (1232 without Nt(o)), 4456 with Flat(hw)

ClassTable shipped_table() { return read_table(std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx512.json"); }

// ---------------------------------------------------------------- the view

TEST(Coordinates, SampledConfigsRoundTrip) {
  for (const std::string& sh : {kMid, kTiny}) {
    Space sp = space_of(sh);
    CoordinateView v(sp);
    std::mt19937_64 rng(5);
    for (int i = 0; i < 2000; ++i) {
      Config c = sample_config(sp, rng);
      std::optional<Point> p = v.from_config(c);
      ASSERT_TRUE(p) << to_string(c);
      ASSERT_EQ(v.to_config(*p), c);
    }
  }
  Space sp = space_of(kMid);
  CoordinateView v(sp);
  EXPECT_FALSE(v.from_config(parse_config("[R(k), T(10,h), T(4,w), T(4,c), U(2,h), V(k)]")));
  EXPECT_FALSE(v.from_config(parse_config("[T(1,k), T(4,k), T(5,h), T(4,w), T(4,c), U(2,h), V(k)]")));
  EXPECT_TRUE(v.from_config(parse_config("[T(4,k), T(5,h), T(4,w), T(4,c), U(2,h), V(k)]")));
}

TEST(Coordinates, ChoicesOrderedByHInsideAClass) {
  Space sp = space_of(kMid);
  CoordinateView v(sp);
  // k1c1w1 and k2c1w2, then k1c1w1 again over the Flat(hw) view (a class of its own:
  // its factors are of Ho*Wo); k2c1w2 has w = 2, which the one-column view cannot hold.
  ASSERT_EQ(v.num_classes(), 3);
  for (size_t c = 0; c < sp.choices.size(); ++c) {
    std::vector<int> nb = v.choice_neighbors(int(c));
    ASSERT_FALSE(nb.empty());
    int other = 0;
    for (int x : nb) {
      EXPECT_NE(x, int(c));
      other += v.class_of(x) != v.class_of(int(c));
    }
    EXPECT_EQ(other, 2);  // categorical across classes: the nearest-h member of each other one
    auto h = [&](int i) {
      const UkChoice& ch = sp.choices[size_t(i)];
      return ch.pair ? double(ch.h_extent()) / double(ch.a + ch.b) : ch.uk.h;
    };
    for (int x : nb)  // in the class: the next lower and next higher h
      if (v.class_of(x) == v.class_of(int(c)))
        for (size_t y = 0; y < sp.choices.size(); ++y)
          if (v.class_of(int(y)) == v.class_of(int(c)) && int(y) != x && int(y) != int(c))
            EXPECT_FALSE((h(int(y)) - h(int(c))) * (h(int(y)) - h(x)) < 0) << "between " << c << " and " << x;
  }
}

// Every neighbour, continued move, random step, q-walk and choice change of
// thousands of points is a valid configuration of the space.
TEST(Coordinates, StepsYieldOnlyValidConfigurations) {
  std::vector<std::pair<Space, std::string>> spaces;
  spaces.emplace_back(space_of(kMid), "mid");
  ClassTable shipped = shipped_table();
  for (const char* l : {"yolo9000-12", "resnet18-9"}) spaces.emplace_back(build_space(zoo_layer(l), shipped, 16), l);
  spaces.emplace_back(build_space(parse_shape(kMid), small_table(), 16, 2), "mid, 2 threads");
  spaces.emplace_back(build_space(zoo_layer("yolo9000-12"), shipped, 16, 4), "yolo9000-12, 4 threads");
  size_t checked = 0;
  for (auto& sp_name : spaces) {
    const Space& sp = sp_name.first;  // not a structured binding: clang < 16 cannot capture one
    const std::string& name = sp_name.second;
    CoordinateView v(sp);
    std::mt19937_64 rng(9);
    auto valid = [&](const Point& p) {
      Config c = v.to_config(p);
      ASSERT_NO_THROW(validate_config(c, sp.shape, 16)) << name << ": " << to_string(c);
      ASSERT_EQ(choice_of(sp, c), p.choice) << to_string(c);
      // Threads come from a P outermost, or from Wino(2,b,t) (with no P).
      ASSERT_EQ(c.specs[0].kind == SpecKind::P || c.view.threads > 1, sp.parallel) << name << ": " << to_string(c);
      if (c.wino() && sp.parallel) EXPECT_EQ(c.view.threads, sp.threads) << name << ": " << to_string(c);
      ASSERT_EQ(v.from_config(c).has_value(), true) << to_string(c);
      ++checked;
    };
    for (int i = 0; i < 150; ++i) {
      Point p = v.random_point(rng);
      std::set<std::string> texts{to_string(v.to_config(p))};
      for (const Neighbor& n : v.neighbors(p, rng)) {
        valid(n.point);
        EXPECT_TRUE(texts.insert(to_string(v.to_config(n.point))).second) << "a neighbour twice or p itself";
        if (auto r = v.repeat(n.point, n.move)) valid(*r);
      }
      for (const ParamId& param : v.params()) {
        valid(v.random_step(p, param, rng));
        valid(v.q_walk(p, param, 0.9, rng));
      }
      valid(v.with_choice(p, int(rng() % sp.choices.size())));
    }
  }
  EXPECT_GT(checked, 10000u);
}

TEST(Coordinates, NeighboursCoverEveryParameter) {
  Space sp = space_of(kMid);
  CoordinateView v(sp);
  std::mt19937_64 rng(2);
  std::set<Param> kinds;
  for (int i = 0; i < 50; ++i)
    for (const Neighbor& n : v.neighbors(v.random_point(rng), rng)) kinds.insert(n.move.param.kind);
  EXPECT_EQ(kinds.size(), 7u);  // factor, order, choice, lseq, prefetch, prefetch_out, stream_out
  EXPECT_EQ(v.params().size(), 13u);
}

// The tap fence (config.h F(r) / F(s)) is a parameter where some microkernel
// holds taps: neighbours reach both fences, the text round-trips, and a choice
// without taps drops the fence.
TEST(Coordinates, TapFenceIsAParameter) {
  EXPECT_EQ(CoordinateView(space_of(kMid)).params().size(), 13u);  // 1x1 microkernels only: no fence
  Space sp = build_space(zoo_layer("yolo9000-12"), shipped_table(), 16);
  CoordinateView v(sp);
  ASSERT_EQ(v.params().size(), 14u);
  EXPECT_EQ(v.params().back().kind, Param::fence);
  int taps = -1, plain = -1;
  for (size_t i = 0; i < sp.choices.size(); ++i) {
    if (sp.choices[i].uk.r >= 2 && taps < 0) taps = int(i);
    if (sp.choices[i].uk.r * sp.choices[i].uk.s == 1 && plain < 0) plain = int(i);
  }
  ASSERT_GE(taps, 0);
  ASSERT_GE(plain, 0);
  std::mt19937_64 rng(3);
  Point p = v.with_choice(v.random_point(rng), taps);
  auto name = [](TapFence f) { return f == TapFence::r ? "F(r)" : f == TapFence::s ? "F(s)" : "none"; };
  std::set<std::string> fences, others{"none", "F(r)", "F(s)"};
  others.erase(name(v.to_config(p).fence));  // the point's own (sampled points carry the profiled one)
  for (const Neighbor& n : v.neighbors(p, rng))
    if (n.move.param.kind == Param::fence) fences.insert(name(v.to_config(n.point).fence));
  EXPECT_EQ(fences, others);
  EXPECT_EQ(fences.size(), 2u);
  const Point f = v.with_fence(p, TapFence::s);
  const Config fc = v.to_config(f);
  EXPECT_EQ(fc.fence, TapFence::s);
  const std::optional<Point> back = v.from_config(parse_config(to_string(fc)));
  ASSERT_TRUE(back);
  EXPECT_EQ(v.to_config(*back), fc);
  EXPECT_EQ(v.with_choice(f, plain).fence, TapFence::none);
  EXPECT_EQ(v.with_fence(v.with_choice(p, plain), TapFence::r).fence, TapFence::none);
  Config bad = v.to_config(v.with_choice(p, plain));
  bad.fence = TapFence::s;
  EXPECT_FALSE(v.from_config(bad));
}

// Pf(w) (config.h) is a parameter: a neighbour switches it, the text
// round-trips, and a point without a k or c loop above the reuse loop prints
// none (and a configuration that asks for it there has no point).
TEST(Coordinates, PrefetchIsAParameter) {
  Space sp = space_of(kMid);
  CoordinateView v(sp);
  std::mt19937_64 rng(5);
  int with = 0, switched = 0;
  for (int i = 0; i < 50; ++i) {
    const Point p = v.random_point(rng);
    const Config c = v.to_config(p);
    with += c.prefetch;
    EXPECT_EQ(c.prefetch, p.prefetch && prefetch_loop(c) >= 0) << to_string(c);
    for (const Neighbor& n : v.neighbors(p, rng))
      if (n.move.param.kind == Param::prefetch) {
        ++switched;
        EXPECT_NE(v.to_config(n.point).prefetch, c.prefetch) << to_string(c);
        EXPECT_EQ(v.to_config(n.point).specs, c.specs);
      }
    const Point q = v.random_step(p, {Param::prefetch, Dim::n}, rng);
    EXPECT_NE(q.prefetch, p.prefetch);
    const std::optional<Point> back = v.from_config(parse_config(to_string(v.to_config(q))));
    ASSERT_TRUE(back);
    EXPECT_EQ(v.to_config(*back), v.to_config(q));
  }
  EXPECT_GT(with, 10);       // sampled half the time
  EXPECT_LT(with, 40);
  EXPECT_GT(switched, 40);  // wherever the point has the loop
  // A point whose microkernel and reuse loop cover k and c leaves Pf(w) no
  // loop (kTiny has 12 such configurations).
  const Space tiny = space_of(kTiny);
  const CoordinateView t(tiny);
  int without = 0;
  for (int i = 0; i < 5000 && without == 0; ++i) {
    Point p = t.random_point(rng);
    p.prefetch = true;
    Config c = t.to_config(p);
    if (prefetch_loop(c) >= 0) continue;
    ++without;
    EXPECT_FALSE(c.prefetch) << to_string(c);
    c.prefetch = true;
    EXPECT_FALSE(t.from_config(c)) << to_string(c);
  }
  EXPECT_EQ(without, 1);
}

// Issue 12: with --threads 2 the P option is a parameter of its own, and
// configurations without the P (or with one the choice cannot take) have no point.
TEST(Coordinates, ParallelOptionIsAParameter) {
  Space sp = build_space(parse_shape(kMid), small_table(), 16, 2);
  ASSERT_TRUE(sp.parallel);
  CoordinateView v(sp);
  EXPECT_EQ(v.params().size(), 14u);
  EXPECT_EQ(v.params().back().kind, Param::parallel);
  std::mt19937_64 rng(2);
  std::set<Param> kinds;
  std::set<std::string> pars;
  for (int i = 0; i < 50; ++i) {
    Point p = v.random_point(rng);
    for (const Neighbor& n : v.neighbors(p, rng)) {
      kinds.insert(n.move.param.kind);
      if (n.move.param.kind == Param::parallel) {
        EXPECT_FALSE(n.point.par == p.par);
        EXPECT_EQ(v.to_config(n.point).specs[0], parallel_specs(n.point.par)[0]);
      }
    }
    pars.insert(to_string(parallel_specs(v.random_step(p, {Param::parallel, Dim::n}, rng).par)[0]));
  }
  EXPECT_EQ(kinds.size(), 8u);
  EXPECT_EQ(pars, (std::set<std::string>{"P(2,k)", "P(2,h)", "P(2,w)"}));
  EXPECT_TRUE(v.from_config(parse_config("[P(2,k), T(2,k), T(5,h), T(4,w), T(4,c), U(2,h), V(k)]")));
  EXPECT_FALSE(v.from_config(parse_config("[T(4,k), T(5,h), T(4,w), T(4,c), U(2,h), V(k)]")));  // no P
  EXPECT_FALSE(v.from_config(parse_config("[P(4,k), T(5,h), T(4,w), T(4,c), U(2,h), V(k)]")));  // 4 threads
  EXPECT_FALSE(v.from_config(parse_config("[P(5,h), T(4,k), T(4,w), T(4,c), U(2,h), V(k)]")));  // 5 !| 2
}

// With 4 threads the P parameter also takes nested pairs: their configurations
// map to points and back, and the parallel moves reach them.
TEST(Coordinates, NestedParallelPairsArePoints) {
  Space sp = build_space(parse_shape(kMid), small_table(), 16, 4);
  CoordinateView v(sp);
  const Config c = parse_config("[P(2,k), P(2,w), T(2,k), T(5,h), T(2,w), T(4,c), U(2,h), V(k)]");
  const std::optional<Point> p = v.from_config(c);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->par.threads(), 4);
  EXPECT_EQ(to_string(v.to_config(*p)), to_string(c));
  EXPECT_FALSE(v.from_config(parse_config("[P(2,k), P(4,w), T(2,k), T(5,h), T(4,c), U(2,h), V(k)]")));  // 8 threads
  std::mt19937_64 rng(4);
  std::set<std::string> seen;
  Point q = *p;
  for (int i = 0; i < 200; ++i) {  // a walk over the P parameter alone
    q = v.random_step(q, {Param::parallel, Dim::n}, rng);
    Config pc;
    pc.specs = parallel_specs(q.par);
    seen.insert(to_string(pc));
    EXPECT_TRUE(v.from_config(v.to_config(q))) << to_string(v.to_config(q));
  }
  EXPECT_TRUE(seen.count("[P(4,w)]"));
  EXPECT_TRUE(seen.count("[P(2,k), P(2,w)]")) << ::testing::PrintToString(seen);
}

// ------------------------------------------------------------- the t-test

TEST(Welch, StudentTCdfKnownValues) {
  for (double t : {-3.0, -0.7, 0.0, 0.4, 1.0, 12.0}) {
    EXPECT_NEAR(student_t_cdf(t, 1), 0.5 + std::atan(t) / M_PI, 1e-12) << t;         // Cauchy
    EXPECT_NEAR(student_t_cdf(t, 2), 0.5 + t / (2 * std::sqrt(2 + t * t)), 1e-12) << t;
  }
  EXPECT_NEAR(student_t_cdf(2.228138851986, 10), 0.975, 1e-10);  // the textbook t(0.975, 10)
  EXPECT_NEAR(student_t_cdf(1.0, 3), 0.8044988905221147, 1e-10);  // 1/2 + 1/6 + (sqrt(3)/4)/pi
  // References from Simpson integration of the t density (2e6 intervals).
  EXPECT_NEAR(student_t_cdf(2.0, 8), 0.959741881021372, 1e-10);
  EXPECT_NEAR(student_t_cdf(0.5, 4.5), 0.6797252489629733, 1e-10);
  EXPECT_NEAR(student_t_cdf(3.0, 25.3), 0.9970045525734725, 1e-10);
  EXPECT_NEAR(incomplete_beta(2, 3, 0.4), 0.5248, 1e-12);  // 1 - (0.6^4 + 4*0.4*0.6^3)
}

TEST(Welch, PValueKnownValues) {
  // Equal variances: t = -2, df = 8 (scipy.stats.ttest_ind gives 0.0805162...).
  EXPECT_NEAR(welch_p_value({1, 2, 3, 4, 5}, {3, 4, 5, 6, 7}), 0.08051623795725593, 1e-10);
  // Unequal sizes and variances: t = -4.5525, df = 7.622 (by hand).
  EXPECT_NEAR(welch_p_value({10.1, 10.3, 9.9, 10.0, 10.2}, {10.6, 11.2, 10.4, 11.0, 10.9, 10.5}),
              0.0021147902712908007, 1e-9);
  EXPECT_EQ(welch_p_value({1}, {2, 3}), 1);
  EXPECT_EQ(welch_p_value({1, 1}, {2, 2}), 0);
  EXPECT_EQ(welch_p_value({1, 1}, {1, 1}), 1);
}

// ------------------------------------------------------ synthetic objective

// 100 / (1 + D), D a distance between the canonical points of a
// configuration and a fixed target: 0 only at the target.
struct Objective {
  const CoordinateView& v;
  Point target;
  std::function<bool(const std::string&)> fails = [](const std::string&) { return false; };

  double distance(const Point& a) const {
    const Point& b = target;
    double d = 0;
    if (a.choice != b.choice) d += v.class_of(a.choice) != v.class_of(b.choice) ? 3 : 1.5;
    for (size_t i = 0; i < a.factors.size(); ++i)
      for (size_t j = 0; j < a.factors[i].size(); ++j)
        d += std::abs(std::log2(double(a.factors[i][j])) - std::log2(double(b.factors[i][j])));
    auto rank = [](const Point& p, int id) { return std::find(p.order.begin(), p.order.end(), id) - p.order.begin(); };
    auto filled = [&](const Point& p, int id) {
      for (size_t dd = 0; dd < p.factors.size(); ++dd)
        for (size_t j = 0; j < p.factors[dd].size(); ++j)
          if (v.slot_id(Dim(dd), int(j)) == id) return p.factors[dd][j] > 1;
      return false;
    };
    for (int x : a.order)
      for (int y : a.order)
        if (x < y && filled(a, x) && filled(a, y) && filled(b, x) && filled(b, y) &&
            (rank(a, x) < rank(a, y)) != (rank(b, x) < rank(b, y)))
          d += 1;
    const bool pa = v.space().choices[size_t(a.choice)].pair, pb = v.space().choices[size_t(b.choice)].pair;
    auto above = [&](const Point& p) {
      int n = 0;
      for (int i = 0; i < p.lseq; ++i) n += filled(p, p.order[size_t(i)]);
      return n;
    };
    if (pa && pb) d += std::abs(above(a) - above(b));
    d += (a.prefetch != b.prefetch) + (a.prefetch_out != b.prefetch_out) +
         (a.stream_out != b.stream_out);  // switches that matter
    return d;
  }

  Observation operator()(const Config& c) const {
    if (fails(to_string(c))) return {false, 0, {}};
    std::optional<Point> p = v.from_config(c);
    const double d = distance(*p), seconds = (1 + d) / 100;
    Observation o{true, 100 / (1 + d), {}};
    for (int i = -2; i <= 2; ++i) o.samples.push_back(seconds * (1 + 0.002 * i));
    return o;
  }
};

struct Trace {
  std::vector<std::pair<Config, Observation>> log;
  int64_t found_at = -1;  // trial index of the target
};

// The tuner's loop: batches of `batch`, each candidate observed in turn.
void drive(SearchStrategy& s, const Objective& f, int64_t budget, size_t batch, Trace* run,
           const std::string& target = "") {
  std::set<std::string> measured;
  for (const auto& [c, o] : run->log) measured.insert(to_string(c));
  while (int64_t(run->log.size()) < budget) {
    std::vector<Config> cands = s.propose(size_t(std::min<int64_t>(int64_t(batch), budget - int64_t(run->log.size()))));
    if (cands.empty()) break;
    for (const Config& c : cands) {
      ASSERT_NO_THROW(validate_config(c, f.v.space().shape, 16)) << to_string(c);
      ASSERT_TRUE(measured.insert(to_string(c)).second) << s.name() << " proposed twice: " << to_string(c);
      Observation o = f(c);
      if (run->found_at < 0 && to_string(c) == target) run->found_at = int64_t(run->log.size());
      run->log.emplace_back(c, o);
      s.observe(c, o);
    }
  }
}

Point target_point(const CoordinateView& v) {
  // A pair choice with a few levels: every parameter matters.
  std::mt19937_64 rng(77);
  while (true) {
    Point p = v.random_point(rng);
    if (v.space().choices[size_t(p.choice)].pair && v.to_config(p).specs.size() >= 9) return p;
  }
}

class Strategies : public ::testing::TestWithParam<std::string> {};

TEST_P(Strategies, FindTheOptimumOfASyntheticObjective) {
  Space sp = space_of(kMid);
  CoordinateView v(sp);
  Objective f{v, target_point(v)};
  const std::string target = to_string(v.to_config(f.target));
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto s = make_strategy(GetParam(), sp, seed);
    Trace run;
    drive(*s, f, 2000, 4, &run, target);
    EXPECT_GE(run.found_at, 0) << GetParam() << " seed " << seed << " did not reach " << target;
    if (run.found_at >= 0)
      std::printf("%s seed %llu: optimum at trial %lld\n", GetParam().c_str(), (unsigned long long)seed,
                  (long long)run.found_at);
  }
}

// Exhausting a small space: nothing twice, and then nothing at all.
TEST_P(Strategies, NeverProposeTwiceAndStopWhenExhausted) {
  Space sp = space_of(kExhaust);
  ASSERT_EQ(sp.size(), 4456);  // 2464 over 6x2 outputs (304 with a k or c loop above the reuse loop, with
                               // and without Pf(w), and 8 without; each with and without Pf(o), and with
                               // and without Nt(o)), 1992 over the Flat(hw) column of 12 (249, all with
                               // such a loop, each of them 8 times)
  CoordinateView v(sp);
  Objective f{v, target_point(v)};
  auto s = make_strategy(GetParam(), sp, 3);
  Trace run;
  drive(*s, f, 20000, 7, &run);
  const size_t first = run.log.size();
  // Restarts / random fill reach nearly all: 92.5 %, as 12800 of kTiny's 13840 were.
  EXPECT_GT(first, 4121u) << GetParam();
  // An empty batch ends a run; asked again, a strategy may still find a few
  // by sampling, never a measured one, and then gives up for good.
  for (int again = 0; again < 20; ++again) drive(*s, f, 20000, 7, &run);
  EXPECT_LE(run.log.size(), 4456u);
  std::printf("%s: %zu of 4456, %zu after asking again\n", GetParam().c_str(), first, run.log.size());
}

// --resume replays the log through observe(); the strategy goes on with new
// configurations only, and failures (fitness 0) do not stop it.
TEST_P(Strategies, ResumeAndFailures) {
  Space sp = space_of(kMid);
  CoordinateView v(sp);
  Objective f{v, target_point(v)};
  f.fails = [](const std::string& t) { return std::hash<std::string>()(t) % 4 == 0; };
  Trace run;
  {
    auto s = make_strategy(GetParam(), sp, 11);
    drive(*s, f, 40, 6, &run);
  }
  ASSERT_EQ(run.log.size(), 40u);
  auto resumed = make_strategy(GetParam(), sp, 11);
  for (const auto& [c, o] : run.log) resumed->observe(c, o);
  drive(*resumed, f, 120, 6, &run);  // asserts that nothing measured is proposed again
  EXPECT_EQ(run.log.size(), 120u) << GetParam();
  EXPECT_TRUE(resumed->info().is_object());
}

INSTANTIATE_TEST_SUITE_P(All, Strategies, ::testing::Values("droplet", "opevo", "hillclimb", "random-hillclimb"));

// A grouped shape (config.h g): every strategy proposes only valid
// configurations with the group loops outermost, on one and two threads
// (P(2,g) among the options), each at most once, and csa's plans too.
TEST(Strategies, GroupedShapesKeepTheGroupLoopsOutermost) {
  const Shape sh = parse_shape("K=64,C=32,H=10,W=4,R=1,groups=4");  // Kg = 16, Cg = 8
  for (int threads : {1, 2}) {
    const Space sp = build_space(sh, small_table(), 16, threads);
    std::vector<std::string> names = strategy_names();
    for (const std::string& name : names) {
      auto s = make_strategy(name, sp, 5);
      std::set<std::string> seen;
      for (int batch = 0; batch < 6; ++batch)
        for (const Config& c : s->propose(4)) {
          ASSERT_NO_THROW(validate_config(c, sh, 16)) << name << ": " << to_string(c);
          EXPECT_EQ(c.specs[0].dim, Dim::g) << name << ": " << to_string(c);
          EXPECT_TRUE(seen.insert(to_string(c)).second) << name << " proposed twice: " << to_string(c);
          Observation o{true, 1.0 + double(seen.size() % 7), {}};
          for (int i = 0; i < 3; ++i) o.samples.push_back(1e-3 / o.gflops * (1 + 0.01 * i));
          s->observe(c, o);
        }
      EXPECT_GE(seen.size(), name == "csa" ? 1u : 4u) << name;  // csa proposes its few plans
    }
  }
}

// Depthwise shapes have no c loop (each output channel reads its own input
// channel): every strategy, CSA's plans included, proposes valid
// configurations there, at 3x3 and 5x5, strides 1 and 2, 1 and 2 threads.
TEST(Strategies, DepthwiseShapesGetValidPlans) {
  for (const char* text : {"K=32,C=32,H=28,R=3,groups=32", "K=96,C=96,H=28,R=5,stride=2,pad=2,groups=96"})
    for (int threads : {1, 2}) {
      const Shape sh = parse_shape(text);
      const Space sp = build_space(sh, shipped_table(), 16, threads);
      const CsaPlan p = csa_plan(sp, SearchOptions{});
      for (const Config* c : {&p.config, &p.output_stationary, &p.first}) {
        ASSERT_NO_THROW(validate_config(*c, sh, 16)) << text << ": " << to_string(*c);
        EXPECT_TRUE(CoordinateView(sp).from_config(*c)) << text << ": " << to_string(*c);
      }
      for (const std::string& name : strategy_names()) {
        auto s = make_strategy(name, sp, 5);
        for (int batch = 0; batch < 3; ++batch)
          for (const Config& c : s->propose(4)) {
            ASSERT_NO_THROW(validate_config(c, sh, 16)) << name << ": " << to_string(c);
            s->observe(c, {true, 1.0, {}});
          }
      }
    }
}

// Lanes(g) shapes (config.h: Cg = Kg below the lanes) start on the depthwise
// block over the groups in the lanes, on AVX-512 and AVX2 tables, at 1 and 2
// threads; every strategy proposes valid configurations there, of both views.
TEST(Csa, LanesShapesStartOnTheGroupsInTheLanes) {
  const std::vector<std::pair<ClassTable, int64_t>> tables{
      {shipped_table(), 16}, {read_table(std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx2.json"), 8}};
  for (const auto& [table, lanes] : tables)
    for (const char* text : {"K=128,C=128,H=56,R=3,groups=32", "K=256,C=256,H=56,R=3,stride=2,groups=64"})
      for (int threads : {1, 2}) {
        const Shape sh = parse_shape(text);
        const Space sp = build_space(sh, table, lanes, threads);
        SearchOptions o;
        o.vector_registers = lanes == 16 ? 32 : 16;
        const CsaPlan p = csa_plan(sp, o);
        EXPECT_TRUE(p.first.lanes()) << text << " " << lanes << ": " << to_string(p.first);
        for (const Config* c : {&p.config, &p.output_stationary, &p.first}) {
          ASSERT_NO_THROW(validate_config(*c, sh, lanes)) << text << ": " << to_string(*c);
          EXPECT_TRUE(CoordinateView(sp).from_config(*c)) << text << ": " << to_string(*c);
        }
        std::set<bool> views;
        for (const std::string& name : strategy_names()) {
          auto s = make_strategy(name, sp, 5, o);
          for (int batch = 0; batch < 3; ++batch)
            for (const Config& c : s->propose(4)) {
              ASSERT_NO_THROW(validate_config(c, sh, lanes)) << name << ": " << to_string(c);
              views.insert(c.lanes());
              s->observe(c, {true, 1.0, {}});
            }
        }
        EXPECT_EQ(views.size(), 2u) << text << ": the searches draw both views";
      }
}

// Depthwise layers with at least 28x28 outputs start on a 2D block of at
// most 8 pixels (csa.cpp depthwise_choice), from a table with the family
// (AVX2's) or from the family's fallbacks (a table without it); smaller
// outputs and dense layers have no such plan.
TEST(Csa, DepthwiseLayersOfManyPixelsStartOnATwoDimensionalBlock) {
  const std::vector<std::pair<ClassTable, int64_t>> tables{
      {shipped_table(), 16}, {read_table(std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx2.json"), 8}};
  for (const auto& [table, lanes] : tables)
    for (int threads : {1, 2}) {
      const Space sp = build_space(parse_shape("K=96,C=96,H=112,R=3,stride=2,groups=96"), table, lanes, threads);
      SearchOptions o;
      o.vector_registers = lanes == 16 ? 32 : 16;
      const CsaPlan p = csa_plan(sp, o);
      ASSERT_FALSE(p.depthwise.specs.empty()) << lanes;
      const int i = choice_of(sp, p.depthwise);
      ASSERT_GE(i, 0) << to_string(p.depthwise);
      const UkSizes& u = sp.choices[size_t(i)].uk;
      EXPECT_LE(u.w * u.h, 8) << to_string(p.depthwise);
      EXPECT_GE(std::min(u.w, u.h), 2) << to_string(p.depthwise);
      EXPECT_EQ(p.first, p.depthwise);
      EXPECT_EQ(p.info["depthwise"], to_string(p.depthwise));
      EXPECT_TRUE(CoordinateView(sp).from_config(p.depthwise));
      auto s = make_strategy("hillclimb", sp, 1, o);
      const std::vector<Config> b = s->propose(2);
      ASSERT_EQ(b.size(), 2u);
      EXPECT_EQ(b[0], p.depthwise);
      EXPECT_EQ(b[1], p.output_stationary);
      const CsaPlan q = csa_plan(build_space(parse_shape("K=96,C=96,H=112,R=3,stride=2"), table, lanes, threads), o);
      EXPECT_TRUE(q.depthwise.specs.empty()) << to_string(q.depthwise);
    }
}

// Depthwise layers of outputs below 28x28 start on a block of at most 14
// pixels, the squarest, the wider of two (w7 x h2 on 14x14 where the table
// has it; AVX2's has no such 5x5 stride-2 class), under the
// channel vectors: the k loop (the P split's share) above h and w (csa.cpp
// depthwise_plan).
TEST(Csa, SmallDepthwiseLayersStartWithTheChannelsOutermost) {
  const std::vector<std::pair<ClassTable, int64_t>> tables{
      {shipped_table(), 16}, {read_table(std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx2.json"), 8}};
  for (const auto& [table, lanes] : tables)
    for (int threads : {1, 2})
      for (const char* text : {"K=576,C=576,H=14,R=3,groups=576", "K=960,C=960,H=7,R=3,groups=960",
                               "K=672,C=672,H=28,R=5,stride=2,groups=672"}) {
        const Shape sh = parse_shape(text);
        const Space sp = build_space(sh, table, lanes, threads);
        SearchOptions o;
        o.vector_registers = lanes == 16 ? 32 : 16;
        const CsaPlan p = csa_plan(sp, o);
        ASSERT_FALSE(p.depthwise.specs.empty()) << text;
        EXPECT_EQ(p.first, p.depthwise) << text;
        const int i = choice_of(sp, p.depthwise);
        ASSERT_GE(i, 0) << to_string(p.depthwise);
        const UkSizes& u = sp.choices[size_t(i)].uk;
        const std::string t = to_string(p.depthwise);
        EXPECT_EQ(u.k, 1) << t;
        if (sh.R == 3 && sh.Ho() == 14) {
          EXPECT_EQ(u.w, 7) << t;
          EXPECT_EQ(u.h, 2) << t;
        }
        EXPECT_EQ(u.w * u.h, sh.Ho() == 14 ? 14 : 7) << t;
        // The first T is the k loop, every h and w tile below it.
        size_t first_t = 0;
        while (p.depthwise.specs[first_t].kind != SpecKind::T) ++first_t;
        EXPECT_EQ(p.depthwise.specs[first_t].dim, Dim::k) << t;
        ASSERT_NO_THROW(validate_config(p.depthwise, sh, lanes)) << t;
        EXPECT_TRUE(CoordinateView(sp).from_config(p.depthwise)) << t;
      }
}

TEST(Strategies, NamesAndOptions) {
  std::vector<std::string> names = strategy_names();
  for (const char* n : {"random", "droplet", "opevo", "hillclimb", "csa", "random-hillclimb"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  Space sp = space_of(kTiny);
  SearchOptions bad;
  bad.pvalue = 0;
  EXPECT_NE(test::error_of([&] { make_strategy("droplet", sp, 1, bad); }).find("--pvalue"), std::string::npos);
  bad = {};
  bad.mutation_rate = 1;
  EXPECT_NE(test::error_of([&] { make_strategy("opevo", sp, 1, bad); }).find("--mutation-rate"), std::string::npos);
  bad = {};
  bad.parents = 0;
  EXPECT_NE(test::error_of([&] { make_strategy("opevo", sp, 1, bad); }).find("--parents"), std::string::npos);
}

// random-hillclimb: half of --trials exactly as random proposes them (same
// seed), then a climb that starts at the fastest of them: the climb's first
// batch is that point's neighbours (and the csa start plans), none sampled.
TEST(Strategies, RandomHillclimbSamplesHalfTheBudgetThenClimbsFromTheFastest) {
  Space sp = space_of(kMid);
  CoordinateView v(sp);
  Objective f{v, target_point(v)};
  SearchOptions o;
  o.trials = 40;
  auto s = make_strategy("random-hillclimb", sp, 5, o);
  auto random = make_strategy("random", sp, 5, o);
  Trace run, sampled;
  drive(*s, f, 20, 3, &run);
  drive(*random, f, 20, 3, &sampled);
  ASSERT_EQ(run.log.size(), 20u);
  for (size_t i = 0; i < 20; ++i) EXPECT_EQ(to_string(run.log[i].first), to_string(sampled.log[i].first)) << i;
  EXPECT_EQ(s->info()["phase"], "random");
  EXPECT_EQ(s->info()["sampled"], 20);

  std::set<std::string> seen;
  const Config* fastest = nullptr;
  const Config* slowest = nullptr;
  double best = -1, worst = 1e300;
  for (const auto& [c, ob] : run.log) {
    seen.insert(to_string(c));
    if (!ob.ok || !v.from_config(c)) continue;
    if (ob.gflops > best) best = ob.gflops, fastest = &c;
    if (ob.gflops < worst) worst = ob.gflops, slowest = &c;
  }
  ASSERT_TRUE(fastest && slowest && fastest != slowest);
  auto around = [&](const Config& c) {
    std::mt19937_64 rng(5);  // the climb's own generator, first used for these neighbours
    std::set<std::string> t;
    for (const Neighbor& n : v.neighbors(*v.from_config(c), rng)) t.insert(to_string(v.to_config(n.point)));
    return t;
  };
  const std::set<std::string> near_fastest = around(*fastest), near_slowest = around(*slowest);
  const std::vector<Config> climb = s->propose(1000);
  EXPECT_EQ(s->info()["phase"], "hillclimb");
  size_t near = 0, near_other = 0;
  for (const Config& c : climb) {
    EXPECT_EQ(seen.count(to_string(c)), 0u) << "sampled and proposed again: " << to_string(c);
    near += near_fastest.count(to_string(c));
    near_other += near_slowest.count(to_string(c)) && !near_fastest.count(to_string(c));
  }
  EXPECT_GE(near, climb.size() / 2) << near << " of " << climb.size() << " proposals are neighbours of the fastest";
  EXPECT_LT(near_other, near);
}

TEST(Strategies, OpEvoFollowsItsParameters) {
  Space sp = space_of(kMid);
  CoordinateView v(sp);
  Objective f{v, target_point(v)};
  SearchOptions o;
  o.parents = 3;
  o.offspring = 5;
  auto s = make_strategy("opevo", sp, 1, o);
  std::vector<Config> first = s->propose(100);
  EXPECT_EQ(first.size(), 3u);  // Algorithm 1 line 1: lambda random ones, measured before any recombination
  EXPECT_TRUE(s->propose(100).empty());
  for (const Config& c : first) s->observe(c, f(c));
  EXPECT_EQ(s->propose(100).size(), 5u);  // then rho children per generation
  EXPECT_EQ(s->info()["parents"], 3);
  EXPECT_EQ(s->info()["generation"], 1);
}

// --------------------------------------------------------------------- csa

// The CSA plan for a shape with the one microkernel k2c1w4h2 and
// 32 KiB / 1 MiB / 32 MiB caches.
// The plan with each fence but its own, in the order none, F(r), F(s): the
// start plans a descent measures after it (local_search.cpp).
std::vector<Config> with_other_fences(const Config& c) {
  std::vector<Config> v;
  for (TapFence f : {TapFence::none, TapFence::r, TapFence::s})
    if (f != c.fence) {
      v.push_back(c);
      v.back().fence = f;
    }
  return v;
}

CsaPlan csa_of_one_microkernel(const std::string& shape) {
  ClassTable t;
  t.isa = "avx512";
  t.microkernels = {uk_record(uk(2, 1, 4, 2), 90)};
  t.select_and_classify();
  SearchOptions o;
  o.l1d_bytes = 32 << 10;
  o.l2_bytes = 1 << 20;
  o.l3_bytes = 32 << 20;
  o.cache_source = "cpuid";
  return csa_plan(build_space(parse_shape(shape), t, 16), o);
}

// Hand-checked 001 §4.1 on K=64, C=16, 8x8, 3x3 with one microkernel
// k2c1w4h2r1s1 (N_win = 8, N_f = 32) and 32 KiB / 1 MiB / 32 MiB caches.
// A call covers r*s = 1 filter tap (the R x S loops sit above the reuse loop):
// Eq. 1: IN 32 N_c, FS 128 N_c, OUT 1024 bytes.
// Eq. 2: 160 N_c + 1024 <= 26214.4 -> N_c = 16 (all of C). #IN = 8, #FS = 2.
// IS: K2 = 2, K3 = 8, cost 300*128 + 10*448 = 42880.
// WS: K2 = 8, K3 = 2, cost 300*128 + 10*64 = 39040 -> weight-stationary.
TEST(Csa, HandCheckedPlan) {
  CsaPlan p = csa_of_one_microkernel("K=64,C=16,H=8,R=3");
  EXPECT_EQ(to_string(p.config), "[T(2,k), T(4,h), T(2,w), T(3,r), T(3,s), T(16,c), U(4,w), U(2,h), U(2,k), V(k)]");
  EXPECT_EQ(p.info["N_c"], 16);
  EXPECT_EQ(p.info["N_win"], 8);
  EXPECT_EQ(p.info["N_f"], 32);
  EXPECT_EQ(p.info["K2"], 8);
  EXPECT_EQ(p.info["K3"], 2);
  EXPECT_EQ(p.info["schedule"], "weight-stationary");
  EXPECT_DOUBLE_EQ(p.info["cost_is"].get<double>(), 42880);
  EXPECT_DOUBLE_EQ(p.info["cost_ws"].get<double>(), 39040);
  EXPECT_EQ(p.info["l1d_bytes"], 32768);
  EXPECT_EQ(p.info["caches"], "machine (cpuid)");
  // brgconv's order: both k tiles' weights (2 x 18 KiB) fit L2, so no k
  // block above the output tiles; the taps, then all 16 channels, under them.
  EXPECT_EQ(to_string(p.output_stationary), "[T(4,h), T(2,w), T(2,k), T(3,r), T(3,s), T(16,c), U(4,w), U(2,h), U(2,k), V(k)]");
  EXPECT_EQ(p.info["output_stationary"], to_string(p.output_stationary));
}

// yolo9000-12 with the shipped table: a k tile's weights over the whole C
// and filter are 32 x 256 x 9 x 4 B = 288 KiB; 0.8 x 1 MiB L2 holds 2 of
// the 16, so the k blocks go above the output tiles. On 2 threads the split
// stays outermost and each thread's share is blocked the same way.
TEST(Csa, OutputStationaryBlocksKForL2) {
  SearchOptions o;
  o.l1d_bytes = 48 << 10;
  o.l2_bytes = 1 << 20;
  o.l3_bytes = 32 << 20;
  const Shape sh = zoo_layer("yolo9000-12");
  CsaPlan p = csa_plan(build_space(sh, shipped_table(), 16), o);
  // k4c1w1h{5,7}r3s3 (the shipped table, fastest with F(r)): one 64-channel
  // block of weights (590 KB) fits 80 % of 1 MiB, so the 8 blocks go outermost.
  EXPECT_EQ(to_string(p.output_stationary),
            "[T(8,k), T(34,w), Lseq(h,[(1,6),(4,7)]), T(256,c), U(3,s), U(3,r), U(a,h), U(4,k), V(k), F(r)]");
  o.l2_bytes = 8 << 20;  // all 8 fit: no k block
  EXPECT_EQ(to_string(csa_plan(build_space(sh, shipped_table(), 16), o).output_stationary),
            "[T(34,w), Lseq(h,[(1,6),(4,7)]), T(8,k), T(256,c), U(3,s), U(3,r), U(a,h), U(4,k), V(k), F(r)]");
  o.l2_bytes = 1 << 20;
  Space sp2 = build_space(sh, shipped_table(), 16, 2);
  CsaPlan p2 = csa_plan(sp2, o);
  ASSERT_EQ(p2.output_stationary.specs[0].kind, SpecKind::P) << to_string(p2.output_stationary);
  EXPECT_EQ(p2.output_stationary.specs[0], p2.config.specs[0]);
  EXPECT_TRUE(CoordinateView(sp2).from_config(p2.output_stationary)) << to_string(p2.output_stationary);
}

// yolo9000-0 (C*R*S = 27) is store-bound: the streaming plan takes the
// widest one-row microkernel holding all 32 k (k2w8h1), whose call stores
// 8 x 32 contiguous floats. It is measured after CSA's plan and the
// output-stationary one with its two other tap fences, on one and two threads.
TEST(Csa, StreamingPlanForAStoreBoundLayer) {
  const Shape sh = zoo_layer("yolo9000-0");
  Space sp = build_space(sh, shipped_table(), 16);
  CsaPlan p = csa_plan(sp, SearchOptions{});
  EXPECT_EQ(to_string(p.streaming), "[T(544,h), T(68,w), T(3,c), U(3,s), U(3,r), U(8,w), U(2,k), V(k)]");
  EXPECT_EQ(p.info["streaming"], to_string(p.streaming));
  // Few MACs per output: the streaming plan is the first measured.
  EXPECT_EQ(p.first, p.streaming);
  EXPECT_EQ(p.info["first"], to_string(p.streaming));
  auto s = make_strategy("droplet", sp, 1);
  std::vector<Config> first = s->propose(4);
  ASSERT_EQ(first.size(), 4u);
  EXPECT_EQ(first[0], p.streaming);
  EXPECT_EQ(first[1], p.output_stationary);
  EXPECT_EQ(std::vector<Config>(first.begin() + 2, first.begin() + 4), with_other_fences(p.output_stationary));
  Space sp2 = build_space(sh, shipped_table(), 16, 2);
  CsaPlan p2 = csa_plan(sp2, SearchOptions{});
  ASSERT_FALSE(p2.streaming.specs.empty());
  EXPECT_EQ(p2.streaming.specs[0].kind, SpecKind::P) << to_string(p2.streaming);
  EXPECT_TRUE(CoordinateView(sp2).from_config(p2.streaming)) << to_string(p2.streaming);
  EXPECT_TRUE(csa_plan(build_space(zoo_layer("resnet18-1"), shipped_table(), 16), SearchOptions{}).streaming.specs.empty());
}

// A cold descent measures the first plan (the model's expected fastest:
// here the Winograd view) and then the output-stationary one (then that one
// with each other fence), before any neighbour, and moves to the second when
// it is faster.
TEST(Csa, DescentsMeasureThePredictedPlanFirst) {
  Space sp = build_space(zoo_layer("yolo9000-12"), shipped_table(), 16);
  CsaPlan plan = csa_plan(sp, SearchOptions{});
  ASSERT_EQ(plan.first, plan.winograd);
  ASSERT_NE(plan.first, plan.output_stationary);
  for (const char* name : {"droplet", "hillclimb"})
    for (size_t batch : {size_t(1), size_t(6)}) {
      auto s = make_strategy(name, sp, 1);
      std::vector<Config> got;
      // The first plan is slower than the output-stationary one, every
      // other start plan slower still: the descent's one move goes there.
      auto speed = [&](const Config& c) { return c == plan.output_stationary ? 200.0 : c == plan.first ? 100.0 : 50.0; };
      for (int batches = 0; s->info()["moves"] == 0; ++batches) {
        ASSERT_LT(batches, 100) << name << ": no move";
        std::vector<Config> b = s->propose(batch);
        ASSERT_FALSE(b.empty());
        for (const Config& c : b) {
          got.push_back(c);
          s->observe(c, {true, speed(c), {}});
        }
      }
      ASSERT_GE(got.size(), 3u);
      EXPECT_EQ(got[0], plan.first) << name;
      EXPECT_EQ(got[1], plan.output_stationary) << name;
      EXPECT_EQ(got[2], with_other_fences(plan.output_stationary)[0]) << name;
      EXPECT_EQ(s->info()["moves"], 1) << name << " batch " << batch;
    }
}

// The caches of a recent Xeon core: 48 KiB L1d, 2 MiB L2 (L3 as 32 MiB).
SearchOptions xeon_caches() {
  SearchOptions o;
  o.l1d_bytes = 48 << 10;
  o.l2_bytes = 2 << 20;
  o.l3_bytes = 32 << 20;
  return o;
}

// yolo9000-18 (C = 512, 3x3) with the shipped table: a k tile's weights over
// the whole C are 64 x 512 x 9 x 4 B = 1.2 MB, read from L2 by every call of
// the output-stationary plan. The c-blocked plan takes blocks of 16 channels
// (64 x 16 x 9 x 4 B = 36 KiB <= 48 KiB L1; 32 would not fit) above the
// output tiles, whose 17 x 17 x 64 x 4 B = 72 KiB per k tile stay in L2, and
// prefetches the next block. yolo9000-2's output (272 x 272) does not fit L2:
// no such plan there.
TEST(Csa, CBlockedPlanKeepsAChannelBlockInL1) {
  SearchOptions o = xeon_caches();
  Space sp = build_space(zoo_layer("yolo9000-18"), shipped_table(), 16);
  CsaPlan p = csa_plan(sp, o);
  EXPECT_EQ(to_string(p.c_blocked), "[T(16,k), T(32,c), T(17,w), Lseq(h,[(1,5),(2,6)]), T(16,c), U(3,s), U(3,r), "
                                    "U(a,h), U(4,k), V(k), F(r), Pf(w)]");
  EXPECT_EQ(p.info["c_blocked"], to_string(p.c_blocked));
  EXPECT_TRUE(CoordinateView(sp).from_config(p.c_blocked));
  o.l1d_bytes = 96 << 10;  // twice the L1: blocks of 32 channels
  EXPECT_EQ(to_string(csa_plan(sp, o).c_blocked), "[T(16,k), T(16,c), T(17,w), Lseq(h,[(1,5),(2,6)]), T(32,c), "
                                                  "U(3,s), U(3,r), U(a,h), U(4,k), V(k), F(r), Pf(w)]");
  o.l1d_bytes = 48 << 10;
  EXPECT_TRUE(csa_plan(build_space(zoo_layer("yolo9000-2"), shipped_table(), 16), o).c_blocked.specs.empty());
  EXPECT_FALSE(csa_plan(build_space(zoo_layer("yolo9000-2"), shipped_table(), 16), o).info.contains("c_blocked"));
  Space sp2 = build_space(zoo_layer("yolo9000-18"), shipped_table(), 16, 2);
  CsaPlan p2 = csa_plan(sp2, o);
  ASSERT_FALSE(p2.c_blocked.specs.empty());
  EXPECT_EQ(p2.c_blocked.specs[0].kind, SpecKind::P) << to_string(p2.c_blocked);
  EXPECT_TRUE(CoordinateView(sp2).from_config(p2.c_blocked)) << to_string(p2.c_blocked);
}

// DeepLabv3's ASPP layer (C = 2048, dilation 12): a k tile's weights over
// the whole C and filter (64 x 2048 x 9 x 4 B = 4.7 MB) outgrow L2, so the
// taps go above the output tiles (csa.cpp taps_outside), each over a block of
// channels whose weights share L2 with the k tile's output, under a 1x1-tap
// register block; a dilated layer starts there, on AVX-512 and AVX2 tables,
// at 1 and 2 threads. The same weights undilated get the plan as one start
// among others; where they fit L2 (yolo9000-18 with 2 MiB), on one tap and
// on depthwise layers there is none.
TEST(Csa, DilatedLayersWithWeightsBeyondL2StartWithTheTapsOutside) {
  const std::vector<std::pair<ClassTable, int64_t>> tables{
      {shipped_table(), 16}, {read_table(std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx2.json"), 8}};
  for (const auto& [table, lanes] : tables)
    for (int threads : {1, 2}) {
      const Shape sh = parse_shape("K=256,C=2048,H=28,R=3,pad=12,dilation=12");
      const Space sp = build_space(sh, table, lanes, threads);
      SearchOptions o;
      o.vector_registers = lanes == 16 ? 32 : 16;
      const CsaPlan p = csa_plan(sp, o);
      ASSERT_FALSE(p.taps_outside.specs.empty()) << lanes;
      EXPECT_EQ(p.first, p.taps_outside) << lanes << " " << threads;
      EXPECT_EQ(p.info["taps_outside"], to_string(p.taps_outside));
      ASSERT_NO_THROW(validate_config(p.taps_outside, sh, lanes)) << to_string(p.taps_outside);
      EXPECT_TRUE(CoordinateView(sp).from_config(p.taps_outside)) << to_string(p.taps_outside);
      const int i = choice_of(sp, p.taps_outside);
      ASSERT_GE(i, 0) << to_string(p.taps_outside);
      const UkChoice& ch = sp.choices[size_t(i)];
      EXPECT_EQ(ch.uk.r * ch.uk.s, 1) << ch.text();
      // r and s above h and w; one tap's channel block of weights, plus the
      // k tile's output, within L2's beta share.
      const std::string t = to_string(p.taps_outside);
      size_t last_tap = 0, first_pixel = p.taps_outside.specs.size();
      for (size_t j = 0; j < p.taps_outside.specs.size(); ++j) {
        const Spec& s = p.taps_outside.specs[j];
        if (s.kind != SpecKind::T) continue;
        if (s.dim == Dim::r || s.dim == Dim::s) last_tap = j;
        if ((s.dim == Dim::h || s.dim == Dim::w) && j < first_pixel) first_pixel = j;
      }
      EXPECT_GT(last_tap, 0u) << t;
      EXPECT_LT(last_tap, first_pixel) << t;
      int64_t block = 1;
      for (size_t j = p.taps_outside.specs.size(); j-- > 0;) {
        const Spec& s = p.taps_outside.specs[j];
        if (s.kind == SpecKind::T && s.dim == Dim::c) {
          block = s.factor * ch.uk.c;
          break;
        }
      }
      const double nf = double(ch.uk.k * lanes);
      EXPECT_LE(nf * double(block) * 4 + nf * 28 * 28 * 4, 0.8 * (1 << 20)) << t;
      EXPECT_TRUE(block == 2048 || nf * double(block) * 4 * 4 >= 0.8 * (1 << 20) - nf * 28 * 28 * 4)
          << t << ": the largest block";
    }
  const CsaPlan dense = csa_plan(build_space(parse_shape("K=256,C=2048,H=28,R=3"), shipped_table(), 16), SearchOptions{});
  EXPECT_FALSE(dense.taps_outside.specs.empty());
  EXPECT_NE(dense.first, dense.taps_outside);
  EXPECT_TRUE(csa_plan(build_space(zoo_layer("yolo9000-18"), shipped_table(), 16), xeon_caches()).taps_outside.specs.empty());
  EXPECT_TRUE(csa_plan(build_space(parse_shape("K=256,C=2048,H=28,R=1"), shipped_table(), 16), SearchOptions{})
                  .taps_outside.specs.empty());
  EXPECT_TRUE(csa_plan(build_space(parse_shape("K=960,C=960,H=14,R=5,dilation=2,groups=960"), shipped_table(), 16),
                       SearchOptions{})
                  .taps_outside.specs.empty());
}

// 1x1 layers: oneDNN's register block, the fewest vector loads per FMA that
// fits the register file. On yolo9000-19 (K = 512, C = 1024, 17 x 17) with
// the shipped table: k4 x h{6,5} over Flat(hw), 29 of 32 registers (k4 x h7
// would take 33), the whole C under each call, in the output-stationary
// order. With AVX2's 16 registers the tile shrinks to fit them; a 3x3 layer has no
// such plan. A cold descent measures it before its first move.
TEST(Csa, BrgemmPlanTakesTheFewestLoadsPerFmaOn1x1Layers) {
  Space sp = build_space(zoo_layer("yolo9000-19"), shipped_table(), 16);
  CsaPlan p = csa_plan(sp, SearchOptions{});
  EXPECT_EQ(to_string(p.brgemm), "[Flat(hw), T(4,k), Lseq(h,[(5,5),(44,6)]), T(2,k), T(512,c), U(2,c), U(a,h), "
                                 "U(4,k), V(k)]");
  EXPECT_EQ(p.info["brgemm"], to_string(p.brgemm));
  EXPECT_TRUE(CoordinateView(sp).from_config(p.brgemm));
  // AVX2: 16 registers, 8 lanes, its shipped table.
  Space sp2 = build_space(zoo_layer("yolo9000-19"),
                          read_table(std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx2.json"), 8);
  SearchOptions avx2;
  avx2.vector_registers = 16;
  const Config b2 = csa_plan(sp2, avx2).brgemm;
  const int i2 = choice_of(sp2, b2);
  ASSERT_GE(i2, 0) << to_string(b2);
  // k2 x h6: 15 registers; k3 does not divide K's 64 vectors. The shipped
  // table's k2 x h{5,6} class is of c = 1 microkernels, so the whole C is a T.
  EXPECT_EQ(to_string(b2), "[Flat(hw), T(4,k), Lseq(h,[(5,5),(44,6)]), T(8,k), T(1024,c), U(a,h), U(2,k), V(k)]");
  const UkChoice& c2 = sp2.choices[size_t(i2)];
  EXPECT_LE(c2.uk.w * std::max(c2.uk.h, c2.pair ? c2.uk2.h : 0) * c2.uk.k + c2.uk.k + 1, 16) << c2.text();
  EXPECT_TRUE(csa_plan(build_space(zoo_layer("yolo9000-18"), shipped_table(), 16), SearchOptions{}).brgemm.specs.empty());
  // yolo9000-9's Ho*Wo = 4624 admits more pairs than the space keeps; the cap
  // is shared by every pair of microkernels, so k4 x h{4,6} has its own.
  EXPECT_EQ(to_string(csa_plan(build_space(zoo_layer("yolo9000-9"), shipped_table(), 16), SearchOptions{}).brgemm),
            "[Flat(hw), Lseq(h,[(1,4),(770,6)]), T(2,k), T(128,c), U(2,c), U(a,h), U(4,k), V(k)]");
  EXPECT_EQ(p.first, p.brgemm);
  auto s = make_strategy("hillclimb", sp, 1);
  const std::vector<Config> b = s->propose(1);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0], p.brgemm);
}

// Every start plan is measured before the descent first moves, even one
// candidate per batch, and it moves to the fastest of them: the c-blocked
// plan here. (With a tune's batches of 4, deciding after the first plan and
// three others would drop the rest.)
TEST(Csa, EveryStartPlanRunsBeforeTheFirstMove) {
  SearchOptions o = xeon_caches();
  Space sp = build_space(zoo_layer("yolo9000-18"), shipped_table(), 16);
  CsaPlan plan = csa_plan(sp, o);
  ASSERT_FALSE(plan.c_blocked.specs.empty());
  Config os_pf = plan.output_stationary;
  os_pf.prefetch = true;
  ASSERT_EQ(plan.first, plan.winograd);
  ASSERT_TRUE(plan.streaming.specs.empty() && plan.brgemm.specs.empty());
  std::vector<Config> plans{plan.first, plan.output_stationary};
  for (const Config& c : with_other_fences(plan.output_stationary)) plans.push_back(c);
  plans.push_back(os_pf);
  plans.push_back(plan.c_blocked);
  plans.push_back(plan.config);
  for (const char* name : {"droplet", "hillclimb"}) {
    auto s = make_strategy(name, sp, 1, o);
    std::vector<Config> got;
    while (s->info()["moves"] == 0) {
      std::vector<Config> b = s->propose(1);
      ASSERT_EQ(b.size(), 1u);
      got.push_back(b[0]);
      s->observe(b[0], {true, b[0] == plan.c_blocked ? 300.0 : b[0] == plan.output_stationary ? 200.0 : 100.0, {}});
    }
    EXPECT_EQ(got, plans) << name;
    // The first proposal after the move is a neighbour of the c-blocked plan.
    std::vector<Config> next = s->propose(1);
    ASSERT_EQ(next.size(), 1u);
    CoordinateView v(sp);
    std::mt19937_64 rng(1);
    bool neighbour = false;
    for (const auto& n : v.neighbors(*v.from_config(plan.c_blocked), rng)) neighbour |= v.to_config(n.point) == next[0];
    EXPECT_TRUE(neighbour) << name << ": " << to_string(next[0]);
  }
}

// A resumed log that lacks start plans (written by a version without them) has
// them measured first, right after its best point; the ones it holds are
// not measured again.
TEST(Csa, AResumedDescentMeasuresTheStartPlansItLacks) {
  Space sp = build_space(zoo_layer("yolo9000-12"), shipped_table(), 16);
  CsaPlan plan = csa_plan(sp, SearchOptions{});
  CoordinateView v(sp);
  std::mt19937_64 rng(8);
  const Config other = v.to_config(v.random_point(rng));
  const std::vector<Config> fenced = with_other_fences(plan.output_stationary);
  for (const char* name : {"droplet", "hillclimb"}) {
    auto s = make_strategy(name, sp, 1);
    s->observe(other, {true, 100.0, {}});
    s->observe(plan.output_stationary, {true, 90.0, {}});
    std::vector<Config> got = s->propose(3);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0], plan.first) << name;
    EXPECT_EQ(got[1], fenced[0]) << name;
    EXPECT_EQ(got[2], fenced[1]) << name;
  }
}

// No cache sizes detected: the documented defaults, and the info says so.
TEST(Csa, UnknownCachesAreAssumedAndSaidSo) {
  ClassTable t;
  t.isa = "avx512";
  t.microkernels = {uk_record(uk(2, 1, 4, 2), 90)};
  t.select_and_classify();
  SearchOptions o;
  o.cache_source = "unknown";
  CsaPlan p = csa_plan(build_space(parse_shape("K=64,C=16,H=8,R=3"), t, 16), o);
  EXPECT_EQ(p.info["caches"], "not all known (source: unknown); assumed 32 KiB L1, 1 MiB L2, 4 MiB L3 for the "
                              "missing ones");
  EXPECT_EQ(p.info["l1d_bytes"], 32768);
  EXPECT_EQ(p.info["l3_bytes"], 4 << 20);
}

// The reuse loop holds the accumulators over N_c channels of r*s taps, not
// of the full R x S filter: with C = 256 Eq. 2 gives 160 N_c + 1024 <=
// 26214.4 -> N_c = 128 (R*S in Eq. 1 would give 1440 N_c -> 16, the
// accumulators reloaded every 16 FMAs).
TEST(Csa, ReuseLoopCoversTheMicrokernelTapsOnly) {
  CsaPlan p = csa_of_one_microkernel("K=64,C=256,H=8,R=3");
  EXPECT_EQ(p.info["N_c"], 128);
  EXPECT_NE(to_string(p.config).find("T(128,c), U(4,w)"), std::string::npos) << to_string(p.config);
}

// SConv's microkernel reduces the whole filter in registers: given one that
// does (r = R, s = S) and a larger one that does not, CSA takes the first.
TEST(Csa, PrefersAWholeFilterMicrokernel) {
  ClassTable t;
  t.isa = "avx512";
  t.microkernels = {uk_record(uk(2, 1, 4, 2), 90), uk_record(uk(1, 1, 2, 7, 3, 3), 90)};
  t.select_and_classify();
  CsaPlan p = csa_plan(build_space(parse_shape("K=64,C=16,H=14,R=3"), t, 16), SearchOptions{});
  EXPECT_NE(to_string(p.config).find("U(3,s), U(3,r), U(2,w), U(7,h), V(k)]"), std::string::npos)
      << to_string(p.config);
  EXPECT_EQ(p.info["choice"], "k1c1w2h7r3s3");
}

// Issue 12: SConv splits the dimension with the most independent work; each
// thread then gets CSA's tiles over its share.
TEST(Csa, SplitsTheDimensionWithTheMostTiles) {
  SearchOptions o;
  o.l1d_bytes = 32 << 10;
  o.l2_bytes = 1 << 20;
  o.l3_bytes = 8 << 20;
  for (const char* layer : {"yolo9000-12", "resnet18-9", "yolo9000-5"}) {
    Shape sh = zoo_layer(layer);
    Space sp = build_space(sh, shipped_table(), 16, 2);
    ASSERT_TRUE(sp.parallel);
    CsaPlan p = csa_plan(sp, o);
    ASSERT_NO_THROW(validate_config(p.config, sh, 16)) << to_string(p.config);
    ASSERT_EQ(p.config.specs[0].kind, SpecKind::P) << to_string(p.config);
    EXPECT_EQ(p.config.specs[0].factor, 2);
    EXPECT_EQ(p.info["parallel"], to_string(p.config.specs[0]));
    const UkChoice& ch = sp.choices[size_t(choice_of(sp, p.config))];
    for (Dim d : {Dim::k, Dim::h, Dim::w})
      if (sp.remaining(ch, d) % 2 == 0) EXPECT_GE(sp.remaining(ch, p.config.specs[0].dim), sp.remaining(ch, d)) << layer;
    EXPECT_TRUE(CoordinateView(sp).from_config(p.config)) << to_string(p.config);  // droplet/hillclimb start there
  }
  EXPECT_EQ(csa_plan(build_space(zoo_layer("yolo9000-12"), shipped_table(), 16), o).info["parallel"], "none");
  // yolo9000-23: Ho = Wo = 17 and 1767 k vectors, nothing even: an uneven split on 2 threads.
  Shape sh = zoo_layer("yolo9000-23");
  Space sp = build_space(sh, shipped_table(), 16, 2);
  ASSERT_TRUE(sp.parallel);
  CsaPlan p = csa_plan(sp, o);
  ASSERT_NO_THROW(validate_config(p.config, sh, 16)) << to_string(p.config);
  ASSERT_EQ(p.config.specs[0].kind, SpecKind::P) << to_string(p.config);
  EXPECT_EQ(p.config.specs[0].threads, 2) << to_string(p.config);
  EXPECT_EQ(config_threads(p.config), 2);
  EXPECT_TRUE(CoordinateView(sp).from_config(p.config)) << to_string(p.config);
}

TEST(Csa, ValidForEveryZooLayer) {
  ClassTable t = shipped_table();
  std::set<std::string> streaming;
  SearchOptions machine;
  machine.l1d_bytes = 48 << 10;
  machine.l2_bytes = 2 << 20;
  machine.l3_bytes = 32 << 20;
  int layers = 0;
  for (const Network& n : zoo())
    for (const Shape& sh : n.layers)
      for (const SearchOptions& o : {machine, SearchOptions{}}) {
        Space sp = build_space(sh, t, 16);
        CsaPlan p = csa_plan(sp, o);
        ASSERT_NO_THROW(validate_config(p.config, sh, 16)) << sh.name << ": " << to_string(p.config);
        EXPECT_TRUE(CoordinateView(sp).from_config(p.config)) << sh.name;  // droplet/hillclimb start here
        EXPECT_TRUE(CoordinateView(sp).from_config(p.output_stationary)) << sh.name << ": " << to_string(p.output_stationary);
        EXPECT_EQ(choice_of(sp, p.output_stationary), choice_of(sp, p.config)) << sh.name;
        if (!p.streaming.specs.empty()) {
          EXPECT_TRUE(CoordinateView(sp).from_config(p.streaming)) << sh.name << ": " << to_string(p.streaming);
          EXPECT_NE(p.streaming, p.output_stationary) << sh.name;
          streaming.insert(sh.name);
        }
        // The Winograd plan exactly where the view applies, a point of the
        // space, and first at stride 1 unless the layer is store-bound.
        EXPECT_EQ(p.winograd.specs.empty(), !wino_eligible(sh)) << sh.name;
        if (!p.winograd.specs.empty()) {
          EXPECT_EQ(p.winograd.view.kind, View::wino) << sh.name;
          EXPECT_TRUE(CoordinateView(sp).from_config(p.winograd)) << sh.name << ": " << to_string(p.winograd);
          EXPECT_EQ(p.first == p.winograd, sh.stride_h == 1 && p.streaming.specs.empty()) << sh.name;
        }
        EXPECT_TRUE(CoordinateView(sp).from_config(p.first)) << sh.name << ": " << to_string(p.first);
        if (!p.brgemm.specs.empty()) EXPECT_EQ(p.first, p.brgemm) << sh.name;
        for (const char* key : {"choice", "schedule", "N_c", "N_win", "N_f", "K2", "K3", "l1d_bytes", "l2_bytes", "l3_bytes",
                                "output_stationary", "first"})
          EXPECT_TRUE(p.info.contains(key)) << sh.name << " " << key;
        ++layers;
        // `--search csa` measures that one configuration once.
        auto s = make_strategy("csa", sp, 1, o);
        std::vector<Config> c = s->propose(8);
        ASSERT_EQ(c.size(), 1u);
        EXPECT_EQ(c[0], p.config);
        s->observe(c[0], {true, 1, {}});
        EXPECT_TRUE(s->propose(8).empty());
        EXPECT_EQ(s->info()["csa"]["schedule"], p.info["schedule"]);
      }
  EXPECT_GT(layers, 40);
  // Only the store-bound first layer (C*R*S = 27) has a streaming plan.
  EXPECT_EQ(streaming, std::set<std::string>{"yolo9000-0"});
}

// The tuner copies info() into each record; it survives the log.
TEST(Csa, SearchInfoInRecords) {
  Record r;
  r.layer = "x";
  r.shape = "s";
  r.config = "[T(1,c), V(k)]";
  r.status = Status::ok;
  EXPECT_FALSE(r.to_json().contains("search_info"));  // absent when a strategy says nothing
  Space sp = space_of(kTiny);
  SearchOptions o;
  o.l1d_bytes = 48 << 10;
  r.search_info = make_strategy("droplet", sp, 1, o)->info();
  nlohmann::json j = r.to_json();
  EXPECT_EQ(j["search_info"]["csa"]["l1d_bytes"], 48 << 10);
  EXPECT_EQ(Record::from_json(j).search_info, r.search_info);
  EXPECT_TRUE(Record::from_json(nlohmann::json::parse(R"({"format_version":1,"layer":"x","shape":"s","config":"c",
      "status":"ok","gflops":1})")).search_info.empty());
}

}  // namespace
}  // namespace convtune::search_test
