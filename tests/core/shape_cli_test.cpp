// Bad shapes through the built binary: one "convtune: error:" line naming the
// field and the limit, a non-zero exit, and no crash or hang (no abort with
// std::bad_alloc, no hang in build_space).
#include <algorithm>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "convtune/core/isa.h"
#include "test_util.h"

namespace convtune::shape_cli_test {
namespace {

using test::run_cli;

// The one error line of stderr ("" if there is not exactly one).
std::string error_line(const std::string& err) {
  std::string found;
  size_t start = 0;
  int count = 0;
  while (start < err.size()) {
    size_t end = err.find('\n', start);
    std::string line = err.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.rfind("convtune: error: ", 0) == 0) {
      found = line;
      ++count;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return count == 1 ? found : "";
}

TEST(ShapeCli, OversizedAndUnsupportedShapesGiveOneLine) {
  test::TempDir td;
  const struct {
    const char* shape;
    const char* error;
  } cases[] = {
      {"K=64,C=64,H=20000,R=3",
       "convtune: error: shape: the input (N=1 x (H+pad_t+pad_b)=20002 x (W+pad_l+pad_r)=20002 x C=64) holds 25605120256 "
       "floats, more than the limit of 268435456 (1 GiB); use a smaller N, H, W, C or pad"},
      {"K=64,C=64,H=14,R=3,pad=1000000", "convtune: error: shape: pad=1000000 is too large; pad is at most 1024"},
      {"K=64,C=64,H=14,R=3,groups=3",
       "convtune: error: shape: groups=3 does not divide C=64; groups must divide both C and K"},
      {"K=64,C=64,H=14,R=3,dilation=0", "convtune: error: shape: 'dilation=0' is not a positive integer"},
  };
  for (const auto& c : cases) {
    auto r = run_cli("tune --shape '" + std::string(c.shape) + "' --trials 1 --out " + td.path());
    EXPECT_EQ(r.exit_code, 1) << c.shape << "\n" << r.err;
    EXPECT_EQ(r.err, std::string(c.error) + "\n") << c.shape;
  }
}

TEST(ShapeCli, APrimeOutputTunesWithAnUnprofiledMicrokernel) {
  // 17x17 output, one vector of K on AVX-512: no microkernel the latency
  // rule admits tiles it (w=h=1 would need h >= 14, and no pair of such h
  // sums to 17; on AVX2, with 7 accumulators enough, 8 + 9 rows tile it). A
  // 3x3 tap with pad 1: an unpadded 1x1 layer takes Flat(hw) (289 pixels as
  // one column). The space falls back to an unprofiled pair of 8 and 9 rows,
  // says so, and the candidate verifies against the reference.
  if (!cpu_supports(load_isa("avx512"))) GTEST_SKIP() << "this CPU has no AVX-512";
  test::TempDir td;
  auto r = run_cli("tune --arch avx512 --shape K=8,C=8,H=17,R=3,pad=1 --trials 1 --top 0 --no-onednn --min-repeat-ms 1 "
                   "--repeat 1 -q --json --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["failed"], 0) << j;
  ASSERT_TRUE(j["best"].is_object()) << j;
  EXPECT_NE(j["best"]["config"].get<std::string>().find("Lseq(h,[(1,8),(1,9)])"), std::string::npos) << j;
  EXPECT_NE(j.value("notes", "").find("so it uses k1c1w1h{1x8+1x9}r1s1, unprofiled, with 8 accumulators"),
            std::string::npos)
      << j;
  // 3x3 over a 1x1 input (a detection head): one accumulator, and it tunes.
  r = run_cli("tune --arch avx512 --shape K=16,C=8,H=1,R=3,pad=1 --trials 1 --top 0 --no-onednn --min-repeat-ms 1 "
              "--repeat 1 -q --json --out " + td.file("head"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["failed"], 0) << r.out;
}

}  // namespace
}  // namespace convtune::shape_cli_test
