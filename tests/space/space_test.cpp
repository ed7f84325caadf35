// The online search space (000 §4.2, Fig. 7) and its random sampler (000 §6.1).
#include "convtune/space/space.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/space/coordinates.h"
#include "test_util.h"

namespace convtune::space_test {
namespace {

using test::error_of;
using test::table_of;
using test::uk;
using test::uk_record;

// 000 §4.2's example class {[U_beta,h, U_2,k, V_k], 8 <= beta <= 15} plus a
// few single microkernels (one below the threshold).
ClassTable yolo_table() {
  std::vector<UkRecord> recs;
  for (int h = 8; h <= 15; ++h) recs.push_back(uk_record(uk(2, 1, 1, h), 85 + h % 3));
  recs.push_back(uk_record(uk(1, 1, 2, 2), 82));      // divides 34
  recs.push_back(uk_record(uk(2, 1, 12, 1), 88));     // w=12 does not divide 34
  recs.push_back(uk_record(uk(1, 1, 1, 17), 40));     // divides, but not selected
  recs.push_back(uk_record(uk(1, 1, 1, 1), 99, Status::crash));
  return table_of(recs);
}

bool is_pair(const UkChoice& ch, int64_t a, int h1, int64_t b, int h2) {
  return ch.pair && ch.a == a && ch.uk.h == h1 && ch.b == b && ch.uk2.h == h2;
}

TEST(Space, Yolo12HasNoSingleOfTheClassButPairs) {
  Shape sh = zoo_layer("yolo9000-12");  // 000 §4.2: Ho = 34 = 2 x 17
  ASSERT_EQ(sh.Ho(), 34);
  Space sp = build_space(sh, yolo_table(), 16);
  EXPECT_TRUE(sp.note.empty());
  int pairs = 0, singles = 0, wino = 0;
  bool paper_pair = false, other_pair = false;
  for (const UkChoice& ch : sp.choices) {
    EXPECT_FALSE(ch.fallback);
    if (ch.view.kind == View::wino) {  // the Winograd view (config.h Wino(2)): 17x17 = 289 tiles
      ++wino;
      EXPECT_EQ(289 % ch.h_extent(), 0) << ch.text();
      EXPECT_EQ(ch.uk.r * ch.uk.s * ch.uk.w, 1) << ch.text();
      continue;
    }
    if (!ch.pair) {
      ++singles;
      EXPECT_EQ(ch.uk, uk(1, 1, 2, 2)) << ch.text();
      continue;
    }
    ++pairs;
    EXPECT_TRUE(ch.uk.same_class(ch.uk2));
    EXPECT_LT(ch.uk.h, ch.uk2.h);
    EXPECT_EQ(34 % ch.h_extent(), 0) << ch.text();
    paper_pair |= is_pair(ch, 2, 11, 1, 12);
    other_pair |= is_pair(ch, 1, 8, 2, 13);
  }
  EXPECT_EQ(singles, 1);
  EXPECT_GT(wino, 0);
  EXPECT_TRUE(paper_pair);
  EXPECT_TRUE(other_pair);
  // Every (h1 < h2, a, b) of the class with a*h1 + b*h2 in {17, 34}.
  int expected = 0;
  for (int h1 = 8; h1 <= 15; ++h1)
    for (int h2 = h1 + 1; h2 <= 15; ++h2)
      for (int a = 1; a * h1 < 34; ++a)
        for (int b = 1; a * h1 + b * h2 <= 34; ++b) expected += 34 % (a * h1 + b * h2) == 0;
  EXPECT_EQ(pairs, expected);
  EXPECT_GT(sp.size(), 0);
}

TEST(Space, RemainingSpecsAndText) {
  Space sp = build_space(zoo_layer("yolo9000-12"), yolo_table(), 16);
  UkChoice ch;
  ch.uk = uk(2, 1, 1, 11);
  ch.pair = true;
  ch.uk2 = uk(2, 1, 1, 12);
  ch.a = 2;
  ch.b = 1;
  EXPECT_EQ(ch.text(), "k2c1w1h{2x11+1x12}r1s1");
  EXPECT_EQ(ch.h_extent(), 34);
  EXPECT_EQ(sp.remaining(ch, Dim::n), 1);
  EXPECT_EQ(sp.remaining(ch, Dim::k), 16);  // 000 §4.2: a factor of 16 left along k
  EXPECT_EQ(sp.remaining(ch, Dim::c), 256);
  EXPECT_EQ(sp.remaining(ch, Dim::h), 1);
  EXPECT_EQ(sp.remaining(ch, Dim::w), 34);
  EXPECT_EQ(sp.remaining(ch, Dim::r), 3);
  EXPECT_EQ(sp.remaining(ch, Dim::s), 3);
  EXPECT_EQ(to_string(Config{microkernel_specs(ch, 256)}), "[T(256,c), U(a,h), U(2,k), V(k)]");

  UkChoice single;
  single.uk = uk(2, 2, 3, 4, 3, 3);
  EXPECT_EQ(single.text(), "k2c2w3h4r3s3");
  EXPECT_EQ(to_string(Config{microkernel_specs(single, 4)}),
            "[T(4,c), U(3,s), U(3,r), U(2,c), U(3,w), U(4,h), U(2,k), V(k)]");
  single.uk = uk(1, 1, 1, 1);
  EXPECT_EQ(to_string(Config{microkernel_specs(single, 1)}), "[T(1,c), V(k)]");
}

TEST(Space, ChoiceOfThePaperExample) {
  Shape sh = zoo_layer("yolo9000-12");
  Space sp = build_space(sh, yolo_table(), 16);
  // 000 §4.2's full completion example.
  Config c = parse_config(
      "[T(16,k), Lseq(h,[(2,11),(1,12)]), T(17,w), T(3,s), T(3,r), T(2,w), T(256,c), U(a,h), "
      "U(2,k), V(k)]");
  EXPECT_NO_THROW(validate_config(c, sh, 16));
  int i = choice_of(sp, c);
  ASSERT_GE(i, 0);
  EXPECT_TRUE(is_pair(sp.choices[size_t(i)], 2, 11, 1, 12));
  Config single = parse_config("[T(32,k), T(34,w), T(17,h), T(3,r), T(3,s), T(256,c), U(2,w), U(2,h), V(k)]");
  i = choice_of(sp, single);
  ASSERT_GE(i, 0);
  EXPECT_EQ(sp.choices[size_t(i)].uk, uk(1, 1, 2, 2));
  EXPECT_EQ(choice_of(sp, parse_config("[T(256,c), U(3,h), V(k)]")), -1);
  EXPECT_EQ(choice_of(sp, parse_config("[Lseq(h,[(1,11),(1,12)]), T(256,c), U(a,h), U(2,k), V(k)]")),
            -1);
}

// yolo9000-23 in small: Ho = Wo = 17 has no divisor in 2..16, so only a pair
// along h tiles it; none is selected, so the best pair of non-selected ones
// (by its slower member) is used.
TEST(Space, FallbackToTheBestNonSelectedPair) {
  Shape sh = parse_shape("K=48,C=8,H=17,R=1");
  ClassTable t = table_of({uk_record(uk(3, 1, 1, 8), 90),                                // alone: 8 does not divide 17
                           uk_record(uk(1, 1, 1, 8), 70), uk_record(uk(1, 1, 1, 9), 60),  // 8 + 9: slower member 60
                           uk_record(uk(3, 1, 1, 5), 75), uk_record(uk(3, 1, 1, 6), 72),  // 5 + 6 + 6: 72
                           uk_record(uk(3, 1, 1, 4), 79, Status::crash)});
  Space sp = build_space(sh, t, 16);
  ASSERT_EQ(sp.choices.size(), 1u);
  const UkChoice& ch = sp.choices[0];
  EXPECT_TRUE(ch.fallback && ch.pair);
  EXPECT_EQ(ch.uk, uk(3, 1, 1, 5));
  EXPECT_EQ(ch.uk2, uk(3, 1, 1, 6));
  EXPECT_EQ(ch.h_extent() % 17, 0);
  EXPECT_NE(sp.note.find("using the best pair of non-selected ones that does: k3c1w1h{"), std::string::npos)
      << sp.note;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 50; ++i) EXPECT_NO_THROW(validate_config(sample_config(sp, rng), sh, 16));
}

TEST(Space, FallbackToTheBestNonSelectedThatDivides) {
  Shape sh = parse_shape("K=64,C=8,H=34,R=1");
  // Selected: h=8 only (no pair, 8 does not divide 34). Non-selected: h=2 and
  // h=17 divide; the faster h=17 wins; a crashed faster one is ignored.
  ClassTable t = table_of({uk_record(uk(2, 1, 1, 8), 90), uk_record(uk(1, 1, 1, 2), 50),
                           uk_record(uk(1, 1, 1, 17), 60), uk_record(uk(1, 1, 1, 34), 70, Status::crash),
                           uk_record(uk(1, 1, 3, 1), 75)});
  Space sp = build_space(sh, t, 16);
  ASSERT_EQ(sp.choices.size(), 1u);
  EXPECT_TRUE(sp.choices[0].fallback);
  EXPECT_EQ(sp.choices[0].uk, uk(1, 1, 1, 17));
  EXPECT_NE(sp.note.find("no selected microkernel or pair divides this shape"), std::string::npos)
      << sp.note;
  EXPECT_NE(sp.note.find("ct_ukernel_k1c1w1h17r1s1__avx512 (60.0% of peak)"), std::string::npos)
      << sp.note;
  EXPECT_EQ(sp.note.find('\n'), std::string::npos);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 50; ++i) EXPECT_NO_THROW(validate_config(sample_config(sp, rng), sh, 16));
}

TEST(Space, AnAdmittedMicrokernelTheTableLacksIsUsedUnprofiled) {
  // Ho = Wo = 34, K/16 = 4: k4c1w2h2r1s1 (avx512 admits it) divides, the
  // table lacks it (its h=17 one timed out): the space takes it and says to profile it.
  Shape sh = parse_shape("K=64,C=8,H=34,R=1");
  ClassTable t = table_of({uk_record(uk(2, 1, 1, 8), 90), uk_record(uk(1, 1, 1, 3), 50),
                           uk_record(uk(1, 1, 1, 17), 90, Status::timeout)});
  Space sp = build_space(sh, t, 16);
  ASSERT_EQ(sp.choices.size(), 1u);
  EXPECT_TRUE(sp.choices[0].fallback);
  EXPECT_FALSE(sp.choices[0].pair);
  EXPECT_EQ(sp.choices[0].uk, uk(4, 1, 2, 2));
  EXPECT_EQ(sp.note,
            "no microkernel in the class table divides this shape (it needs k divides padded K/lanes=64/16=4, "
            "c divides C=8, w divides Wo=34, h divides Ho=34, r divides R=1, s divides S=1); using "
            "ct_ukernel_k4c1w2h2r1s1__avx512, which the ISA admits but the table has not profiled (profile it: "
            "convtune profile, without --quick)");
}

TEST(Space, APrimeOutputTakesAnUnprofiledPairWithFewerAccumulators) {
  // A 17x17 output with one 16-lane vector of K: w, h, k can only be 1, and
  // avx512 microkernels want at least 14 accumulators. The space takes the
  // pair of 8 and 9 rows (8 accumulators in the smaller), unprofiled.
  Shape sh = parse_shape("K=16,C=8,H=17,R=1");
  ClassTable t = table_of({uk_record(uk(2, 1, 1, 8), 90), uk_record(uk(1, 1, 2, 7), 50)});
  Space sp = build_space(sh, t, 16);
  ASSERT_EQ(sp.choices.size(), 1u);
  const UkChoice& ch = sp.choices[0];
  EXPECT_TRUE(ch.fallback && ch.pair);
  EXPECT_EQ(ch.text(), "k1c1w1h{1x8+1x9}r1s1");
  EXPECT_EQ(sp.note,
            "no microkernel in the class table divides this shape (it needs k divides padded K/lanes=16/16=1, "
            "c divides C=8, w divides Wo=17, h divides Ho=17, r divides R=1, s divides S=1); no avx512 "
            "microkernel with the 14 accumulators its latency rule wants tiles it, so it uses "
            "k1c1w1h{1x8+1x9}r1s1, unprofiled, with 8 accumulators in the smaller of the two");
  std::mt19937_64 rng(1);
  for (int i = 0; i < 20; ++i) EXPECT_NO_THROW(validate_config(sample_config(sp, rng), sh, 16));
  // One that profiling saw fail is never taken: the pair of 7 and 10 rows instead.
  t.microkernels.push_back(uk_record(uk(1, 1, 1, 9), 50, Status::wrong_result));
  EXPECT_EQ(build_space(sh, t, 16).choices[0].text(), "k1c1w1h{1x7+1x10}r1s1");
  // A 3x3 filter over a 1x1 input (a detection head): one accumulator.
  sp = build_space(parse_shape("K=16,C=8,H=1,R=3,pad=1"), t, 16);
  ASSERT_EQ(sp.choices.size(), 1u);
  EXPECT_EQ(sp.choices[0].text(), "k1c1w1h1r1s1");
  EXPECT_TRUE(sp.choices[0].fallback);
  // An ISA this build does not know: the table alone is all there is to say.
  t.isa = "vax";
  EXPECT_EQ(error_of([&] { build_space(sh, t, 16); }),
            "no microkernel in the class table divides this shape (it needs k divides padded K/lanes=16/16=1, "
            "c divides C=8, w divides Wo=17, h divides Ho=17, r divides R=1, s divides S=1); profile more "
            "microkernels (convtune profile) or use a table that covers these sizes");
}

// A hang detector, not a speed goal (those live in bench/): a pair search
// quadratic in Ho would take hours on Ho = 1048573, which the test's ctest
// TIMEOUT ends; no assertion here reads a clock, so a loaded machine cannot
// fail it.
TEST(Space, LargeLegalShapesBuildQuickly) {
  // pad=1000000 hangs a quadratic pair search (every b for every a up to Ho). The shipped
  // table is a realistic one: many classes, several h per class.
  ClassTable t = table_of({});
  for (int h = 1; h <= 16; ++h) {
    t.microkernels.push_back(uk_record(uk(1, 1, 1, h), 90));
    t.microkernels.push_back(uk_record(uk(2, 1, 1, h), 90));
  }
  t.select_and_classify();
  for (const char* text : {"K=16,C=8,H=4096,R=3", "K=32,C=1,H=720720,W=1,R=1", "K=16,C=1,H=1048573,W=1,R=1",
                           "K=16,C=8,H=1024,R=3,pad=1024", "N=64,K=64,C=64,H=64,R=3"}) {
    Shape sh = parse_shape(text);
    Space sp = build_space(sh, t, 16);
    double size = sp.size();
    EXPECT_GT(size, 0) << text;
    EXPECT_LE(sp.choices.size(), 3 * (10000u + 32u)) << text;  // the cap holds per view (3x3: rows, Wino(2), Wino(2,b))
    std::mt19937_64 rng(1);
    for (int i = 0; i < 3; ++i) EXPECT_NO_THROW(validate_config(sample_config(sp, rng), sh, 16)) << text;
  }
  // The shipped table (hundreds of classes) on sizes with many divisors in every dimension.
  ClassTable shipped = read_table(std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx512.json");
  // R=60 and C=360 with many divisors took over a second in size() before it counted by lengths.
  for (const char* text : {"K=720,C=720,H=360,R=1", "K=240,C=240,H=720,R=3", "K=64,C=64,H=5040,W=24,R=1",
                           "K=128,C=360,H=3,W=2,R=60,pad=100"}) {
    Shape sh = parse_shape(text);
    Space sp = build_space(sh, shipped, 16);
    double size = sp.size();
    EXPECT_GT(size, 0) << text;
  }
  // Ho = 720720 has 240 divisors: more pairs than the cap, and the note says so.
  Space big = build_space(parse_shape("K=32,C=1,H=720720,W=1,R=1"), t, 16);
  EXPECT_EQ(big.note,
            "Ho=720720 admits more than 10000 pairs of microkernels along h; the space keeps at most 10000 "
            "(each pair of microkernels its fewest repeats of the smaller one first)");
  // Shared evenly: the k2 class, after the k1 one in the table, has pairs too
  // (a cap filled in table order left it none), and the cap holds.
  size_t pairs = 0, k2_pairs = 0;
  for (const UkChoice& c : big.choices) {
    pairs += c.pair;
    k2_pairs += c.pair && c.uk.k == 2;
  }
  EXPECT_LE(pairs, 10000u);
  EXPECT_GT(pairs, 9000u);
  EXPECT_GT(k2_pairs, 4000u);
}

// A log written before the cap was shared evenly holds pairs the capped
// space leaves out; resuming it adds them (tune_setup.cpp), but only pairs of
// selected microkernels of one class that divide the shape.
TEST(Space, AResumedPairBeyondTheCapIsAdded) {
  ClassTable t = table_of({});
  for (int h = 1; h <= 16; ++h) t.microkernels.push_back(uk_record(uk(1, 1, 1, h), 90));
  t.select_and_classify();
  Space sp = build_space(parse_shape("K=16,C=1,H=720720,W=1,R=1"), t, 16);
  ASSERT_FALSE(sp.note.empty());
  std::mt19937_64 rng(3);
  Config c;
  const Spec* lseq = nullptr;
  while (!lseq) {
    c = sample_config(sp, rng);
    for (const Spec& s : c.specs)
      if (s.kind == SpecKind::Lseq) lseq = &s;
  }
  // The same extent with the most repeats of the smaller microkernel: beyond the cap.
  Spec& l = *std::find_if(c.specs.begin(), c.specs.end(), [](const Spec& s) { return s.kind == SpecKind::Lseq; });
  auto [a, h1] = l.seq[0];
  auto [b, h2] = l.seq[1];
  const int64_t t_max = (b - 1) / h1;
  ASSERT_GT(t_max, 0) << to_string(c);
  l.seq[0] = {a + t_max * h2, h1};
  l.seq[1] = {b - t_max * h1, h2};
  validate_config(c, sp.shape, 16);
  ASSERT_EQ(choice_of(sp, c), -1) << to_string(c);
  const size_t n = sp.choices.size();
  const int i = add_capped_pair(sp, t, c);
  ASSERT_EQ(i, int(n)) << to_string(c);
  EXPECT_EQ(choice_of(sp, c), i);
  EXPECT_EQ(add_capped_pair(sp, t, c), i);  // once
  EXPECT_EQ(sp.choices.size(), n + 1);
  // Microkernels the table does not hold (h beyond 16): not added.
  Config other = c;
  for (Spec& s : other.specs)
    if (s.kind == SpecKind::Lseq) s.seq = {{{a + t_max * h2, h1 + 16}, {b - t_max * h1, h2 + 16}}};
  EXPECT_EQ(add_capped_pair(sp, t, other), -1) << to_string(other);
  EXPECT_EQ(sp.choices.size(), n + 1);
}

TEST(Space, PairsAreEveryDividingCombinationInOrder) {
  // The fast enumeration gives what the definition gives: all (a, b) >= 1
  // with a*h1 + b*h2 | Ho, ordered by class, then h1 < h2, then a, then b.
  ClassTable t = table_of({uk_record(uk(2, 1, 1, 3), 90), uk_record(uk(2, 1, 1, 4), 90),
                           uk_record(uk(2, 1, 1, 6), 90)});
  for (int H : {34, 36, 60, 97}) {
    Shape sh = parse_shape("K=32,C=4,R=1,H=" + std::to_string(H));
    Space sp = build_space(sh, t, 16);
    // The rows' Ho = H, then the same over the Flat(hw) view (config.h):
    // Ho*Wo = H*H pixels in one column.
    std::vector<std::string> want;
    for (const auto& [P, view] : {std::pair<int, std::string>{H, ""}, {H * H, "Flat(hw) "}})
      for (int h1 : {3, 4, 6})
        for (int h2 : {3, 4, 6}) {
          if (h2 <= h1) continue;
          for (int a = 1; a * h1 + h2 <= P; ++a)
            for (int b = 1; a * h1 + b * h2 <= P; ++b)
              if (P % (a * h1 + b * h2) == 0)
                want.push_back(fmt::format("{}k2c1w1h{{{}x{}+{}x{}}}r1s1", view, a, h1, b, h2));
        }
    std::vector<std::string> got;
    for (const UkChoice& ch : sp.choices)
      if (ch.pair) got.push_back(ch.text());
    EXPECT_EQ(got, want) << H;
  }
}

TEST(Space, SamplesAreValidAndRoundTrip) {
  Shape sh = zoo_layer("yolo9000-12");
  Space sp = build_space(sh, yolo_table(), 16);
  std::mt19937_64 rng(7);
  int with_pair = 0;
  for (int i = 0; i < 2000; ++i) {
    Config c = sample_config(sp, rng);
    ASSERT_NO_THROW(validate_config(c, sh, 16)) << to_string(c);
    ASSERT_EQ(parse_config(to_string(c)), c) << to_string(c);
    int ci = choice_of(sp, c);
    ASSERT_GE(ci, 0) << to_string(c);
    with_pair += sp.choices[size_t(ci)].pair;
  }
  EXPECT_GT(with_pair, 0);
  EXPECT_LT(with_pair, 2000);
}

// 500 samples, each valid, mapped back to a choice of its own view
// (its view too) and through the coordinate view unchanged; how many are in `view`.
int sampled_in_view(const Space& sp, const Shape& sh, std::mt19937_64& rng, const View& view) {
  const CoordinateView v(sp);
  int in_view = 0;
  for (int i = 0; i < 500; ++i) {
    const Config c = sample_config(sp, rng);
    EXPECT_NO_THROW(validate_config(c, sh, 8)) << to_string(c);
    const int ci = choice_of(sp, c);
    EXPECT_GE(ci, 0) << to_string(c);
    if (ci >= 0) EXPECT_EQ(sp.choices[size_t(ci)].view, c.view) << to_string(c);
    const std::optional<Point> p = v.from_config(c);
    EXPECT_TRUE(p) << to_string(c);
    if (p) EXPECT_EQ(v.to_config(*p), c);
    in_view += c.view == view;
  }
  return in_view;
}

// Flat(hw) (config.h): a 1x1 unpadded layer adds the microkernels and pairs
// that divide its Ho*Wo pixels as one column (resnet18-11: 7x7 = 49, which no
// 12-accumulator block divides but 15*3 + 2*2 does); samples of them carry
// Flat(hw) and map back to their choice, never to the unflattened one of the
// same sizes, and through the coordinate view. A padded or 3x3 layer has
// none. The sampler draws each view half the time, however many choices
// either has.
TEST(Space, FlatChoicesTileTheOutputPixelsAsOneColumn) {
  ClassTable t = table_of({uk_record(uk(4, 1, 1, 3), 95), uk_record(uk(4, 1, 1, 2), 90), uk_record(uk(2, 1, 7, 1), 88)});
  const Shape sh = zoo_layer("resnet18-11");
  Space sp = build_space(sh, t, 8);
  std::vector<std::string> texts;
  for (const UkChoice& ch : sp.choices) texts.push_back(ch.text());
  EXPECT_EQ(texts, (std::vector<std::string>{
                       "k2c1w7h1r1s1", "k4c1w1h{2x2+1x3}r1s1", "Flat(hw) k4c1w1h{2x2+1x3}r1s1", "Flat(hw) k4c1w1h{2x2+15x3}r1s1",
                       "Flat(hw) k4c1w1h{5x2+13x3}r1s1", "Flat(hw) k4c1w1h{8x2+11x3}r1s1", "Flat(hw) k4c1w1h{11x2+9x3}r1s1",
                       "Flat(hw) k4c1w1h{14x2+7x3}r1s1", "Flat(hw) k4c1w1h{17x2+5x3}r1s1", "Flat(hw) k4c1w1h{20x2+3x3}r1s1",
                       "Flat(hw) k4c1w1h{23x2+1x3}r1s1"}));
  std::mt19937_64 rng(3);
  EXPECT_NEAR(sampled_in_view(sp, sh, rng, View{View::flat, 0}), 250, 50);  // half, though 9 of the 11 choices are flat
  // The same Lseq without Flat(hw) is another choice (2 + 2 + 3 rows of each
  // of the 7 columns), and one that covers 49 rows only with Flat(hw).
  const int rows = choice_of(sp, parse_config("[T(16,k), T(7,w), Lseq(h,[(2,2),(1,3)]), T(256,c), U(a,h), U(4,k), V(k)]"));
  ASSERT_GE(rows, 0);
  EXPECT_EQ(sp.choices[size_t(rows)].view.kind, View::rows);
  EXPECT_EQ(choice_of(sp, parse_config("[T(16,k), Lseq(h,[(2,2),(15,3)]), T(256,c), U(a,h), U(4,k), V(k)]")), -1);
  for (const char* other : {"K=32,C=4,H=7,R=1,pad=1", "K=32,C=4,H=9,R=3"})
    for (const UkChoice& ch : build_space(parse_shape(other), t, 8).choices) EXPECT_NE(ch.view.kind, View::flat) << other;
}

// Wino(2) (config.h): a 3x3 layer at stride 1 adds the 1x1 microkernels
// and pairs that divide its tile count (resnet18-9: 14x14 outputs, 7x7 = 49
// tiles), on one thread only; the sampler draws the rows and the Winograd
// view half the time each; samples map back to their choice and through the
// coordinate view. Stride 2, 1x1 and --threads 2 have none.
TEST(Space, WinoChoicesTileTheTiles) {
  ClassTable t = table_of({uk_record(uk(4, 1, 1, 7), 95), uk_record(uk(4, 1, 7, 1), 88),
                           uk_record(uk(4, 1, 1, 7, 3, 3), 90)});
  const Shape sh = zoo_layer("resnet18-9");
  Space sp = build_space(sh, t, 8);
  std::vector<std::string> texts;
  for (const UkChoice& ch : sp.choices) texts.push_back(ch.text());
  // w = 7 and r = s = 3 fit the rows only: the view is one column of 1x1 GEMMs.
  EXPECT_EQ(texts, (std::vector<std::string>{"k4c1w1h7r1s1", "k4c1w7h1r1s1", "k4c1w1h7r3s3", "Wino(2) k4c1w1h7r1s1"}))
      << sp.note;
  std::mt19937_64 rng(3);
  EXPECT_NEAR(sampled_in_view(sp, sh, rng, View{View::wino, 0}), 250, 50);
  for (const char* other : {"K=32,C=4,H=21,R=3,stride=3", "K=32,C=4,H=7,R=1", "K=32,C=4,H=14,R=5,stride=2"})
    for (const UkChoice& ch : build_space(parse_shape(other), t, 8).choices)
      EXPECT_NE(ch.view.kind, View::wino) << other;
  // Stride 2 (the polyphase transform): 14x14 outputs, 7x7 = 49 tiles.
  std::vector<std::string> s2;
  for (const UkChoice& ch : build_space(parse_shape("K=32,C=4,H=28,R=3,stride=2,pad=1"), t, 8).choices)
    if (ch.view.kind == View::wino) s2.push_back(ch.text());
  EXPECT_EQ(s2, (std::vector<std::string>{"Wino(2) k4c1w1h7r1s1"}));
  // --threads 2: 49 tiles have no block of 16 or more that leaves 2 blocks.
  for (const UkChoice& ch : build_space(sh, t, 8, 2).choices) EXPECT_NE(ch.view.kind, View::wino) << "--threads 2";
}

// Wino(2,b,t) (config.h): with --threads t the space offers the blocks shared
// among the threads, each block's scratch within kWinoBlockBytes, a multiple
// of t blocks where one exists (resnet18-2: 784 tiles in 14 blocks of 56).
// Its candidates carry no P loop, and map back through the coordinate view.
TEST(Space, ThreadedWinoSharesTheBlocks) {
  EXPECT_EQ(threaded_wino_block(zoo_layer("resnet18-2"), 2), 56);
  EXPECT_EQ(threaded_wino_block(zoo_layer("resnet18-2"), 4), 49);  // 16 blocks; 14 of 56 leave 2 threads a block less
  // No divisor of 784 gives 3 threads as many blocks: 15 of 53, the last short (4 tiles short).
  EXPECT_EQ(threaded_wino_block(zoo_layer("resnet18-2"), 3), 53);
  // 196 tiles of 19.2 KiB: no divisor from 16 to 27 (the budget); 8 blocks of 25, not 7 of 28.
  EXPECT_EQ(threaded_wino_block(zoo_layer("resnet18-4"), 2), 25);
  // 49 tiles: blocks of 7 are below kWinoMinBlock and 49 is one block; 2 of 25, past the budget as Wino(2) is.
  EXPECT_EQ(threaded_wino_block(zoo_layer("resnet18-9"), 2), 25);
  EXPECT_EQ(threaded_wino_block(zoo_layer("resnet18-7"), 2), 25);
  EXPECT_EQ(threaded_wino_block(zoo_layer("resnet18-12"), 2), 0);  // 16 tiles: 2 blocks of 8 are below kWinoMinBlock
  EXPECT_EQ(threaded_wino_block(zoo_layer("resnet18-10"), 2), 0);
  EXPECT_EQ(threaded_wino_block(zoo_layer("yolo9000-12"), 2), 17);  // 17 x 32 KiB: none fits, the smallest past it
  EXPECT_EQ(threaded_wino_block(zoo_layer("yolo9000-4"), 2), 34);   // 136 blocks of 34 x 12 KiB
  EXPECT_EQ(threaded_wino_block(parse_shape("K=32,C=4,H=14,R=3,pad=1"), 2), 25);  // 49 tiles of 2.25 KiB
  // 32x32 tiles of 16 * 36 floats: at most 227 a block, so 8 blocks of 128.
  EXPECT_EQ(threaded_wino_block(parse_shape("K=32,C=4,H=64,R=3,pad=1"), 2), 128);
  ClassTable t = table_of({uk_record(uk(4, 1, 1, 7), 95), uk_record(uk(4, 1, 1, 7, 3, 3), 90)});
  const Shape sh = zoo_layer("resnet18-2");
  Space sp = build_space(sh, t, 8, 2);
  std::vector<std::string> texts;
  for (const UkChoice& ch : sp.choices) texts.push_back(ch.text());
  EXPECT_EQ(texts, (std::vector<std::string>{"k4c1w1h7r1s1", "k4c1w1h7r3s3", "Wino(2,56,2) k4c1w1h7r1s1"})) << sp.note;
  std::mt19937_64 rng(7);
  const CoordinateView v(sp);
  int wino = 0;
  for (int i = 0; i < 300; ++i) {
    const Config c = sample_config(sp, rng);
    EXPECT_NO_THROW(validate_config(c, sh, 8)) << to_string(c);
    EXPECT_EQ(config_threads(c), 2) << to_string(c);
    const std::optional<Point> p = v.from_config(c);
    ASSERT_TRUE(p) << to_string(c);
    EXPECT_EQ(v.to_config(*p), c);
    if (!c.wino()) continue;
    ++wino;
    EXPECT_EQ(c.view, (View{View::wino, 56, 2})) << to_string(c);
    for (const Spec& s : c.specs) EXPECT_NE(s.kind, SpecKind::P) << to_string(c);
  }
  EXPECT_GT(wino, 50);
  // Short last blocks: what the space draws for them is valid and maps back.
  ClassTable t5 = table_of({uk_record(uk(4, 1, 1, 7), 95), uk_record(uk(4, 1, 1, 5), 90)});
  for (const char* layer : {"resnet18-4", "resnet18-9"}) {
    const Shape s = zoo_layer(layer);
    Space sp5 = build_space(s, t5, 8, 2);
    const CoordinateView v5(sp5);
    int short_blocks = 0;
    for (int i = 0; i < 200; ++i) {
      const Config c = sample_config(sp5, rng);
      EXPECT_NO_THROW(validate_config(c, s, 8)) << layer << " " << to_string(c);
      const std::optional<Point> p = v5.from_config(c);
      ASSERT_TRUE(p) << to_string(c);
      EXPECT_EQ(v5.to_config(*p), c);
      if (c.wino()) short_blocks += c.view == View{View::wino, 25, 2};
    }
    EXPECT_GT(short_blocks, 20) << layer;
  }
}

// Wino(2,b) (config.h): where all tiles' scratch outgrows kWinoBlockBytes,
// the space adds the fused order over the largest block of tiles that fits
// (resnet18-2: 784 tiles of 16 * (64 + 64) floats = 8 KiB; 64 fit, 56 divides
// 784), a fourth view drawn as often as each other. Not where all tiles fit
// already, nor where the block would be below kWinoMinBlock tiles
// (resnet18-9: 49 tiles of 32 KiB, 7 of them a block).
TEST(Space, FusedWinoBlocksFitTheScratchBudget) {
  EXPECT_EQ(fused_wino_block(zoo_layer("resnet18-2")), 56);
  EXPECT_EQ(fused_wino_block(zoo_layer("yolo9000-2")), 68);  // 136 x 136 tiles of 6 KiB
  EXPECT_EQ(fused_wino_block(zoo_layer("resnet18-9")), 0);
  EXPECT_EQ(fused_wino_block(parse_shape("K=32,C=4,H=14,R=3")), 0);  // 49 tiles, 14 KiB in all
  ClassTable t = table_of({uk_record(uk(4, 1, 1, 7), 95), uk_record(uk(4, 1, 1, 7, 3, 3), 90)});
  const Shape sh = zoo_layer("resnet18-2");
  Space sp = build_space(sh, t, 8);
  std::vector<std::string> texts;
  for (const UkChoice& ch : sp.choices) texts.push_back(ch.text());
  EXPECT_EQ(texts, (std::vector<std::string>{"k4c1w1h7r1s1", "k4c1w1h7r3s3", "Wino(2) k4c1w1h7r1s1",
                                             "Wino(2,56) k4c1w1h7r1s1"}))
      << sp.note;
  std::mt19937_64 rng(5);
  EXPECT_NEAR(sampled_in_view(sp, sh, rng, View{View::wino, 56}), 167, 45);
  EXPECT_NEAR(sampled_in_view(sp, sh, rng, View{View::wino, 0}), 167, 45);
}

// A sampled candidate starts in the form its microkernel was profiled
// fastest in (UkRecord::fence): unfenced, the taps family's large tiles spill.
TEST(Space, SamplesStartWithTheProfiledFence) {
  Shape sh = parse_shape("K=64,C=16,H=14,R=3");
  std::vector<UkRecord> recs = {uk_record(uk(4, 1, 7, 1, 3, 3), 98), uk_record(uk(2, 1, 7, 1, 3, 1), 90),
                                uk_record(uk(1, 1, 14, 1, 1, 3), 95), uk_record(uk(1, 1, 2, 7), 85)};
  recs[0].fence = TapFence::s;
  recs[1].fence = TapFence::r;
  ClassTable t = table_of(recs);
  Space sp = build_space(sh, t, 16);
  ASSERT_EQ(sp.choices.size(), 4u);
  std::map<std::string, TapFence> want;
  for (const UkRecord& r : recs) want[sizes_text(r.sizes)] = r.fence;
  std::mt19937_64 rng(3);
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    Config c = sample_config(sp, rng);
    ASSERT_NO_THROW(validate_config(c, sh, 16)) << to_string(c);
    ASSERT_EQ(parse_config(to_string(c)), c) << to_string(c);
    const UkChoice& ch = sp.choices[size_t(choice_of(sp, c))];
    EXPECT_EQ(c.fence, want.at(sizes_text(ch.uk))) << to_string(c);
    seen.insert(sizes_text(ch.uk));
  }
  EXPECT_EQ(seen.size(), 4u);
}

TEST(Space, SameSeedSameSequence) {
  Space sp = build_space(zoo_layer("yolo9000-12"), yolo_table(), 16);
  std::mt19937_64 a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 50; ++i) {
    Config x = sample_config(sp, a);
    EXPECT_EQ(x, sample_config(sp, b));
    differs |= x != sample_config(sp, c);
  }
  EXPECT_TRUE(differs);
}

// Ho = 5 = 1*2 + 1*3: only one pair, no single; k and c have 2 left each.
Space tiny_pair_space() {
  return build_space(parse_shape("K=32,C=2,H=5,W=1,R=1"),
                     table_of({uk_record(uk(1, 1, 1, 2), 90), uk_record(uk(1, 1, 1, 3), 90)}), 16);
}

TEST(Space, EveryLseqSlotIsReached) {
  Space sp = tiny_pair_space();
  ASSERT_EQ(sp.choices.size(), 1u);
  ASSERT_TRUE(is_pair(sp.choices[0], 1, 2, 1, 3));
  std::mt19937_64 rng(3);
  std::map<size_t, std::set<size_t>> slots;  // levels above T(n,c) -> Lseq positions seen
  std::set<std::string> distinct;
  for (int i = 0; i < 8000; ++i) {
    Config c = sample_config(sp, rng);
    distinct.insert(to_string(c));
    size_t reuse = c.specs.size();
    while (c.specs[reuse - 1].kind != SpecKind::T || c.specs[reuse - 1].dim != Dim::c) --reuse;
    --reuse;  // index of T(n,c)
    size_t pos = 0;
    while (c.specs[pos].kind != SpecKind::Lseq) ++pos;
    ASSERT_LT(pos, reuse);
    slots[reuse - 1].insert(pos);
  }
  // c reuse 2: one level (k) above it; c reuse 1: two levels (k, c in either order).
  ASSERT_EQ(slots.size(), 2u);
  for (const auto& [levels, seen] : slots) EXPECT_EQ(seen.size(), levels + 1) << levels;
  // size(): reuse 1 gives 2 orders x 3 slots, reuse 2 gives 1 x 2; each with
  // and without Pf(w) (a T on k is always above the reuse loop), Pf(o) and Nt(o).
  EXPECT_EQ(sp.size(), 64.0);
  EXPECT_EQ(distinct.size(), 64u);
}

TEST(Space, SizeMatchesExhaustiveSampling) {
  Shape sh = parse_shape("K=32,C=4,H=4,W=1,R=1");
  // Class k1c1w1 with h {1,2} (pair 2x1+1x2 = 4), and class k2c1w1 with h {1}.
  ClassTable t = table_of({uk_record(uk(1, 1, 1, 1), 90), uk_record(uk(1, 1, 1, 2), 90),
                           uk_record(uk(2, 1, 1, 1), 90), uk_record(uk(2, 2, 1, 4), 30)});
  Space sp = build_space(sh, t, 16);
  int pairs = 0;
  for (const UkChoice& ch : sp.choices) pairs += ch.pair;
  EXPECT_GE(pairs, 1);
  std::mt19937_64 rng(11);
  std::set<std::string> distinct, streamed;  // streamed: configurations drawn with Nt(o), without it
  // Each of the 620 is drawn without Nt(o) by sample 44980 (26000 to 43000
  // with seeds 1 to 4): fewer samples would miss some.
  for (int i = 0; i < 60000; ++i) {
    Config c = sample_config(sp, rng);
    if (distinct.insert(to_string(c)).second) {
      ASSERT_NO_THROW(validate_config(c, sh, 16)) << to_string(c);
    }
    if (c.stream_out) {
      c.stream_out = false;
      streamed.insert(to_string(c));
    }
  }
  // Nt(o) is drawn one time in eight, independently of the rest: every
  // configuration without it also exists with it, so size() counts twice
  // those without it, and each one drawn with it is one of them.
  std::set<std::string> plain;
  for (const std::string& t : distinct)
    if (t.find("Nt(o)") == std::string::npos) plain.insert(t);
  EXPECT_EQ(sp.size(), 2.0 * double(plain.size()));
  EXPECT_GT(streamed.size(), plain.size() / 2);
  for (const std::string& t : streamed) EXPECT_TRUE(plain.count(t)) << t;
}

// Issue 12: --threads 1 never puts a P; --threads 2 always one, outermost.
TEST(Space, ThreadsOneHasNoParallelLoop) {
  Shape sh = zoo_layer("yolo9000-12");
  Space sp = build_space(sh, yolo_table(), 16, 1);
  EXPECT_FALSE(sp.parallel);
  EXPECT_EQ(sp.size(), build_space(sh, yolo_table(), 16).size());
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i)
    for (const Spec& s : sample_config(sp, rng).specs) ASSERT_NE(s.kind, SpecKind::P);
}

TEST(Space, ThreadsTwoPutsOneValidParallelLoopOutermost) {
  Shape sh = zoo_layer("yolo9000-12");  // tiles left: k 16 or 32, w 34 or 17, h 1, 2 or 17
  Space sp = build_space(sh, yolo_table(), 16, 2);
  ASSERT_TRUE(sp.parallel);
  EXPECT_EQ(sp.threads, 2);
  // Each has a P, but the Winograd view's: one thread's Wino(2) becomes
  // Wino(2,17,2), the threads over its 17 blocks (ThreadedWinoSharesTheBlocks).
  size_t one_thread = 0, threaded = 0;
  for (const UkChoice& ch : build_space(sh, yolo_table(), 16).choices) one_thread += ch.view.kind != View::wino;
  for (const UkChoice& ch : sp.choices) threaded += ch.view == View{View::wino, 17, 2};
  EXPECT_GT(threaded, 0u);
  EXPECT_EQ(sp.choices.size(), one_thread + threaded);
  std::mt19937_64 rng(7);
  std::set<char> dims;
  int lseq = 0;
  for (int i = 0; i < 2000; ++i) {
    Config c = sample_config(sp, rng);
    ASSERT_NO_THROW(validate_config(c, sh, 16)) << to_string(c);
    if (c.wino()) {
      EXPECT_EQ(c.view, (View{View::wino, 17, 2})) << to_string(c);
      EXPECT_EQ(config_threads(c), 2) << to_string(c);
      for (const Spec& s : c.specs) ASSERT_NE(s.kind, SpecKind::P) << to_string(c);
      continue;
    }
    ASSERT_EQ(c.specs[0].kind, SpecKind::P) << to_string(c);
    EXPECT_EQ(c.specs[0].factor, 2) << to_string(c);
    EXPECT_EQ(config_threads(c), 2) << to_string(c);
    ASSERT_EQ(parse_config(to_string(c)), c);
    ASSERT_GE(choice_of(sp, c), 0) << to_string(c);
    dims.insert(dim_char(c.specs[0].dim));
    for (size_t j = 1; j < c.specs.size(); ++j) {
      ASSERT_NE(c.specs[j].kind, SpecKind::P) << to_string(c);
      lseq += c.specs[j].kind == SpecKind::Lseq;
    }
  }
  EXPECT_EQ(dims, (std::set<char>{'h', 'k', 'w'}));  // never n: N = 1
  EXPECT_GT(lseq, 0);
  // Fewer configurations than with one thread: P takes a factor 2 of k or w.
  EXPECT_GT(sp.size(), 0);
  EXPECT_NE(sp.size(), build_space(sh, yolo_table(), 16).size());
}

TEST(Space, ParallelOptionsDivideThreadsAndTiles) {
  Shape sh = parse_shape("N=2,K=64,C=4,H=12,R=1");
  Space sp = build_space(sh, table_of({uk_record(uk(1, 1, 1, 3), 90)}), 16, 4);
  ASSERT_EQ(sp.choices.size(), 2u);  // k 4 tiles, h 4, w 12, n 2; then its Flat(hw) form
  ASSERT_EQ(sp.choices[0].view.kind, View::rows);
  std::vector<std::string> got;
  for (const ParOption& o : sp.parallel_options(sp.choices[0])) {
    Config c;
    c.specs = parallel_specs(o);
    got.push_back(to_string(c));
  }
  // Singles, then the nested pairs of 4 = 2 x 2 threads over two dimensions.
  EXPECT_EQ(got, (std::vector<std::string>{"[P(2,n)]", "[P(2,k)]", "[P(4,k)]", "[P(2,h)]", "[P(4,h)]", "[P(2,w)]",
                                           "[P(4,w)]", "[P(2,n), P(2,k)]", "[P(2,n), P(2,h)]", "[P(2,n), P(2,w)]",
                                           "[P(2,k), P(2,h)]", "[P(2,k), P(2,w)]", "[P(2,h), P(2,w)]"}));
  // Exhaustive sampling agrees with size() with the P options in.
  Shape small = parse_shape("K=32,C=2,H=2,W=1,R=1");
  Space sm = build_space(small, table_of({uk_record(uk(1, 1, 1, 1), 90)}), 16, 2);
  ASSERT_TRUE(sm.parallel);
  std::mt19937_64 rng(3);
  std::set<std::string> distinct;
  for (int i = 0; i < 5000; ++i) distinct.insert(to_string(sample_config(sm, rng)));
  EXPECT_EQ(sm.size(), double(distinct.size()));
}

// No count of 3 k vectors, 3 rows, 3 columns is even: each becomes P(3,d,2),
// 2 + 1 iterations; sampled configurations validate, run 2 threads, and
// exhaustive sampling agrees with size(). An even split, where there is one,
// leaves the uneven ones out.
TEST(Space, UnevenSplitsWhenNoCountIsEven) {
  Space sp = build_space(parse_shape("K=48,C=2,H=3,R=1"), table_of({uk_record(uk(1, 1, 1, 1), 90)}), 16, 2);
  ASSERT_TRUE(sp.parallel);
  EXPECT_EQ(sp.note, "");
  std::vector<std::string> got;
  for (const ParOption& o : sp.parallel_options(sp.choices[0])) {
    EXPECT_EQ(o.threads(), 2);
    got.push_back(to_string(Config{parallel_specs(o)}));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"[P(3,k,2)]", "[P(3,h,2)]", "[P(3,w,2)]"}));
  std::mt19937_64 rng(7);
  std::set<std::string> distinct;
  for (int i = 0; i < 20000; ++i) {
    const Config c = sample_config(sp, rng);
    ASSERT_NO_THROW(validate_config(c, sp.shape, 16)) << to_string(c);
    EXPECT_EQ(config_threads(c), 2);
    distinct.insert(to_string(c));
  }
  EXPECT_EQ(sp.size(), double(distinct.size()));
  Space even = build_space(parse_shape("K=48,C=2,H=4,W=3,R=1"), table_of({uk_record(uk(1, 1, 1, 1), 90)}), 16, 2);
  got.clear();
  for (const ParOption& o : even.parallel_options(even.choices[0])) got.push_back(to_string(Config{parallel_specs(o)}));
  EXPECT_EQ(got, (std::vector<std::string>{"[P(2,h)]"}));
}

// 16 cores on a 7x7 output (resnet18-12's): no single dimension has 16 tiles
// of a 4-vector k block, but k x h nested does; sampled configurations carry
// both P loops adjacent and outermost, valid, and exhaustive sampling agrees
// with size() with the pairs in.
TEST(Space, NestedParallelPairsSplitThreadsOverTwoDimensions) {
  Space sp = build_space(parse_shape("K=512,C=4,H=8,W=7,R=1"), table_of({uk_record(uk(4, 1, 1, 1), 90)}), 16, 16);
  ASSERT_TRUE(sp.parallel);
  int64_t most = 0;
  for (const ParOption& o : sp.parallel_options(sp.choices[0])) {
    most = std::max(most, o.threads());
    EXPECT_EQ(16 % o.threads(), 0);
    if (o.count2 > 1) EXPECT_NE(o.dim, o.dim2);
  }
  EXPECT_EQ(most, 16);  // P(8,k) P(2,h): k has 8 tiles, h 8, w 7
  std::mt19937_64 rng(5);
  bool nested = false;
  for (int i = 0; i < 300; ++i) {
    const Config c = sample_config(sp, rng);
    ASSERT_EQ(c.specs[0].kind, SpecKind::P);
    if (c.specs[1].kind == SpecKind::P) nested = true;
    EXPECT_NO_THROW(validate_config(c, sp.shape, 16)) << to_string(c);
  }
  EXPECT_TRUE(nested);
  Space sm = build_space(parse_shape("K=64,C=2,H=2,W=2,R=1"), table_of({uk_record(uk(1, 1, 1, 1), 90)}), 16, 4);
  std::set<std::string> distinct;
  for (int i = 0; i < 60000; ++i) {  // Nt(o) is drawn 1 in 8: size() counts each configuration with and without it
    Config c = sample_config(sm, rng);
    c.stream_out = false;
    distinct.insert(to_string(c));
  }
  EXPECT_EQ(sm.size(), 2.0 * double(distinct.size()));
}

// More cores than work (issue 12): 4 k tiles x 2 rows x 2 columns; two nested
// P loops reach 8 of 16 threads, and the note says how many stay idle.
// (A 3x3 filter: a 1x1 one adds the Flat(hw) view, whose 4 k x 4 pixels use all 16.)
TEST(Space, MoreThreadsThanWorkSaysHowManyIdle) {
  Space sp = build_space(parse_shape("K=64,C=2,H=2,W=2,R=3,pad=1"), table_of({uk_record(uk(1, 1, 1, 1), 90)}), 16, 16);
  ASSERT_TRUE(sp.parallel);
  EXPECT_EQ(sp.note,
            "no split uses all 16 threads: candidates run at most 8 and leave 8 idle (a P count divides --threads "
            "and the tiles left along its dimension, or exceeds --threads)");
  Space two = build_space(parse_shape("K=64,C=2,H=2,W=2,R=1"), table_of({uk_record(uk(1, 1, 1, 1), 90)}), 16, 2);
  EXPECT_EQ(two.note, "");
}

TEST(Space, NoParallelOptionSaysSo) {
  // Ho = Wo = 3, one k tile: nothing to split over 4 threads, evenly or not.
  Space sp = build_space(parse_shape("K=16,C=4,H=3,R=1"), table_of({uk_record(uk(1, 1, 1, 3), 90)}), 16, 4);
  EXPECT_FALSE(sp.parallel);
  EXPECT_EQ(sp.note,
            "no loop of n, k, h or w has a count divisible by a divisor of --threads 4 or above it for any "
            "microkernel choice; candidates run on one thread");
  std::mt19937_64 rng(1);
  EXPECT_NE(sample_config(sp, rng).specs[0].kind, SpecKind::P);
  EXPECT_EQ(error_of([] { build_space(parse_shape("K=16,C=4,H=3,R=1"), ClassTable{}, 16, 0); }),
            "--threads is 0; give at least 1");
}

TEST(Space, DeterministicChoiceOrder) {
  Shape sh = zoo_layer("yolo9000-12");
  Space a = build_space(sh, yolo_table(), 16), b = build_space(sh, yolo_table(), 16);
  ASSERT_EQ(a.choices.size(), b.choices.size());
  for (size_t i = 0; i < a.choices.size(); ++i) EXPECT_EQ(a.choices[i].text(), b.choices[i].text());
  EXPECT_EQ(a.size(), b.size());
}

// config.h g: a grouped shape's space tiles one group (Kg, Cg) under R(g),
// with P(t,g) among the options on more threads; every sample and every
// coordinate point is a valid configuration with its group loops outermost.
TEST(Space, GroupedShapesTileOneGroupUnderTheGroupLoop) {
  const Shape sh = parse_shape("K=64,C=64,H=14,R=3,groups=16");  // Kg = Cg = 4: one vector of 8 lanes
  const ClassTable table = table_of({uk_record(uk(1, 1, 7, 2), 90), uk_record(uk(1, 2, 2, 7), 88),
                                     uk_record(uk(2, 1, 7, 2), 95), uk_record(uk(1, 1, 1, 14, 3, 3), 85)});
  for (int threads : {1, 2}) {
    const Space sp = build_space(sh, table, 8, threads);
    ASSERT_FALSE(sp.choices.empty());
    size_t lanes = 0;  // config.h Lanes(g): 4 per group on 8 lanes, depthwise microkernels over the channels
    for (const UkChoice& ch : sp.choices) {
      if (ch.view.kind == View::lanes) {
        EXPECT_TRUE(ch.uk.dw && ch.fallback) << ch.text();  // the table has no depthwise family
        EXPECT_EQ(sp.remaining(ch, Dim::g), 1);
        EXPECT_FALSE(sp.group_loops(ch));
        ++lanes;
        continue;
      }
      EXPECT_TRUE(sp.group_loops(ch));
      EXPECT_EQ(ch.uk.k, 1) << ch.text();  // k2 would need Kg padded to 16
      EXPECT_EQ(sp.remaining(ch, Dim::g), 16);
      EXPECT_EQ(4 % ch.uk.c, 0);
    }
    EXPECT_GT(lanes, 0u);
    EXPECT_LT(lanes, sp.choices.size());
    EXPECT_GT(sp.size(), 0);
    if (threads == 2) {
      const std::vector<ParOption> pars = sp.parallel_options(sp.choices[0]);
      ASSERT_FALSE(pars.empty());
      EXPECT_EQ(pars[0].dim, Dim::g);
      EXPECT_EQ(pars[0].count, 2);
      Config c;
      c.specs = outer_specs(sp, sp.choices[0], pars[0]);
      EXPECT_EQ(to_string(c), "[P(2,g), R(g)]");
    }
    std::mt19937_64 rng(7);
    const CoordinateView view(sp);
    std::set<std::string> firsts;
    for (int i = 0; i < 40; ++i) {
      const Config c = sample_config(sp, rng);
      EXPECT_NO_THROW(validate_config(c, sh, 8)) << to_string(c);
      if (!c.lanes()) firsts.insert(to_string(c.specs[0]));
      const std::optional<Point> p = view.from_config(c);
      ASSERT_TRUE(p.has_value()) << to_string(c);
      EXPECT_EQ(to_string(view.to_config(*p)), to_string(c));
      for (const Neighbor& n : view.neighbors(*p, rng))
        EXPECT_NO_THROW(validate_config(view.to_config(n.point), sh, 8)) << to_string(view.to_config(n.point));
    }
    if (threads == 1) EXPECT_EQ(firsts, std::set<std::string>{"R(g)"});
    else EXPECT_TRUE(firsts.count("P(2,g)")) << "P over the groups is one of the options";
  }
}

// CONTRACT.md "Depthwise microkernels": a depthwise shape's choices are the
// depthwise family's microkernels that tile it (r = R, s = S, c = 1, k over
// the channel vectors), enumerated from the ISA's rule when the table has none.
TEST(DepthwiseSpace, EnumeratesTheFamilyWhenTheTableHasNone) {
  const Shape sh = parse_shape("K=40,C=40,H=14,R=5,stride=2,groups=40");  // Ho = Wo = 7, Kp = 48 on 16 lanes
  ClassTable t = yolo_table();                                            // dense microkernels only
  const Space sp = build_space(sh, t, 16);
  ASSERT_FALSE(sp.choices.empty());
  const Isa isa = load_isa("avx512");
  size_t expect = 0;
  for (const UkSizes& u : enumerate_ukernels(isa, "depthwise"))
    expect += u.r == 5 && u.s == 5 && 3 % u.k == 0 && 7 % u.w == 0 && 7 % u.h == 0;
  EXPECT_EQ(sp.choices.size(), expect);
  for (const UkChoice& ch : sp.choices) {
    EXPECT_TRUE(ch.uk.dw && ch.fallback && !ch.pair) << ch.text();
    EXPECT_EQ(ch.uk.c, 1);
    EXPECT_EQ(ch.uk.r, 5);
    EXPECT_EQ(ch.uk.s, 5);
    EXPECT_EQ(ch.view.kind, View::rows);  // no Flat(hw) or Wino(2) with groups
  }
  EXPECT_EQ(sp.note, fmt::format("the class table has no depthwise microkernel that tiles this shape (profiled "
                                 "without the depthwise family, or not for this filter): the space holds the {} unmeasured ones of the avx512 depthwise family "
                                 "that tile this shape",
                                 expect));
  // Sampled configurations are valid for the shape and map back to their choice.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 50; ++i) {
    const Config c = sample_config(sp, rng);
    EXPECT_NO_THROW(validate_config(c, sh, 16)) << to_string(c);
    EXPECT_GE(choice_of(sp, c), 0) << to_string(c);
  }
  EXPECT_GT(sp.size(), 0);
}

// A table profiled without the depthwise family (the shipped ones) is still
// read, and a depthwise shape's space falls back to the family's enumeration.
TEST(DepthwiseSpace, ATableWithoutTheFamilyFallsBack) {
  for (const char* isa : {"avx512", "avx2"}) {
    // The shipped table as one made before the depthwise family: its dense families alone.
    nlohmann::json j = nlohmann::json::parse(
        test::read_file(std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/" + isa + ".json"));
    j["families"] = {"paper", "taps"};
    for (const char* key : {"microkernels", "classes"}) {
      nlohmann::json kept = nlohmann::json::array();
      for (const auto& x : j[key])
        if (x.value("family", "") != "depthwise") kept.push_back(x);
      j[key] = kept;
    }
    const ClassTable t = table_from_json(j, std::string(isa) + ".json");
    const Space sp = build_space(parse_shape("K=32,C=32,H=8,R=3,pad=1,groups=32"), t, load_isa(isa).lanes);
    ASSERT_FALSE(sp.choices.empty()) << isa;
    for (const UkChoice& ch : sp.choices) EXPECT_TRUE(ch.uk.dw && ch.fallback) << isa << " " << ch.text();
    EXPECT_NE(sp.note.find("the class table has no depthwise microkernel that tiles this shape"), std::string::npos)
        << sp.note;
  }
}

// A table's depthwise microkernels, where it has them, and no dense one of
// the same sizes; a dense shape's space the other way round. The table's JSON
// keeps them apart (family "depthwise", classes of their own).
TEST(DepthwiseSpace, TakesTheTablesDepthwiseMicrokernels) {
  const Shape sh = parse_shape("K=32,C=32,H=8,R=3,groups=32"), dense = parse_shape("K=32,C=32,H=8,R=3");
  UkRecord dw = uk_record(UkSizes{2, 1, 4, 1, 3, 3, true}, 90);
  dw.name = "ct_dwkernel_k2c1w4h1r3s3__avx512";
  dw.family = "depthwise";
  ClassTable t = table_of({dw, uk_record(uk(2, 1, 4, 1, 3, 3), 90)});
  t.families = {"paper", "depthwise"};
  ASSERT_EQ(t.classes.size(), 2u);
  const ClassTable back = table_from_json(table_to_json(t), "t.json");
  ASSERT_EQ(back.microkernels.size(), 2u);
  EXPECT_EQ(back.microkernels[0].sizes, dw.sizes);
  ASSERT_EQ(back.classes.size(), 2u);
  EXPECT_NE(back.classes[0].sizes.dw, back.classes[1].sizes.dw);
  for (const ClassTable* table : {static_cast<const ClassTable*>(&t), &back}) {
    const Space sp = build_space(sh, *table, 16);
    ASSERT_EQ(sp.choices.size(), 1u);
    EXPECT_EQ(sp.choices[0].uk, dw.sizes);
    EXPECT_FALSE(sp.choices[0].fallback);
    EXPECT_EQ(sp.note, "");
    const Space ds = build_space(dense, *table, 16);
    for (const UkChoice& ch : ds.choices) EXPECT_FALSE(ch.uk.dw) << ch.text();
  }
}

// --threads 2: every choice takes a P over k, h or w.
TEST(DepthwiseSpace, ThreadsGiveAParallelLoop) {
  const Shape sh = parse_shape("K=32,C=32,H=28,R=3,groups=32");
  const Space sp = build_space(sh, yolo_table(), 8, 2);
  ASSERT_TRUE(sp.parallel);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20; ++i) {
    const Config c = sample_config(sp, rng);
    ASSERT_EQ(c.specs[0].kind, SpecKind::P) << to_string(c);
    EXPECT_NO_THROW(validate_config(c, sh, 8)) << to_string(c);
  }
}

// What stays refused says so in one line: filters the depthwise family has no r, s for.
TEST(DepthwiseSpace, AFilterTheFamilyHasNoSizeForIsTiledInParts) {
  const Shape sh = parse_shape("K=32,C=32,H=12,R=9,groups=32");
  const Space sp = build_space(sh, yolo_table(), 16);
  ASSERT_FALSE(sp.choices.empty());
  for (const UkChoice& ch : sp.choices) {
    EXPECT_TRUE(ch.uk.dw && ch.fallback) << ch.text();
    EXPECT_EQ(9 % ch.uk.r, 0) << ch.text();
    EXPECT_EQ(9 % ch.uk.s, 0) << ch.text();
  }
  EXPECT_NE(sp.note.find(", each over part of the 9x9 filter"), std::string::npos) << sp.note;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20; ++i) EXPECT_NO_THROW(validate_config(sample_config(sp, rng), sh, 16));
}

}  // namespace
}  // namespace convtune::space_test
