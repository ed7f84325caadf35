// `tune --network`: one run over many layers says run-wide things once.
#include <chrono>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "convtune/core/isa.h"
#include "convtune/core/shape.h"
#include "background.h"
#include "test_util.h"

namespace convtune::tune_network_test {
namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; pos += what.size()) ++n;
  return n;
}

// The same table serves every layer: its "profiled on another CPU" warning
// comes once, not once per layer. Interrupted at the third layer to keep the
// test short.
TEST(CliTuneNetwork, TheTableWarningComesOncePerRun) {
  if (!cpu_supports(load_isa("avx2"))) GTEST_SKIP() << "this CPU has no AVX2";
  test::TempDir td;
  auto table = nlohmann::json::parse(test::read_file(std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx2.json"));
  table["machine"]["cpu_model"] = "Some Other CPU";
  table["machine"]["fingerprint"] = "Some Other CPU | avx,avx2,fma";
  test::write_file(td.file("other.json"), table.dump());
  test::Background run({"tune", "--network", "resnet18", "--trials", "1", "--arch", "avx2", "--table",
                        td.file("other.json"), "--out", td.file("o"), "--min-repeat-ms", "1", "--repeat", "1",
                        "--no-onednn"},
                       td.path());
  auto until = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (run.running() && run.err().find("convtune: tuning resnet18-3 ") == std::string::npos &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  run.signal(SIGINT);
  EXPECT_EQ(run.wait(), 130) << run.err();
  const std::string err = run.err();
  ASSERT_NE(err.find("convtune: tuning resnet18-3 "), std::string::npos) << err;
  EXPECT_EQ(count_of(err, "was profiled on 'Some Other CPU'"), 1u) << err;
}

// Two layers that differ only in H and W: the second starts from the first's
// winner lifted to its extents (the same microkernels), and its record
// names where it came from; or, when the winner cannot be lifted, its notes
// say why it was skipped.
TEST(CliTuneNetwork, ALayerStartsFromItsTunedNeighbour) {
  if (!cpu_supports(load_isa("avx2"))) GTEST_SKIP() << "this CPU has no AVX2";
  test::TempDir td;
  const std::string a = "K=16,C=8,H=8,R=1", b = "K=16,C=8,H=16,R=1";
  auto r = test::run_cli("tune --shape " + a + " --shape " + b + " --arch avx2 --trials 2 --top 0 --threads 1 "
                         "--min-repeat-ms 1 --repeat 1 --no-onednn -q --out " + td.file("store"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string la = layer_id(parse_shape(a)), lb = layer_id(parse_shape(b));
  const auto first = [&](const std::string& layer) {
    const std::string text = test::read_file(td.file("store/" + layer + "/log.jsonl"));
    return nlohmann::json::parse(text.substr(0, text.find('\n')));
  };
  const nlohmann::json ra = first(la), rb = first(lb);
  EXPECT_FALSE(ra.contains("seed_from"));  // no neighbour was tuned before it
  if (rb.contains("seed_from")) {
    EXPECT_EQ(rb["seed_from"]["by"], "transfer");
    EXPECT_EQ(rb["seed_from"]["layer"], la);
    EXPECT_EQ(rb["seed_from"]["log"], td.file("store/" + la + "/log.jsonl"));
    nlohmann::json microkernels;  // the winner's in a's log (a pair's repeats may change, not its microkernels)
    std::istringstream in(test::read_file(td.file("store/" + la + "/log.jsonl")));
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (j["config"] == rb["seed_from"]["config"]) microkernels = j["microkernels"];
    }
    EXPECT_EQ(rb["microkernels"], microkernels);
    EXPECT_NE(rb["note"].get<std::string>().find("transfer: " + la + "'s winner "), std::string::npos) << rb;
  } else {
    EXPECT_NE(rb["note"].get<std::string>().find("transfer: " + la + "'s winner "), std::string::npos) << rb;
    EXPECT_NE(rb["note"].get<std::string>().find(" skipped: "), std::string::npos) << rb;
  }
}

}  // namespace
}  // namespace convtune::tune_network_test
