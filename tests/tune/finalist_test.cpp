// The finalists step at the end of a tune (finalist.h): the K best distinct
// configurations re-measured interleaved, ranked by their duel in one child
// process (finalist_duel.h), the winner checked at every output element
// before it is written, all of it reported; the log is untouched.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "convtune/tune/finalist.h"
#include "convtune/tune/finalist_duel.h"
#include "test_util.h"

namespace convtune::finalist_test {
namespace {

using test::run_cli;

const std::string kFast = " --arch avx2 --table " + std::string(CONVTUNE_SOURCE_DIR) +
                          "/configs/tables/avx2.json --shape K=32,C=16,H=8,R=3 --min-repeat-ms 1 --repeat 1 "
                          "--no-onednn -q";
const std::string kFaultCc = std::string(CONVTUNE_SOURCE_DIR) + "/tests/execution/fault_cc.sh";

std::vector<nlohmann::json> log_of(const std::string& path) {
  std::vector<nlohmann::json> v;
  std::istringstream ss(test::read_file(path));
  for (std::string line; std::getline(ss, line);)
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

// tune under fault_cc.sh with the given faults; stdout and the exit code.
test::CliResult tune_with_faults(const test::TempDir& td, const std::string& faults, const std::string& args) {
  std::string cmd = "env CC=" + kFaultCc + " FAULT_CC_FAULTS=" + faults + " " + CONVTUNE_BIN + " tune" + kFast + args +
                    " > " + td.file("stdout") + " 2> " + td.file("stderr");
  int rc = std::system(cmd.c_str());
  test::CliResult r;
  r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = test::read_file(td.file("stdout"));
  r.err = test::read_file(td.file("stderr"));
  return r;
}

Record rec(const std::string& config, double gflops, Status status = Status::ok) {
  Record r;
  r.config = config;
  r.gflops = gflops;
  r.status = status;
  return r;
}

TEST(Finalists, TopRecordsAreTheBestDistinctOkOnes) {
  const std::vector<Record> log = {rec("a", 10), rec("b", 30), rec("c", 99, Status::wrong_result), rec("b", 50),
                                   rec("d", 20), rec("e", 40)};
  std::vector<std::string> got;
  for (const Record& r : top_records(log, 3)) got.push_back(r.config);
  EXPECT_EQ(got, (std::vector<std::string>{"e", "b", "d"}));  // b's first figure, 30, counts
  EXPECT_EQ(top_records(log, 10).size(), 4u);
  EXPECT_TRUE(top_records(log, 0).empty());
}

// A resumed log's sessions ran at other clocks: the ranking is by share of
// each record's own peak. b ran at 200 of a 250 peak (80 %), a at 180 of a
// 150 peak (120 %): a is the faster kernel.
TEST(Finalists, TopRecordsCompareSharesOfTheirOwnPeak) {
  std::vector<Record> log = {rec("a", 180), rec("b", 200), rec("c", 100)};
  log[0].peak_gflops = 150;
  log[1].peak_gflops = 250;
  log[2].peak_gflops = 150;
  std::vector<std::string> got;
  for (const Record& r : top_records(log, 3)) got.push_back(r.config);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b", "c"}));
}

// A resumed log's sessions: shares of different peaks compare only to a few
// %, so each session's best is a finalist before any session's second. The
// first session's a1..a3 all rank above the second's b1 by share; the third
// session (c1) ranks below both and still gets its turn before a2.
TEST(Finalists, TopRecordsTakeEachSessionsBestInTurn) {
  std::vector<Record> log = {rec("a1", 220), rec("a2", 218), rec("a3", 216), rec("b1", 200), rec("b2", 199),
                             rec("c1", 150), rec("a1", 100)};
  for (size_t i : {0, 1, 2, 6}) log[i].peak_gflops = 210;
  for (size_t i : {3, 4}) log[i].peak_gflops = 220;
  log[5].peak_gflops = 200;
  std::vector<std::string> got;
  for (const Record& r : top_records(log, 5)) got.push_back(r.config);
  EXPECT_EQ(got, (std::vector<std::string>{"a1", "b1", "c1", "a2", "b2"}));
  got.clear();
  for (const Record& r : top_records(log, 2)) got.push_back(r.config);
  EXPECT_EQ(got, (std::vector<std::string>{"a1", "b1"}));
  EXPECT_EQ(top_records(log, 10).size(), 6u);  // a1's second record is not a second finalist
}

Finalist finalist(const std::string& config, double search, double remeasured, double duel = 0,
                  Status status = Status::ok) {
  Finalist f;
  f.config = config;
  f.search_gflops = search;
  f.gflops = remeasured;
  f.duel_gflops = duel;
  f.status = status;
  return f;
}

std::vector<std::string> ranked(std::vector<Finalist> f) {
  rank_finalists(f);
  std::vector<std::string> got;
  for (const auto& x : f) got.push_back(x.config);
  return got;
}

TEST(Finalists, RankPutsSurvivorsFirstByTheirNewFigure) {
  EXPECT_EQ(ranked({finalist("slow-now", 90, 40), finalist("dropped", 95, 0, 0, Status::crash),
                    finalist("fast-now", 80, 60), finalist("unmeasured", 50, 0)}),
            (std::vector<std::string>{"fast-now", "unmeasured", "slow-now", "dropped"}));
  // The duel's figure outranks the re-measure's.
  EXPECT_EQ(ranked({finalist("re-measured-fastest", 0, 90, 50), finalist("duel-fastest", 0, 60, 70),
                    finalist("middle", 0, 80, 60)}),
            (std::vector<std::string>{"duel-fastest", "middle", "re-measured-fastest"}));
}

// A kernel that one child's buffers favour (fast there, slow in the other
// two) gets its slow figure, and a steady one beats it; pooling the samples
// or taking the best child would crown the favourite.
TEST(Finalists, TheDuelsFigureIsTheMedianOfItsChildrensMedians) {
  const std::vector<std::vector<double>> favoured{{1.0, 1.1, 0.9}, {1.5, 1.4, 1.6}, {1.3, 1.3, 1.2}};
  const std::vector<std::vector<double>> steady{{1.2, 1.2, 1.2}, {1.2, 1.25, 1.2}, {1.2, 1.2, 1.15}};
  EXPECT_DOUBLE_EQ(duel_seconds(favoured), 1.3);
  EXPECT_LT(duel_seconds(steady), duel_seconds(favoured));
  EXPECT_DOUBLE_EQ(duel_seconds({{2.0, 4.0, 3.0}}), 3.0);  // one child: its median
  EXPECT_DOUBLE_EQ(duel_seconds({{}, {2.0}}), 2.0);        // a child without samples counts for nothing
  EXPECT_EQ(duel_seconds({}), 0);
}

TEST(Finalists, OptionsAreChecked) {  // at parse time: exit 2, as every range check
  auto r = run_cli("tune" + kFast + " --top -1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "convtune: error: --top: -1 is out of range; give a number of finalists (0 or 1: no re-measure) in [0, "
            "1000]\n");
  r = run_cli("tune" + kFast + " --top-rounds -1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "convtune: error: --top-rounds: -1 is out of range; give a number of rounds (0: the duel alone ranks) in "
            "[0, 1000]\n");
  r = run_cli("tune" + kFast + " --duel-rounds -1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "convtune: error: --duel-rounds: -1 is out of range; give a number of rounds (0: no duel) in [0, 1000]\n");
}

TEST(Finalists, TheBestAreReMeasuredAndTheWinnerIsWritten) {
  test::TempDir td;
  auto r = run_cli("tune" + kFast + " --trials 6 --top 3 --top-rounds 2 --json --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  auto log = log_of(td.file("log.jsonl"));
  ASSERT_EQ(log.size(), 6u);  // no record for the re-measure
  // The finalists are the 3 best of the log, distinct, ranked by the new figure.
  std::vector<std::pair<double, std::string>> by_search;
  for (const auto& rec : log)
    if (rec["status"] == "ok") by_search.emplace_back(rec["gflops"].get<double>(), rec["config"].get<std::string>());
  ASSERT_GE(by_search.size(), 3u);
  std::sort(by_search.rbegin(), by_search.rend());
  std::set<std::string> expected{by_search[0].second, by_search[1].second, by_search[2].second}, got;
  const auto& fin = j["finalists"];
  ASSERT_EQ(fin.size(), 3u) << j;
  EXPECT_EQ(j["top_rounds"], 2);
  EXPECT_EQ(j["duel_rounds"], 20);  // the default
  for (size_t i = 0; i < fin.size(); ++i) {
    got.insert(fin[i]["config"].get<std::string>());
    EXPECT_EQ(fin[i]["status"], "ok") << fin[i];
    EXPECT_EQ(fin[i]["round_gflops"].size(), 2u) << fin[i];
    EXPECT_GE(fin[i]["spread_percent"].get<double>(), 0);
    EXPECT_GT(fin[i]["duel_gflops"].get<double>(), 0) << fin[i];
    EXPECT_GE(fin[i]["duel_iqr_percent"].get<double>(), 0) << fin[i];
    // Ranked by the duel, not by the re-measure.
    if (i > 0) EXPECT_GE(fin[i - 1]["duel_gflops"].get<double>(), fin[i]["duel_gflops"].get<double>());
    EXPECT_EQ(fin[i]["winner"], i == 0);
    EXPECT_EQ(fin[i]["full_check"], i == 0 ? "passed" : "not run");
  }
  EXPECT_EQ(got, expected);
  // best is the re-measured winner, with its search figure beside it.
  const std::string winner = fin[0]["config"];
  EXPECT_EQ(j["best"]["config"], winner);
  EXPECT_EQ(j["best"]["gflops"], fin[0]["gflops"]);
  EXPECT_EQ(j["best"]["search_gflops"], fin[0]["search_gflops"]);
  EXPECT_NE(test::read_file(j["best"]["kernel_c"]).find(" * config: " + winner + "\n"), std::string::npos);
  auto file = nlohmann::json::parse(test::read_file(td.file("finalists.json")));
  EXPECT_EQ(j["finalists_file"], td.file("finalists.json"));
  EXPECT_EQ(file["winner"], winner);
  EXPECT_EQ(file["rounds"], 2);
  EXPECT_EQ(file["duel_rounds"], 20);
  EXPECT_EQ(file["finalists"], fin);
}

TEST(Finalists, DuelRoundsZeroRanksByTheReMeasure) {
  test::TempDir td;
  auto r = run_cli("tune" + kFast + " --trials 6 --top 3 --top-rounds 2 --duel-rounds 0 --json --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["duel_rounds"], 0);
  const auto& fin = j["finalists"];
  ASSERT_EQ(fin.size(), 3u) << j;
  for (size_t i = 0; i < fin.size(); ++i) {
    EXPECT_FALSE(fin[i].contains("duel_gflops")) << fin[i];
    if (i > 0) EXPECT_GE(fin[i - 1]["gflops"].get<double>(), fin[i]["gflops"].get<double>());
  }
}

// --top-rounds 0 (a budget's default): nothing re-measured, the duel alone
// ranks, and the winner keeps its search figure.
TEST(Finalists, TopRoundsZeroLeavesTheDuelAloneToRank) {
  test::TempDir td;
  auto r = run_cli("tune" + kFast + " --trials 6 --top 3 --top-rounds 0 --duel-rounds 3 --json --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["top_rounds"], 0);
  EXPECT_EQ(j["duel_rounds"], 3);
  const auto& fin = j["finalists"];
  ASSERT_EQ(fin.size(), 3u) << j;
  for (size_t i = 0; i < fin.size(); ++i) {
    EXPECT_FALSE(fin[i].contains("gflops")) << fin[i];
    EXPECT_GT(fin[i]["duel_gflops"].get<double>(), 0) << fin[i];
    if (i > 0) EXPECT_GE(fin[i - 1]["duel_gflops"].get<double>(), fin[i]["duel_gflops"].get<double>());
  }
  EXPECT_TRUE(fin[0]["winner"].get<bool>());
  EXPECT_DOUBLE_EQ(j["best"]["gflops"].get<double>(), j["best"]["search_gflops"].get<double>());
}

// The duel builds its own shared objects (duelNN, NN the finalist's place
// before ranking): one that computes wrong values is dropped, one that
// crashes the duel's child is dropped and the rest duel again.
TEST(Finalists, TheDuelDropsAWrongAndACrashingFinalist) {
  test::TempDir td;
  auto r = tune_with_faults(td, "duel00:crash,duel01:wrong",
                            " --trials 6 --top 4 --top-rounds 1 --duel-rounds 3 --json --out " + td.file("o"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& fin = j["finalists"];
  ASSERT_EQ(fin.size(), 4u) << j;
  EXPECT_EQ(j["duel_rounds"], 3);
  std::vector<std::string> statuses;
  for (size_t i = 0; i < fin.size(); ++i) {
    statuses.push_back(fin[i]["status"]);
    if (fin[i]["status"] == "ok") {
      EXPECT_GT(fin[i]["duel_gflops"].get<double>(), 0) << fin[i];
    } else {
      EXPECT_FALSE(fin[i].contains("duel_gflops")) << fin[i];
      EXPECT_FALSE(fin[i]["winner"].get<bool>()) << fin[i];
    }
    if (fin[i]["status"] == "crash")
      EXPECT_EQ(fin[i]["detail"],
                "duel: killed by signal 4 (Illegal instruction) in the duel's child, while it ran this kernel")
          << fin[i];
    if (fin[i]["status"] == "wrong_result")
      EXPECT_EQ(fin[i]["detail"].get<std::string>().rfind(
                    "duel: duel01 disagrees with the reference at output (n=0,h=0,w=0,k=0): ", 0),
                0u)
          << fin[i];
  }
  // The survivors first, then the dropped (rank_finalists).
  EXPECT_EQ(statuses[0], "ok");
  EXPECT_EQ(statuses[1], "ok");
  std::sort(statuses.begin() + 2, statuses.end());
  EXPECT_EQ(statuses[2], "crash");
  EXPECT_EQ(statuses[3], "wrong_result");
  EXPECT_TRUE(fin[0]["winner"].get<bool>());
}

// A finalist that hangs the duel's child is stopped by --timeout (no new
// line from the child for that long) and dropped; the rest duel again.
TEST(Finalists, TheDuelDropsAHangingFinalist) {
  test::TempDir td;
  auto r = tune_with_faults(td, "duel00:hang",
                            " --trials 6 --top 3 --top-rounds 1 --duel-rounds 3 --timeout 2 --json --out " +
                                td.file("o"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto fin = nlohmann::json::parse(r.out)["finalists"];
  ASSERT_EQ(fin.size(), 3u) << fin;
  EXPECT_GT(fin[0]["duel_gflops"].get<double>(), 0) << fin;
  EXPECT_GT(fin[1]["duel_gflops"].get<double>(), 0) << fin;
  EXPECT_EQ(fin[2]["status"], "timeout") << fin;
  EXPECT_EQ(fin[2]["detail"], "duel: no result within 2 s in the duel's child, while it ran this kernel") << fin;
}

TEST(Finalists, TopOneMeasuresNothingAgain) {
  test::TempDir td;
  auto r = run_cli("tune" + kFast + " --trials 3 --top 1 --json --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["top_rounds"], 0);
  ASSERT_EQ(j["finalists"].size(), 1u) << j;
  EXPECT_FALSE(j["finalists"][0].contains("gflops")) << j;
  EXPECT_EQ(j["finalists"][0]["full_check"], "passed");  // still checked everywhere
  EXPECT_EQ(j["best"]["gflops"], j["best"]["search_gflops"]);
  EXPECT_EQ(log_of(td.file("log.jsonl")).size(), 3u);
  // And the human summary has no finalists table; the winner is still checked.
  test::TempDir td2;
  r = run_cli("tune" + kFast + " --trials 2 --top 0 --out " + td2.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("finalists"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("re-measured"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nverified: at every output element (the search checks --check-points samples)\n"),
            std::string::npos)
      << r.out;
}

// Candidates wrong at one output element that the sampled check does not
// pick pass the search; the check at every element catches them.
TEST(Finalists, AWinnerWrongAtOneElementIsSkipped) {
  test::TempDir td;
  auto r = tune_with_faults(td, "cand00000:wrong_one,cand00001:wrong_one",
                            " --trials 3 --top 3 --check-points 1 --json --out " + td.file("o"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto log = log_of(td.file("o/log.jsonl"));
  ASSERT_EQ(log.size(), 3u);
  for (const auto& rec : log) ASSERT_EQ(rec["status"], "ok") << rec;  // the fault escaped the sampled check
  auto j = nlohmann::json::parse(r.out);
  const std::string good = log[2]["config"];
  EXPECT_EQ(j["best"]["config"], good);
  EXPECT_NE(test::read_file(td.file("o/" + log[2]["layer"].get<std::string>() + ".c")).find(" * config: " + good + "\n"),
            std::string::npos);
  int winners = 0;
  for (const auto& f : j["finalists"]) {
    if (f["winner"]) {
      ++winners;
      EXPECT_EQ(f["config"], good);
      EXPECT_EQ(f["full_check"], "passed");
    } else if (f["full_check"] == "failed") {
      EXPECT_NE(f["config"], good);
      EXPECT_EQ(f["status"], "wrong_result");
      EXPECT_EQ(f["detail"].get<std::string>().rfind("full check: output element 1 differs from the reference by ", 0),
                0u)
          << f;
    } else {
      EXPECT_EQ(f["full_check"], "not run") << f;
    }
  }
  EXPECT_EQ(winners, 1);
}

TEST(Finalists, WhenEveryFinalistIsWrongNothingIsWritten) {
  test::TempDir td;
  auto r = tune_with_faults(td, "cand00000:wrong_one,cand00001:wrong_one",
                            " --trials 2 --top 2 --check-points 1 --out " + td.file("o"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("finalists, re-measured in 3 interleaved rounds of fresh processes, ranked by a duel of 20 "
                       "interleaved rounds in 3 processes:\n"),
            std::string::npos)
      << r.out;
  size_t failed = 0;
  for (size_t at = 0; (at = r.out.find("full check: output element 1 differs", at)) != std::string::npos; ++at)
    ++failed;
  EXPECT_EQ(failed, 2u) << r.out;
  EXPECT_NE(r.out.find("best: none (no finalist passed the check at every output element)\n"), std::string::npos)
      << r.out;
  for (const auto& e : std::filesystem::directory_iterator(td.file("o")))
    EXPECT_NE(e.path().extension(), ".c") << e.path();
  auto file = nlohmann::json::parse(test::read_file(td.file("o/finalists.json")));
  EXPECT_TRUE(file["winner"].is_null());
}

// Finalists from a resumed log are generated and built again (as finalNN);
// one that now fails is dropped and reported.
TEST(Finalists, ResumedFinalistsAreRebuiltAndAFailingOneDropped) {
  test::TempDir td;
  const std::string out = " --out " + td.file("o");
  auto r = run_cli("tune" + kFast + " --trials 2 --top 0" + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = tune_with_faults(td, "final00:crash,final01:crash,final02:crash",
                       " --trials 3 --top 3 --top-rounds 1 --resume --json" + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto log = log_of(td.file("o/log.jsonl"));
  ASSERT_EQ(log.size(), 3u);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["finalists"].size(), 3u) << j;
  EXPECT_EQ(j["best"]["config"], log[2]["config"]);
  for (const auto& f : j["finalists"]) {
    if (f["config"] == log[2]["config"]) {
      EXPECT_TRUE(f["winner"].get<bool>());
      continue;
    }
    EXPECT_EQ(f["status"], "crash") << f;
    EXPECT_EQ(f["detail"].get<std::string>().rfind("re-measure round 1: killed by signal 4", 0), 0u) << f;
    EXPECT_FALSE(f.contains("gflops")) << f;
  }
  EXPECT_EQ(j["finalists"][2]["status"], "crash");  // the dropped rank last
}

}  // namespace
}  // namespace convtune::finalist_test
