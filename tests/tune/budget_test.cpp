// The budget's rule as a pure function (budget.h): who gets the next batch,
// and that the batches fit the budget; the duration text and its errors.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "convtune/core/error.h"
#include "convtune/tune/budget.h"
#include "convtune/tune/network_tune.h"
#include "test_util.h"

namespace convtune::budget_test {
namespace {

// A layer that has had its opening batch: `trials` trials at `spt` seconds
// each, its best time falling by `gain` (relative) per trial from `first_s`.
BudgetLayer opened_layer(int64_t trials, double first_s, double gain, double spt = 1, double count = 1) {
  BudgetLayer l;
  l.count = count;
  l.trials = trials;
  l.opened = true;
  l.seconds_per_trial = spt;
  double best = first_s;
  for (int64_t i = 0; i < trials; ++i) {
    l.best_curve.push_back(best);
    best *= 1 - gain;
  }
  return l;
}

// Runs the rule over simulated layers until it gives nothing more: each
// batch's trials extend the layer's curve at its own gain, time passes by the
// estimate. Returns the trials each layer got; *spent_s the time the batches took.
std::vector<int64_t> simulate(std::vector<BudgetLayer> ls, const std::vector<double>& gain, double budget_s,
                              double* spent_s = nullptr, const BudgetRule& rule = {}) {
  std::vector<int64_t> got(ls.size(), 0);
  double spent = 0;
  for (int guard = 0; guard < 10000; ++guard) {
    const BudgetBatch b = next_batch(ls, budget_s - spent, 4, rule);
    if (b.layer < 0) break;
    BudgetLayer& l = ls[size_t(b.layer)];
    for (int64_t i = 0; i < b.trials; ++i) {
      const double last = l.best_curve.empty() ? 1e-3 : l.best_curve.back();
      l.best_curve.push_back(last * (1 - gain[size_t(b.layer)]));
    }
    l.trials += b.trials;
    l.opened = true;
    if (l.seconds_per_trial == 0) l.seconds_per_trial = 1;
    spent += b.trials * l.seconds_per_trial;
    got[size_t(b.layer)] += b.trials;
  }
  if (spent_s) *spent_s = spent;
  return got;
}

TEST(BudgetRule, ALayerThatStoppedImprovingExpectsLess) {
  const BudgetLayer flat = opened_layer(40, 1e-3, 0);
  const BudgetLayer improving = opened_layer(40, 1e-3, 0.02);
  EXPECT_LT(expected_gain(flat), expected_gain(improving));
  EXPECT_LT(budget_score(flat, 0), budget_score(improving, 0));
}

TEST(BudgetRule, ALayerThatStoppedImprovingGetsFewerCandidates) {
  // Same time, same cost, same history length: one still improves, one does not.
  const std::vector<int64_t> got =
      simulate({opened_layer(8, 1e-3, 0.02), opened_layer(8, 1e-3, 0.02)}, {0.02, 0.0}, 120);
  EXPECT_GT(got[0], got[1]) << got[0] << " vs " << got[1];
  EXPECT_GT(got[1], 0);  // its prior still gives it something early on
}

TEST(BudgetRule, ALayerBehindOneDnnKeepsTheGapAsItsGain) {
  BudgetLayer behind = opened_layer(40, 2e-3, 0);  // stopped at twice oneDNN's time
  behind.reference_s = 1e-3;
  EXPECT_DOUBLE_EQ(expected_gain(behind), 0.5 / 16);
  BudgetLayer ahead = opened_layer(40, 1e-3, 0);  // stopped ahead of oneDNN: the prior's remnant alone
  ahead.reference_s = 2e-3;
  EXPECT_DOUBLE_EQ(expected_gain(ahead), expected_gain(opened_layer(40, 1e-3, 0)));
  EXPECT_LT(expected_gain(ahead), expected_gain(behind));
  // Two stopped layers of equal time and cost: the one behind gets the batches.
  BudgetLayer level = opened_layer(8, 2e-3, 0);
  level.reference_s = 2e-3;
  BudgetLayer trailing = opened_layer(8, 2e-3, 0);
  trailing.reference_s = 1e-3;
  const std::vector<int64_t> got = simulate({level, trailing}, {0.0, 0.0}, 120);
  EXPECT_GT(got[1], 2 * got[0]) << got[1] << " vs " << got[0];
}

TEST(BudgetRule, ALayerWithMostOfTheModelsTimeGetsMore) {
  // Equal gains; the first takes ten times the second's time (or stands for ten nodes).
  const std::vector<int64_t> slow =
      simulate({opened_layer(8, 1e-2, 0.01), opened_layer(8, 1e-3, 0.01)}, {0.01, 0.01}, 120);
  EXPECT_GT(slow[0], 2 * slow[1]) << slow[0] << " vs " << slow[1];
  const std::vector<int64_t> many =
      simulate({opened_layer(8, 1e-3, 0.01, 1, 10), opened_layer(8, 1e-3, 0.01)}, {0.01, 0.01}, 120);
  EXPECT_GT(many[0], 2 * many[1]) << many[0] << " vs " << many[1];
}

TEST(BudgetRule, ALayerWithFewTrialsGetsItsOpeningBatchFirst) {
  std::vector<BudgetLayer> ls{opened_layer(50, 1e-1, 0.05), BudgetLayer{}, BudgetLayer{}};
  BudgetBatch b = next_batch(ls, 1000, 4);
  EXPECT_EQ(b.layer, 1);  // not the big improving one
  EXPECT_TRUE(b.opening);
  EXPECT_EQ(b.trials, 4);  // a whole batch: the first layer's cost stands in for its own
  ls[1].opened = true;
  EXPECT_EQ(next_batch(ls, 1000, 4).layer, 2);
  // Nothing measured anywhere: the very first opening is one candidate.
  const BudgetBatch first = next_batch({BudgetLayer{}, BudgetLayer{}}, 1000, 4);
  EXPECT_EQ(first.layer, 0);
  EXPECT_EQ(first.trials, 1);
}

TEST(BudgetRule, TheFirstOpeningsLeaveRoomForTheLastOnes) {
  // 10 s left, 2 s a candidate: layer 1's opening keeps one candidate of layer 2's.
  std::vector<BudgetLayer> ls{opened_layer(1, 1e-3, 0, 2), BudgetLayer{}, BudgetLayer{}};
  const BudgetBatch b = next_batch(ls, 10, 8);
  EXPECT_EQ(b.layer, 1);
  EXPECT_EQ(b.trials, 4);  // (10 - 2) / 2
}

TEST(BudgetRule, ALayerAtItsCapOrExhaustedGetsNothing) {
  std::vector<BudgetLayer> ls{opened_layer(10, 1e-2, 0.05), opened_layer(3, 1e-3, 0)};
  ls[0].cap = 10;
  BudgetBatch b = next_batch(ls, 100, 4);
  EXPECT_EQ(b.layer, 1);
  ls[1].exhausted = true;
  EXPECT_EQ(next_batch(ls, 100, 4).layer, -1);
  ls[0].cap = 12;
  b = next_batch(ls, 100, 4);
  EXPECT_EQ(b.layer, 0);
  EXPECT_EQ(b.trials, 2);  // to the cap, not past it
}

TEST(BudgetRule, TheBudgetIsNeverExceededByMoreThanOneCandidate) {
  for (double budget : {7.5, 20.0, 61.0}) {
    std::vector<BudgetLayer> ls{opened_layer(4, 1e-2, 0.02, 1.5), opened_layer(4, 1e-3, 0.01, 0.7),
                                BudgetLayer{}};
    for (BudgetLayer& l : ls) l.closing_s = l.opened ? 2 : 0;
    double spent = 0;
    simulate(ls, {0.02, 0.01, 0.03}, budget, &spent);
    const double reserve = budget_reserve(ls);
    EXPECT_LE(spent + reserve, budget + 1.5) << "budget " << budget;
    EXPECT_GT(spent, 0) << "budget " << budget;
  }
  // A batch that does not fit is cut; one candidate that does not fit is not started.
  std::vector<BudgetLayer> one{opened_layer(4, 1e-2, 0.02, 3)};
  one[0].closing_s = 1;
  EXPECT_EQ(next_batch(one, 8, 4).trials, 2);  // (8 - 1) / 3
  EXPECT_EQ(next_batch(one, 3.9, 4).layer, -1);
}

// The reserve keeps every layer's light closing (the winner checked and
// written) and, for finalists beyond it, at most rule.finalists_s.
TEST(BudgetRule, TheReserveKeepsAShareForFinalists) {
  std::vector<BudgetLayer> ls(23, opened_layer(4, 1e-3, 0.01, 1.3));
  for (BudgetLayer& l : ls) l.closing_s = 20, l.light_closing_s = 2;
  EXPECT_DOUBLE_EQ(budget_reserve(ls), 23 * 20.0);
  BudgetRule rule;
  rule.finalists_s = 120;
  EXPECT_DOUBLE_EQ(budget_reserve(ls, rule), 23 * 2.0 + 120);
  rule.finalists_s = 1000;  // more than all finalists take
  EXPECT_DOUBLE_EQ(budget_reserve(ls, rule), 23 * 20.0);
}

// Eleven layers, three minutes, closings of 16 s each (11 x 16 s is nearly
// the whole budget): with a fifth of the budget for finalists every layer
// still gets its opening batch and more, and the batches leave the reserve.
// (Reserving every layer's finalists in full, the first candidate's closing
// estimate left no room for the ten other openings.)
TEST(BudgetRule, AShortBudgetStillOpensEveryLayer) {
  std::vector<BudgetLayer> ls{opened_layer(1, 1e-3, 0.02, 1.3)};
  ls[0].closing_s = 16, ls[0].light_closing_s = 2;
  ls.resize(11);
  BudgetRule rule;
  rule.finalists_s = 0.2 * 180;
  double spent = 0;
  const std::vector<int64_t> got = simulate(ls, std::vector<double>(11, 0.02), 180 - 29, &spent, rule);
  for (size_t i = 1; i < got.size(); ++i) EXPECT_GE(got[i], 4) << "layer " << i;
  EXPECT_LE(spent + 11 * 2.0 + rule.finalists_s, 180 - 29 + 1.3);
  // Without the share, the full reserve starves them.
  EXPECT_EQ(simulate(ls, std::vector<double>(11, 0.02), 180 - 29)[1], 0);
}

TEST(BudgetDuration, TheFormsParse) {
  EXPECT_EQ(parse_duration("90s"), 90);
  EXPECT_EQ(parse_duration("10m"), 600);
  EXPECT_EQ(parse_duration("1h30m"), 5400);
  EXPECT_EQ(parse_duration("1h30m15s"), 5415);
  EXPECT_EQ(parse_duration("2h"), 7200);
  EXPECT_EQ(parse_duration("600"), 600);
  EXPECT_EQ(parse_duration("2.5"), 2.5);
  EXPECT_EQ(parse_duration("1.5m"), 90);
}

TEST(BudgetDuration, BadTextSaysWhatAndTheForms) {
  const std::string forms = "; give a duration such as 90s, 10m, 1h30m or plain seconds";
  EXPECT_EQ(test::error_of([] { parse_duration(""); }), "--budget '': it is empty" + forms);
  EXPECT_EQ(test::error_of([] { parse_duration("10x"); }), "--budget '10x': unknown unit 'x' (use h, m or s)" + forms);
  EXPECT_EQ(test::error_of([] { parse_duration("1m30"); }),
            "--budget '1m30': the number at the end has no unit (h, m or s)" + forms);
  EXPECT_EQ(test::error_of([] { parse_duration("30s1m"); }),
            "--budget '30s1m': give the units once each, in the order h, m, s" + forms);
  EXPECT_EQ(test::error_of([] { parse_duration("m"); }), "--budget 'm': expected a number at 'm'" + forms);
  EXPECT_EQ(test::error_of([] { parse_duration("-5"); }), "--budget '-5': expected a number at '-5'" + forms);
  EXPECT_EQ(test::error_of([] { parse_duration("0s"); }), "--budget '0s': it is not a positive duration" + forms);
  EXPECT_EQ(test::error_of([] { parse_duration("1..2"); }), "--budget '1..2': expected a number at '1..2'" + forms);
}

TEST(BudgetDuration, FormatsWholeSeconds) {
  EXPECT_EQ(format_duration(0.4), "0s");
  EXPECT_EQ(format_duration(45), "45s");
  EXPECT_EQ(format_duration(192.7), "3m12s");
  EXPECT_EQ(format_duration(600), "10m");
  EXPECT_EQ(format_duration(5400), "1h30m");
}

TEST(BudgetProgress, TheLineAfterABatch) {
  EXPECT_EQ(budget_progress_line(192, 600, "resnet18-7", 4, 12, 4.21e-3, 5.1e-3),
            "budget 3m12s of 10m: resnet18-7 +4 trials (12), model 4.21 ms (oneDNN 5.10 ms)");
  EXPECT_EQ(budget_progress_line(5, 90, "a", 1, 1, 1e-3, 0), "budget 5s of 1m30s: a +1 trials (1), model 1.00 ms");
}

TEST(BudgetState, RoundTripsAndAMissingFileIsFresh) {
  test::TempDir td;
  EXPECT_EQ(read_budget_state(td.file("none.json")).spent_s, 0);
  BudgetState s{600, 123.5, {{"resnet18-7", 0.8, 3.5}}};
  write_budget_state(td.file("budget.json"), s);
  const BudgetState r = read_budget_state(td.file("budget.json"));
  EXPECT_EQ(r.budget_s, 600);
  EXPECT_EQ(r.spent_s, 123.5);
  ASSERT_EQ(r.layers.size(), 1u);
  EXPECT_EQ(r.layers[0].id, "resnet18-7");
  EXPECT_EQ(r.layers[0].seconds_per_trial, 0.8);
  EXPECT_EQ(r.layers[0].closing_s, 3.5);
  test::write_file(td.file("bad.json"), "{\"budget_s\": 1}");
  EXPECT_EQ(test::error_of([&] { read_budget_state(td.file("bad.json")); }),
            "budget state '" + td.file("bad.json") +
                "' has no spent_s number; remove it to start the budget afresh");
}

}  // namespace
}  // namespace convtune::budget_test
