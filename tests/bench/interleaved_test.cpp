// bench's timing loop (interleaved.h): samples scaled by the clock probe,
// except one whose scaled time would put the real work above the peak loop,
// which keeps its wall-clock time (measure.h trusted_seconds), as tune does.
#include "convtune/bench/interleaved.h"

#include <gtest/gtest.h>

#include "convtune/core/isa.h"
#include "convtune/core/machine.h"

namespace convtune::interleaved_test {
namespace {

void busy() {
  volatile double x = 0;
  for (int i = 0; i < 20000; ++i) x = x + 1.0;
}

TEST(Interleaved, ASampleAboveThePeakKeepsItsWallClockTime) {
  const Isa isa = load_isa(best_isa());
  ClockProbe probe(isa, 100.0);  // a reference of 100 GFLOP/s: only the ratio to the probe matters here
  // No bound (0 FLOP): the sample is the wall-clock time at the reference speed.
  BenchEntry scaled("scaled");
  time_interleaved({{&scaled, busy}}, 1.0, 1, probe, 0, 1);
  ASSERT_EQ(scaled.samples.size(), 1u);
  ASSERT_EQ(scaled.probe_gflops.size(), 1u);
  EXPECT_DOUBLE_EQ(scaled.samples[0], scaled.wall_seconds * scaled.probe_gflops[0] / 100.0);
  EXPECT_DOUBLE_EQ(scaled.seconds, scaled.samples[0]);
  // A call claimed to do 10^18 real FLOP would run far above any peak at that
  // time: the probe must have been disturbed, and the wall-clock time stands.
  BenchEntry bounded("bounded");
  time_interleaved({{&bounded, busy}}, 1.0, 3, probe, 1e18, 2);
  ASSERT_EQ(bounded.samples.size(), 3u);
  EXPECT_DOUBLE_EQ(bounded.seconds, bounded.wall_seconds);
}

TEST(Interleaved, OddRoundsRunTheImplementationsInReverse) {
  const Isa isa = load_isa(best_isa());
  ClockProbe probe(isa, 100.0);
  std::vector<int> ran;  // which implementation each call was, consecutive repeats merged
  auto call = [&](int id) {
    return [&ran, id] {
      busy();
      if (ran.empty() || ran.back() != id) ran.push_back(id);
    };
  };
  BenchEntry a("a"), b("b"), c("c");
  time_interleaved({{&a, call(0)}, {&b, call(1)}, {&c, call(2)}}, 1.0, 2, probe, 0, 1);
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 1, 0}));
  EXPECT_EQ(a.samples.size(), 2u);
}

}  // namespace
}  // namespace convtune::interleaved_test
