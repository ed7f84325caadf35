// `tune --budget`: several layers tuned within a time, each with a verified
// winner; --resume spends only what is left (docs/budget.md).
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "convtune/core/isa.h"
#include "test_util.h"

namespace convtune::tune_budget_test {
namespace {

const std::string kForms = "; give a duration such as 90s, 10m, 1h30m or plain seconds";

TEST(CliTuneBudget, BadDurationsAndAMissingOutSayTheFix) {
  auto r = test::run_cli("tune --shape K=16,C=8,H=10,R=3 --shape K=32,C=16,H=8,R=1 --budget 1m30 --out unused-dir");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --budget '1m30': the number at the end has no unit (h, m or s)" + kForms + "\n");
  r = test::run_cli("tune --shape K=16,C=8,H=10,R=3 --shape K=32,C=16,H=8,R=1 --budget 10m");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --budget keeps the time it has spent in <out>/budget.json; give --out DIR\n");
}

struct BudgetRun {
  std::vector<nlohmann::json> layers;
  nlohmann::json network;
  double wall_s = 0;
};

BudgetRun tune_within(const std::string& out, const std::string& budget, bool resume) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = test::run_cli("tune --arch avx2 --shape K=16,C=8,H=10,R=3 --shape K=32,C=16,H=8,R=1 --budget " +
                               budget + " --out " + out +
                               " --threads 1 --jobs 1 --min-repeat-ms 5 --repeat 2 --top 2 --top-rounds 1 "
                               "--duel-rounds 0 --no-onednn --json" +
                               (resume ? " --resume" : ""));
  BudgetRun run;
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  size_t start = 0;
  for (size_t end; (end = r.out.find('\n', start)) != std::string::npos; start = end + 1) {
    const auto j = nlohmann::json::parse(r.out.substr(start, end - start));
    (j.contains("network") ? run.network : run.layers.emplace_back()) = j;
  }
  EXPECT_EQ(run.layers.size(), 2u) << r.out;
  return run;
}

int64_t new_trials(const BudgetRun& r) {
  int64_t n = 0;
  for (const auto& l : r.layers) n += l["new_trials"].get<int64_t>();
  return n;
}

TEST(CliTuneBudget, StopsInsideTheBudgetWithAVerifiedWinnerPerLayerAndResumesWhatIsLeft) {
  if (!cpu_supports(load_isa("avx2"))) GTEST_SKIP() << "this CPU has no AVX2";
  test::TempDir td;
  const double budget = 12;
  const BudgetRun first = tune_within(td.file("o"), "12s", false);
  // The longest a candidate took: the most the batches may overrun by.
  const auto state = nlohmann::json::parse(test::read_file(td.file("o/budget.json")));
  double candidate_s = 0;
  for (const auto& [id, l] : state["layers"].items())
    candidate_s = std::max(candidate_s, l["seconds_per_trial"].get<double>());
  ASSERT_GT(candidate_s, 0) << state.dump();
  // A quarter more for the closing phase's estimate and the process's start:
  // on a busy machine the re-measure and the full check take longer than the
  // estimate made from the search's candidates (BudgetRule.* checks the rule).
  const auto within = [&](double b) { return b * 1.25 + candidate_s; };
  EXPECT_LE(first.wall_s, within(budget)) << state.dump();
  EXPECT_LE(state["spent_s"].get<double>(), budget);
  for (const auto& l : first.layers) {
    ASSERT_FALSE(l["best"].is_null()) << l.dump();
    EXPECT_GT(l["new_trials"].get<int64_t>(), 0);
    const auto& f = l["finalists"];
    EXPECT_TRUE(std::any_of(f.begin(), f.end(), [](const nlohmann::json& x) {
      return x["winner"].get<bool>() && x["full_check"] == "passed";
    })) << l.dump();
  }
  // The same budget again: nothing is left for another batch.
  const BudgetRun again = tune_within(td.file("o"), "12s", true);
  EXPECT_EQ(new_trials(again), 0);
  for (const auto& l : again.layers) EXPECT_FALSE(l["best"].is_null()) << l.dump();
  // A larger one continues where the first stopped.
  const BudgetRun more = tune_within(td.file("o"), "24s", true);
  EXPECT_GT(new_trials(more), 0);
  EXPECT_LE(more.network["budget_spent_s"].get<double>(), within(24)) << more.network.dump();
}

}  // namespace
}  // namespace convtune::tune_budget_test
