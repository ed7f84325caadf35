// Tuning on a cluster from the command line: `layers --list` as jobs,
// `tune --job-index` running one of them, a merged store read by tune
// --resume and bench, and another machine's records refused by name.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "convtune/core/isa.h"
#include "convtune/core/machine_id.h"
#include "convtune/tune/records.h"
#include "test_util.h"

namespace convtune::cluster_cli_test {
namespace {

using test::run_cli;

const std::string kTiming = " --min-repeat-ms 1 --repeat 1 --threads 1 -q";
const std::string kTune = " --arch avx2 --table " + std::string(CONVTUNE_SOURCE_DIR) +
                          "/configs/tables/avx2.json --top 0 --no-onednn" + kTiming;
const std::string kTiny = " --shape K=16,C=8,H=8,R=3";
const std::string kTinyId = "N1_K16_C8_H8_W8_R3_S3_st1_p1";

TEST(ClusterCli, LayersListPrintsOneJobPerLine) {
  auto r = run_cli("layers --network resnet18 --list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::istringstream lines(r.out);
  std::vector<std::string> v;
  for (std::string l; std::getline(lines, l);) v.push_back(l);
  ASSERT_EQ(v.size(), 12u);
  EXPECT_EQ(v[0], "resnet18-1\tN=1,K=64,C=3,H=224,W=224,R=7,S=7,stride=2,pad=3");
  EXPECT_EQ(v[4], "resnet18-5\tN=1,K=128,C=64,H=56,W=56,R=1,S=1,stride=2,pad=0");
  EXPECT_EQ(v[11], "resnet18-12\tN=1,K=512,C=512,H=7,W=7,R=3,S=3,stride=1,pad=1");
  EXPECT_EQ(run_cli("layers --layer yolo9000-12 --list").out,
            "yolo9000-12\tN=1,K=512,C=256,H=34,W=34,R=3,S=3,stride=1,pad=1\n");
  EXPECT_EQ(run_cli("layers" + kTiny + " --list").out, kTinyId + "\tN=1,K=16,C=8,H=8,W=8,R=3,S=3,stride=1,pad=1\n");
  r = run_cli("layers --list");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "convtune: error: give exactly one of --layer NAME, --network NAME, --shape \"K=..,C=..,H=..,R=..\" or --onnx MODEL\n");
  // Without --list: the table, of the selection or of the whole zoo.
  r = run_cli("layers --network resnet18");
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 13);
  EXPECT_EQ(r.out.rfind("layer ", 0), 0u);
  const std::string zoo = run_cli("layers").out;
  EXPECT_EQ(std::count(zoo.begin(), zoo.end(), '\n'), 1 + 11 + 12);
}

TEST(ClusterCli, JobIndexOutOfRangeNamesTheCount) {
  auto r = run_cli("tune --network resnet18 --job-index 12" + kTune);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --job-index 12 is out of range: this selection has 12 jobs (0 to 11, as "
                   "'convtune layers ... --list' prints them)\n");
  r = run_cli("tune --layer resnet18-5 --job-index 1" + kTune);
  EXPECT_EQ(r.err, "convtune: error: --job-index 1 is out of range: this selection has 1 job (0 to 0, as "
                   "'convtune layers ... --list' prints them)\n");
  r = run_cli("tune --network resnet18 --job-index -1" + kTune);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("convtune: error: --job-index: -1 is out of range", 0), 0u) << r.err;
}

// One job of a network tuned into its directory, merged into a store from
// which tune --resume and bench read; the same records as another machine's
// are refused by name.
TEST(ClusterCli, AJobsLogMergedIntoAStoreFeedsResumeAndBench) {
  if (!cpu_supports(load_isa("avx2"))) GTEST_SKIP() << "this CPU has no AVX2";
  test::TempDir td;
  auto r = run_cli("tune --network resnet18 --job-index 4 --trials 1 --json --out " + td.file("run") + kTune);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["layer"], "resnet18-5");
  std::vector<Record> recs = read_records(td.file("run/resnet18-5/log.jsonl"));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].layer, "resnet18-5");
  const MachineId here = machine_id(detect_machine());
  EXPECT_EQ(recs[0].machine.to_json(), here.to_json());

  r = run_cli("merge " + td.file("run") + " --out " + td.file("store"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dir = td.file("store") + "/" + here.key + "/avx2-t1/resnet18-5", log = dir + "/log.jsonl";
  EXPECT_EQ(r.out.rfind("merged 1 log (1 record, 0 duplicates dropped) into '" + td.file("store") +
                            "': 1 record in 1 log\nmachine " + here.describe() + ", this machine:\n",
                        0),
            0u)
      << r.out;
  const std::string layer = " --layer resnet18-5";
  r = run_cli("tune" + layer + " --trials 2 --resume --out " + dir + kTune);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_records(log).size(), 2u);
  r = run_cli("bench" + layer + " --arch avx2 --out " + dir + kTiming);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // The same log as another machine's.
  const std::string other = R"({"key":"0123456789ab","cpu_model":"Other CPU","isa_flags":["avx2"],"cores":64})";
  std::string text;
  for (const Record& rec : read_records(log)) {
    nlohmann::json j = rec.to_json();
    j["machine"] = nlohmann::json::parse(other);
    text += j.dump() + "\n";
  }
  test::write_file(log, text);
  const std::string refusal = "convtune: error: log '" + log +
                              "' holds records of machine 0123456789ab (Other CPU; avx2; 64 CPUs), not of this "
                              "machine " + here.describe() + "; use this machine's directory of a merged store "
                              "(<store>/" + here.key + "/...), or pass --any-machine to use them anyway\n";
  r = run_cli("tune" + layer + " --trials 2 --resume --out " + dir + kTune);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, refusal);
  r = run_cli("bench" + layer + " --arch avx2 --out " + dir + kTiming);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, refusal);
  r = run_cli("tune" + layer + " --trials 2 --resume --any-machine --out " + dir + kTune);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace convtune::cluster_cli_test
