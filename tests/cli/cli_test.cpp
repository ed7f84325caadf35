// The command line as a user meets it: help, versions, and one clear error
// line with a non-zero exit for bad input.
#include <regex>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "convtune/core/isa.h"
#include "convtune/core/shape.h"
#include "convtune/offline/class_table.h"
#include "convtune/space/space.h"
#include "test_util.h"

namespace convtune::cli_test {
namespace {

using test::run_cli;

TEST(Cli, HelpListsEverySubcommand) {
  auto r = run_cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* sub : {"profile", "tune", "bench", "export", "table", "space", "layers"})
    EXPECT_NE(r.out.find(sub), std::string::npos) << sub;
}

TEST(Cli, Version) {
  auto r = run_cli("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "convtune " CONVTUNE_VERSION "\n");
}

TEST(Cli, UnknownArch) {
  auto r = run_cli("profile --arch avx1024 --quick --out /dev/null/x.json");
  EXPECT_NE(r.exit_code, 0);
  // The ISA is checked first, before the output path.
  EXPECT_EQ(r.err, "convtune: error: unknown --arch 'avx1024'; choose one of: avx512, avx2, neon\n");
}

TEST(Cli, UnwritableOutFailsBeforeProfiling) {
  test::TempDir td;
  test::write_file(td.file("file"), "x");
  auto r = run_cli("profile --quick --out " + td.file("file") + "/table.json");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "convtune: error: cannot write --out '" + td.file("file") +
                       "/table.json': cannot create its directory (Not a directory); choose another --out\n");
}

TEST(Cli, CorruptAndTruncatedTables) {
  test::TempDir td;
  test::write_file(td.file("bad.json"), "{\"format_version\": 1, \"isa\": \"avx512\", \"microk");
  auto r = run_cli("table --table " + td.file("bad.json"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("convtune: error: class table '" + td.file("bad.json") + "' is corrupt or truncated", 0), 0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  r = run_cli("table --table " + td.file("missing.json"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("convtune: error: class table '" + td.file("missing.json") + "' does not exist", 0), 0u)
      << r.err;
}

TEST(Cli, UnknownOptionAndSubcommand) {
  auto r = run_cli("profile --bogus");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("convtune: error: ", 0), 0u);
  r = run_cli("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(Cli, LayersListsTheZoo) {
  auto r = run_cli("layers");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("yolo9000-23"), std::string::npos);
  EXPECT_NE(r.out.find("resnet18-12"), std::string::npos);
  r = run_cli("layers --network vgg");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.rfind("convtune: error: ", 0), 0u);
}

// Issue 12's question on paper: the splits the space offers for a thread
// count this host does not have, and what happens when cores exceed the work.
TEST(Cli, SpaceShowsParallelSplits) {
  auto r = run_cli("space --layer resnet18-12 --arch avx512 --threads 16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("resnet18-12: N=1,K=512,C=512,H=7,W=7,R=3,S=3,stride=1,pad=1\n  avx512: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(" microkernel choices, 16 threads\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n       16  "), std::string::npos) << r.out;  // some split uses all 16
  r = run_cli("space --shape K=48,C=4,H=5,W=7,R=1 --arch avx512 --threads 2");  // 3 k vectors, 5x7: all odd
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n        2  "), std::string::npos) << r.out;  // uneven splits, e.g. P(5,h,2)
  EXPECT_NE(r.out.find(",2) with "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("no split uses all"), std::string::npos) << r.out;
  r = run_cli("space --shape K=48,C=4,H=5,W=7,R=1 --arch avx512 --threads 8");  // no count reaches 8
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  note: no loop of n, k, h or w has a count divisible by a divisor of --threads 8 or above "
                       "it for any microkernel choice; candidates run on one thread\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("no split uses all"), std::string::npos) << r.out;
  // 32 k vectors and a 7x7 output: 64 cores exceed the work; the space says so,
  // with the widest split the table's microkernels allow (32 with k1, 16 with k2),
  // and lists that split.
  r = run_cli("space --layer resnet18-12 --arch avx512 --threads 64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch most;
  ASSERT_TRUE(std::regex_search(r.out, most,
                                std::regex("  note: no split uses all 64 threads: candidates run at most (16|32) and "
                                           "leave (16|32|48) idle \\(a P count divides --threads and the tiles left "
                                           "along its dimension, or exceeds --threads\\)\n")))
      << r.out;
  EXPECT_EQ(std::stoi(most[1]) + std::stoi(most[2]), 64) << most[0];
  EXPECT_NE(r.out.find("\n       " + most[1].str() + "  "), std::string::npos) << r.out;
  r = run_cli("space --layer resnet18-12 --threads 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("convtune: error: --threads: 0 is out of range", 0), 0u) << r.err;
}

// The quick profile writes a table with the keys scripts rely on. One short
// measurement each: the time goes to compiling, the figures are not checked.
TEST(CliProfile, QuickProfileWritesTheTable) {
  test::TempDir td;
  auto r = run_cli("profile --quick -q --repeat 1 --min-repeat-ms 1 --out " + td.file("t.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = nlohmann::json::parse(test::read_file(td.file("t.json")));
  for (const char* key : {"format_version", "isa", "machine", "compiler", "created", "peak_gflops", "peak", "threshold",
                          "microkernels", "classes"})
    EXPECT_TRUE(t.contains(key)) << key;
  EXPECT_EQ(t["isa"], best_isa());  // no --arch: the best this host runs
  EXPECT_TRUE(t["quick"].get<bool>());
  EXPECT_GT(t["peak_gflops"].get<double>(), 0);
  ASSERT_GE(t["microkernels"].size(), 40u);
  size_t selected = 0;
  for (const auto& m : t["microkernels"]) {
    EXPECT_EQ(m["status"], "ok") << m["name"];
    selected += m["selected"].get<bool>();
  }
  EXPECT_GT(selected, 0u);
  // AVX-512 admits BLIS's 12x32 kernel; AVX2's 16 registers do not (24 accumulators).
  EXPECT_EQ(r.out.find("BLIS-like (k,c,w,h,r,s)=(2,1,12,1,1,1)") != std::string::npos, t["isa"] == "avx512") << r.out;
  // The depthwise family is measured too: classes of its own, from which the
  // space of a depthwise shape is built (not the family's unmeasured fallback).
  const Isa isa = load_isa(best_isa());
  if (enumerate_ukernels(isa, "depthwise").empty()) return;
  const ClassTable table = read_table(td.file("t.json"));
  EXPECT_EQ(table.families.back(), "depthwise");
  const UkClass* dw = nullptr;
  for (const UkClass& c : table.classes)
    if (c.sizes.dw && (!dw || c.sizes.r > dw->sizes.r)) dw = &c;
  ASSERT_NE(dw, nullptr) << "no depthwise class in the quick table";
  // A shape its first member tiles: k channel vectors, h x w outputs, a padded r x s filter.
  const int64_t ch = dw->sizes.k * isa.lanes;
  const Shape shape = parse_shape(fmt::format("K={0},C={0},groups={0},H={1},W={2},R={3},S={4},pad={5}", ch,
                                              2 * dw->h.front(), 2 * dw->sizes.w, dw->sizes.r, dw->sizes.s,
                                              (dw->sizes.r - 1) / 2));
  ASSERT_TRUE(depthwise_shape(shape));
  const Space sp = build_space(shape, table, isa.lanes);
  ASSERT_FALSE(sp.choices.empty());
  EXPECT_EQ(sp.note, "");
  for (const UkChoice& c : sp.choices) {
    EXPECT_FALSE(c.fallback) << c.text();
    const UkRecord* rec = table.find(c.uk);
    ASSERT_NE(rec, nullptr) << c.text();
    EXPECT_TRUE(rec->selected && rec->family == "depthwise") << c.text();
  }
}

// A grouped shape (config.h g) tunes end to end: every candidate is one
// group's loop nest under R(g), and the winner is verified at every output element.
// 4 channels per group start on Lanes(g) (config.h), 16 on the g loop.
TEST(Cli, GroupedShapeTunesToAVerifiedKernel) {
  if (!cpu_supports(load_isa("avx2"))) GTEST_SKIP() << "this CPU has no AVX2";
  test::TempDir td;
  for (const auto& [groups, first] : {std::pair<const char*, const char*>{"16", "[Lanes(g), "}, {"4", "[R(g), "}}) {
    auto r = run_cli(std::string("tune --arch avx2 --shape K=64,C=64,H=14,R=3,groups=") + groups +
                     " --trials 2 --top 0 --threads 1 --min-repeat-ms 1 --repeat 1 --no-onednn -q --out " +
                     td.file(std::string("out") + groups));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(std::string("\nconfig: ") + first), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nverified: at every output element"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace convtune::cli_test
