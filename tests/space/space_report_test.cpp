// `convtune space`'s text (issue 12's splits on paper): work per thread of the
// busiest thread, and a note when the cores exceed the work.
#include "convtune/space/space_report.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace convtune::space_report_test {
namespace {

using test::uk;
using test::uk_record;

ClassTable one_microkernel_table() { return test::table_of({uk_record(uk(1, 1, 1, 1), 90)}); }

// 3 k vectors x 3 rows x 3 columns on 2 threads: only uneven splits, P(3,d,2).
// The first thread runs 2 of the 3 iterations: 2 x 9 = 18 tiles, not 27/2.
// (Padded, so no Flat(hw) view joins the space: config.h flat_eligible.)
TEST(SpaceReport, UnevenSplitCountsTheBusiestThread) {
  const Space sp = build_space(parse_shape("K=48,C=2,H=1,R=1,pad=1"), one_microkernel_table(), 16, 2);
  const std::string out = space_report(sp, "small", "avx512");
  EXPECT_NE(out.find("\n        2        3        1          0.00           18  P(3,k,2) with k1c1w1h1r1s1\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("note:"), std::string::npos) << out;
}

// 4 k vectors x 2 x 2 on 16 threads: two nested P loops reach 8; the note says
// 8 stay idle, and the 8-thread group has 16 / 8 = 2 tiles per thread. (A 3x3
// filter: a 1x1 one would add the Flat(hw) view, 4 k x 4 pixels for 16 threads.)
TEST(SpaceReport, MoreThreadsThanWorkIsNoted) {
  const Space sp = build_space(parse_shape("K=64,C=2,H=2,W=2,R=3,pad=1"), one_microkernel_table(), 16, 16);
  const std::string out = space_report(sp, "small", "avx512");
  EXPECT_NE(out.find("  note: no split uses all 16 threads: candidates run at most 8 and leave 8 idle"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\n        8 "), std::string::npos) << out;
  EXPECT_NE(out.find("            2  P(4,k), P(2,h) with k1c1w1h1r1s1\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("\n       16 "), std::string::npos) << out;
}

}  // namespace
}  // namespace convtune::space_report_test
