// run_tune's stages alone (tune_stages.h): the setup checks a log and builds
// the space without measuring, a candidate's compile and run results become
// its record, the deliver stage writes the best kernel's files. Nothing here
// compiles or runs a kernel.
#include <gtest/gtest.h>

#include <filesystem>

#include "convtune/core/isa.h"
#include "convtune/core/shape.h"
#include "convtune/tune/tune_stages.h"
#include "test_util.h"

namespace convtune::tune_stages_test {
namespace {

using test::error_of;

const Shape kShape = parse_shape("K=32,C=16,H=8,R=3");

TuneOptions options(const std::string& out_dir, const Shape& shape = kShape) {
  TuneOptions o;
  o.shape = shape;
  o.isa = best_isa();
  o.table = test::host_table();
  o.out_dir = out_dir;
  o.quiet = true;
  return o;
}

// A log of n candidates of opt's tune, each recorded as a compile error by
// the search's own stage; returns their configurations.
std::vector<Config> write_log(const TuneOptions& opt, size_t n) {
  TuneSession s(opt);
  tune_setup(s);
  const std::vector<Config> cs = s.strategy->propose(n);
  CompileResult failed;
  failed.log = "no compiler here";
  for (const Config& c : cs) tune_take_record(s, c, tune_record_of(s, c, failed, RunResult{}), "", {});
  return cs;
}

TEST(TuneStages, SetupRefusesALogOfAnotherShape) {
  test::TempDir td;
  const Shape other = parse_shape("K=16,C=8,H=8,R=3");
  write_log(options(td.file("other"), other), 1);
  TuneOptions opt = options(td.file("out"));
  opt.log = td.file("other/log.jsonl");
  opt.resume = true;
  TuneSession s(opt);
  EXPECT_EQ(error_of([&] { tune_setup(s); }), "log '" + opt.log + "' is for shape " + other.to_string() + ", not " +
                                                  kShape.to_string() + "; use another --log");
}

TEST(TuneStages, SetupOfAResumedLogCountsItsRecords) {
  test::TempDir td;
  const std::vector<Config> written = write_log(options(td.file("out")), 3);
  ASSERT_EQ(written.size(), 3u);
  {
    TuneSession s(options(td.file("out")));  // without --resume
    EXPECT_EQ(error_of([&] { tune_setup(s); }),
              "log '" + td.file("out/log.jsonl") +
                  "' already holds 3 candidates; pass --resume to continue it or --log to start another");
  }
  TuneOptions opt = options(td.file("out"));
  opt.resume = true;
  TuneSession s(opt);
  tune_setup(s);
  EXPECT_EQ(s.res.log_path, td.file("out/log.jsonl"));
  ASSERT_EQ(s.log.records.size(), 3u);
  EXPECT_EQ(s.log.lines, (std::vector<size_t>{1, 2, 3}));
  ASSERT_EQ(s.previous_configs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(to_string(s.previous_configs[i]), to_string(written[i]));
  EXPECT_GT(s.res.space_size, 0);
  EXPECT_EQ(s.res.trials, 0);  // counted once the runner's peak is known (tune_start_runner)
  EXPECT_FALSE(s.runner.has_value());
}

TEST(TuneStages, RecordOfACandidate) {
  test::TempDir td;
  TuneSession s(options(td.file("out")));
  tune_setup(s);
  s.res.peak_gflops = 100;
  s.res.trials = 7;
  const Config c = s.strategy->propose(1).at(0);

  CompileResult failed;
  failed.seconds = 0.5;
  failed.log = std::string(1000, 'e');
  const Record bad = tune_record_of(s, c, failed, RunResult{});
  EXPECT_EQ(bad.status, Status::compile_error);
  EXPECT_EQ(bad.detail, std::string(600, 'e'));
  EXPECT_EQ(bad.config, to_string(c));
  EXPECT_EQ(bad.shape, kShape.to_string());
  EXPECT_EQ(bad.trial, 7);
  EXPECT_EQ(bad.compile_seconds, 0.5);
  EXPECT_EQ(bad.isa, s.isa.name);
  EXPECT_EQ(bad.table, s.table.origin);
  EXPECT_EQ(bad.machine.key, s.here.key);
  EXPECT_FALSE(bad.microkernels.empty());

  CompileResult built;
  built.ok = true;
  RunResult rr;
  rr.status = Status::ok;
  rr.seconds = rr.wall_seconds = 1e-3;
  rr.samples = {1e-3, 1.1e-3};
  const Record good = tune_record_of(s, c, built, rr);
  EXPECT_EQ(good.status, Status::ok);
  EXPECT_EQ(good.seconds, 1e-3);
  EXPECT_DOUBLE_EQ(good.gflops, kShape.flops() / 1e-3 * 1e-9);
  EXPECT_DOUBLE_EQ(good.percent_peak, good.gflops);  // of a 100 GFLOP/s peak
  EXPECT_EQ(good.samples, rr.samples);

  // A clock probe slowed beside the run scales its time below what any
  // kernel can do: the wall-clock time stands, and the record says so.
  rr.seconds = 1e-9;
  const Record slowed = tune_record_of(s, c, built, rr);
  EXPECT_EQ(slowed.seconds, 1e-3);
  EXPECT_NE(slowed.detail.find("trusted_seconds"), std::string::npos);
}

TEST(TuneStages, DeliverRegeneratesAResumedBest) {
  test::TempDir td;
  TuneSession s(options(td.file("out")));
  tune_setup(s);
  const Config c = s.strategy->propose(1).at(0);
  s.res.has_best = true;
  s.res.best.config = to_string(c);
  s.notes = {"one", "two"};
  tune_deliver(s);
  EXPECT_EQ(s.res.notes, "one; two");
  const std::string layer = layer_id(kShape);
  EXPECT_EQ(s.res.kernel_c, td.file("out/" + layer + ".c"));
  EXPECT_EQ(s.res.kernel_h, td.file("out/" + layer + ".h"));
  const GeneratedKernel k = generate_conv(
      s.isa, {kShape, c, "ct_conv_" + layer, s.table.origin + " (" + s.table.created + ")", Epilogue::none});
  EXPECT_EQ(test::read_file(s.res.kernel_c), k.c_source);
  EXPECT_EQ(test::read_file(s.res.kernel_h), k.header);
}

TEST(TuneStages, DeliverWritesTheSearchsKernelAsGenerated) {
  test::TempDir td;
  TuneSession s(options(td.file("out")));
  tune_setup(s);
  s.res.has_best = true;
  s.res.best.config = to_string(s.strategy->propose(1).at(0));
  GeneratedKernel k;
  k.c_source = "/* the search's */\n";
  k.header = "/* its header */\n";
  s.kernels[s.res.best.config] = k;
  tune_deliver(s);
  EXPECT_EQ(test::read_file(s.res.kernel_c), k.c_source);
  EXPECT_EQ(test::read_file(s.res.kernel_h), k.header);
}

TEST(TuneStages, NoBestNoFiles) {
  test::TempDir td;
  TuneSession s(options(td.file("out")));
  tune_setup(s);
  tune_deliver(s);
  EXPECT_TRUE(s.res.kernel_c.empty());
  EXPECT_FALSE(std::filesystem::exists(td.file("out/" + layer_id(kShape) + ".c")));
}

}  // namespace
}  // namespace convtune::tune_stages_test
