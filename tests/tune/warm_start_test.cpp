// tune --start-from (warm_start.h): another tune's best, lifted to this
// space's thread count, and the one-line errors for a wrong log.
#include "convtune/tune/warm_start.h"

#include <gtest/gtest.h>

#include "convtune/core/error.h"
#include "convtune/tune/records.h"
#include "test_util.h"

namespace convtune::warm_start_test {
namespace {

using test::error_of;
using test::uk;
using test::uk_record;

ClassTable one_microkernel_table() { return test::table_of({uk_record(uk(1, 1, 1, 1), 90)}); }

std::vector<std::string> texts(const std::vector<Config>& cs) {
  std::vector<std::string> v;
  for (const Config& c : cs) v.push_back(to_string(c));
  return v;
}

const Shape kShape = parse_shape("K=64,C=4,H=8,R=1");  // 4 k vectors, 8x8 output
const Config kSerial = parse_config("[T(8,h), T(4,k), T(8,w), T(4,c), V(k)]");

// Each 2-thread option takes its count out of the outermost loop of its
// dimension; every lifted form is a configuration of the 2-thread space.
TEST(WarmStart, OneThreadBestLiftedToEveryTwoThreadSplit) {
  const Space two = build_space(kShape, one_microkernel_table(), 16, 2);
  const std::vector<Config> got = lifted_configs(kSerial, two);
  EXPECT_EQ(texts(got), (std::vector<std::string>{"[P(2,k), T(8,h), T(2,k), T(8,w), T(4,c), V(k)]",
                                                  "[P(2,h), T(4,h), T(4,k), T(8,w), T(4,c), V(k)]",
                                                  "[P(2,w), T(8,h), T(4,k), T(4,w), T(4,c), V(k)]"}));
  for (const Config& c : got) {
    EXPECT_NO_THROW(validate_config(c, kShape, 16)) << to_string(c);
    EXPECT_EQ(config_threads(c), 2);
  }
  EXPECT_EQ(lifted_configs(kSerial, two, 1).size(), 1u);  // at most `most` forms
}

// On a grouped shape the group loops are rewritten with the P (space.h
// outer_specs): a 1-thread [R(g), ...] lifts to P over g and to R(g) above a P
// within the group, every form in the 2-thread space.
TEST(WarmStart, GroupedBestLiftedWithItsGroupLoops) {
  const Shape grouped = parse_shape("K=64,C=16,H=8,R=1,groups=4");  // 16 outputs, 4 inputs per group
  const Config serial = parse_config("[R(g), T(8,h), T(8,w), T(4,c), V(k)]");
  ASSERT_NO_THROW(validate_config(serial, grouped, 16));
  const Space two = build_space(grouped, one_microkernel_table(), 16, 2);
  const std::vector<Config> got = lifted_configs(serial, two);
  ASSERT_FALSE(got.empty());
  bool over_g = false;
  for (const Config& c : got) {
    EXPECT_NO_THROW(validate_config(c, grouped, 16)) << to_string(c);
    EXPECT_EQ(config_threads(c), 2) << to_string(c);
    EXPECT_EQ(c.specs[0].dim == Dim::g || c.specs[0].kind == SpecKind::R, true) << to_string(c);
    over_g = over_g || to_string(c).rfind("[P(2,g), R(g), T(8,h)", 0) == 0;
  }
  EXPECT_TRUE(over_g) << texts(got).front();
}

// A loop left at 1 goes; a P of the source goes back to its sequential loop;
// a thread count only two nested loops reach takes a count from each.
TEST(WarmStart, LoopsAtOneGoAndParallelSourcesAreSerialised) {
  const Config fine = parse_config("[T(2,k), T(8,h), T(2,k), T(8,w), T(4,c), V(k)]");
  const Space two = build_space(kShape, one_microkernel_table(), 16, 2);
  EXPECT_EQ(to_string(lifted_configs(fine, two)[0]), "[P(2,k), T(8,h), T(2,k), T(8,w), T(4,c), V(k)]");
  const Space one = build_space(kShape, one_microkernel_table(), 16, 1);
  EXPECT_EQ(texts(lifted_configs(parse_config("[P(2,h), T(4,h), T(4,k), T(8,w), T(4,c), V(k)]"), one)),
            (std::vector<std::string>{"[T(2,h), T(4,h), T(4,k), T(8,w), T(4,c), V(k)]"}));
  const Space many = build_space(kShape, one_microkernel_table(), 16, 32);  // 4 x 8 = 32 only nested
  for (const Config& c : lifted_configs(kSerial, many)) {
    EXPECT_EQ(config_threads(c), 32) << to_string(c);
    EXPECT_NO_THROW(validate_config(c, kShape, 16)) << to_string(c);
  }
  EXPECT_FALSE(lifted_configs(kSerial, many).empty());
}

// Wino(2,b) lifts to Wino(2,b,t): the threads share its blocks, its loops
// stay; the 2-thread Wino(2,b,2) goes back to Wino(2,b) on one thread.
// resnet18-2: 784 tiles, blocks of 56 both ways (space_test.cpp).
TEST(WarmStart, WinoBlocksGoToTheThreads) {
  const ClassTable t = test::table_of({uk_record(uk(4, 1, 1, 7), 95)});
  const Shape sh = zoo_layer("resnet18-2");
  const Config one = parse_config("[Wino(2,56), T(2,k), T(8,h), T(64,c), U(7,h), U(4,k), V(k)]");
  EXPECT_EQ(texts(lifted_configs(one, build_space(sh, t, 8, 2))),
            (std::vector<std::string>{"[Wino(2,56,2), T(2,k), T(8,h), T(64,c), U(7,h), U(4,k), V(k)]"}));
  EXPECT_EQ(texts(lifted_configs(parse_config("[Wino(2,56,2), T(2,k), T(8,h), T(64,c), U(7,h), U(4,k), V(k)]"),
                                 build_space(sh, t, 8, 1))),
            (std::vector<std::string>{"[Wino(2,56), T(2,k), T(8,h), T(64,c), U(7,h), U(4,k), V(k)]"}));
  // Wino(2), all tiles one block, has no blocks to share.
  EXPECT_TRUE(lifted_configs(parse_config("[Wino(2), T(2,k), T(112,h), T(64,c), U(7,h), U(4,k), V(k)]"),
                             build_space(sh, t, 8, 2))
                  .empty());
}

// A source whose microkernel this space does not have lifts to nothing.
TEST(WarmStart, AnotherMicrokernelLiftsToNothing) {
  const Space two = build_space(kShape, one_microkernel_table(), 16, 2);
  EXPECT_TRUE(lifted_configs(parse_config("[T(8,h), T(2,k), T(8,w), T(4,c), U(2,k), V(k)]"), two).empty());
}

TEST(WarmStart, WrongLogsAreOneLineErrors) {
  test::TempDir td;
  EXPECT_EQ(error_of([&] { start_log_path(td.file("none"), "resnet18-2"); }),
            "--start-from: no file or directory '" + td.file("none") +
                "'; give the log, or the --out directory, of an earlier tune of resnet18-2");
  EXPECT_EQ(error_of([&] { start_log_path(td.path(), "resnet18-2"); }),
            "--start-from: neither '" + td.path() + "/resnet18-2/log.jsonl' nor '" + td.path() +
                "/log.jsonl' exists; give the log, or the --out directory, of an earlier tune of resnet18-2");
  test::write_file(td.file("log.jsonl"), "");
  EXPECT_EQ(start_log_path(td.path(), "resnet18-2"), td.file("log.jsonl"));
  EXPECT_EQ(error_of([&] { best_config_of_log(td.file("log.jsonl"), kShape); }),
            "--start-from: log '" + td.file("log.jsonl") +
                "' holds no successful candidate; give a log with at least one");
}

// The delivered kernel is the start: finalists.json's winner, though the log
// measured another faster; without it, the fastest record.
TEST(WarmStart, StartsFromTheFinalistsWinner) {
  test::TempDir td;
  const std::string log = td.file("log.jsonl");
  const char* slow = "[T(8,h), T(4,k), T(8,w), T(4,c), V(k)]";
  const char* fast = "[T(4,k), T(8,h), T(8,w), T(4,c), V(k)]";
  for (auto [config, gflops] : {std::pair<const char*, double>{slow, 90}, {fast, 100}}) {
    Record r;
    r.shape = kShape.to_string();
    r.config = config;
    r.status = Status::ok;
    r.gflops = r.real_gflops = gflops;
    r.percent_peak = gflops / 2;
    r.peak_gflops = 200;
    r.seconds = 1 / gflops;
    r.samples = {r.seconds};
    append_record(log, r);
  }
  EXPECT_EQ(to_string(best_config_of_log(log, kShape)), fast);
  test::write_file(td.file("finalists.json"), std::string("{\"winner\": \"") + slow + "\"}");
  EXPECT_EQ(to_string(best_config_of_log(log, kShape)), slow);
}

}  // namespace
}  // namespace convtune::warm_start_test
