// `tune --network`: one run over many layers says run-wide things once.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "convtune/core/isa.h"
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

}  // namespace
}  // namespace convtune::tune_network_test
