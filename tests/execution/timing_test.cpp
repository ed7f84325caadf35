// The one timing protocol (microkernels/timing.c) on a simulated clock: the
// calls and the clock probe each advance it by a known amount.
#include <gtest/gtest.h>

#include <vector>

#include "convtune/execution/measure.h"
#include "timing.h"

namespace convtune::timing_test {
namespace {

struct Sim {
  int64_t now = 0;
  int64_t call_ns = 1000;    // one call
  int64_t first_call_ns = 0;  // the first call's instead, when not 0 (a cold start)
  int64_t probe_ns = 200;    // one probe
  int64_t calls = 0, probes = 0;
  int64_t counted_from = 0;  // calls when the counters started
  std::vector<int64_t> calls_at_probe;
};

int64_t sim_now(void* env) { return static_cast<Sim*>(env)->now; }
void sim_call(void* env) {
  Sim* s = static_cast<Sim*>(env);
  s->now += s->calls == 0 && s->first_call_ns ? s->first_call_ns : s->call_ns;
  ++s->calls;
}
void sim_probe(void* env) {
  Sim* s = static_cast<Sim*>(env);
  s->now += s->probe_ns;
  ++s->probes;
  s->calls_at_probe.push_back(s->calls);
}
void sim_start(void* env) { static_cast<Sim*>(env)->counted_from = static_cast<Sim*>(env)->calls; }
int sim_stop(void* env, long long* v) {
  v[0] = static_cast<Sim*>(env)->calls - static_cast<Sim*>(env)->counted_from;  // calls since the start
  return 1;
}

// Times sim_call under {1 ms, repeat, discard}, with the probe and the
// counters when asked; samples and probes get `repeat` values each.
ct_timing run(Sim& s, int repeat, int discard, bool probe, bool counted, std::vector<double>& samples,
              std::vector<double>& probes) {
  ct_clock clock{sim_now, counted ? sim_start : nullptr, counted ? sim_stop : nullptr, &s};
  ct_protocol p{1.0, repeat, discard, probe ? sim_probe : nullptr, &s};
  samples.assign(size_t(repeat), -1);
  probes.assign(size_t(repeat), -1);
  ct_timing t{};
  t.samples_s = samples.data();
  t.probe_s = probe ? probes.data() : nullptr;
  ct_time_calls(sim_call, &s, &p, &clock, &t);
  return t;
}

TEST(TimingProtocol, ProbeChunksEveryMeasurementAndStaysOutOfTheCallTimes) {
  Sim s;
  std::vector<double> samples, probes;
  const ct_timing t = run(s, 3, 1, true, true, samples, probes);  // 1 ms: 1000 calls of 1 us
  ASSERT_EQ(t.n_samples, 3);
  ASSERT_GE(t.calls_per_sample, CT_PROBE_CHUNKS);
  for (int i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(samples[i], 1e-6) << i;  // the calls' time only
    EXPECT_DOUBLE_EQ(probes[i], 2e-7) << i;   // per probe
  }
  EXPECT_DOUBLE_EQ(t.median_s, 1e-6);
  // Four measurements (one discarded), eleven probes each (before every
  // chunk and after the last), each an untimed and a timed call; none during
  // calibration.
  const int per = 2 * (CT_PROBE_CHUNKS + 1);
  EXPECT_EQ(s.probes, 4 * per);
  // The probes split each measurement's calls into even chunks.
  const int64_t before = s.calls - 4 * t.calls_per_sample;  // warm-up and calibration
  for (int m = 0; m < 4; ++m)
    for (int c = 0; c <= CT_PROBE_CHUNKS; ++c)
      for (int twice = 0; twice < 2; ++twice)
        EXPECT_EQ(s.calls_at_probe[size_t(m * per + 2 * c + twice)],
                  before + m * t.calls_per_sample + t.calls_per_sample * c / CT_PROBE_CHUNKS);
  // The counters covered the kept measurements' calls, not the probes.
  ASSERT_EQ(t.n_counters, 1);
  EXPECT_EQ(t.counters[0], 3 * t.calls_per_sample);
}

TEST(TimingProtocol, WithoutAProbeOneChunk) {
  Sim s;
  std::vector<double> samples, probes;
  const ct_timing t = run(s, 2, 0, false, false, samples, probes);
  EXPECT_EQ(s.probes, 0);
  EXPECT_EQ(probes, (std::vector<double>{-1, -1}));  // untouched
  EXPECT_EQ(t.n_samples, 2);
  EXPECT_DOUBLE_EQ(t.median_s, 1e-6);
}

TEST(TimingProtocol, FewerCallsThanChunksBracketEachCall) {
  Sim s;
  s.call_ns = 5000000;  // 5 ms: one call lasts the 1 ms measurement
  std::vector<double> samples, probes;
  const ct_timing t = run(s, 1, 0, true, false, samples, probes);
  EXPECT_EQ(t.calls_per_sample, 1);
  EXPECT_EQ(s.probes, 4);  // the one call bracketed: two probes of two calls
  EXPECT_EQ(s.calls_at_probe, (std::vector<int64_t>{s.calls - 1, s.calls - 1, s.calls, s.calls}));
  EXPECT_DOUBLE_EQ(samples[0], 5e-3);
  EXPECT_DOUBLE_EQ(probes[0], 2e-7);
}

// A cold first call as long as the measurement (a thread pool starting, page
// faults) does not make every measurement a single call: a warm one calibrates.
TEST(TimingProtocol, AColdFirstCallDoesNotSetTheCount) {
  Sim s;
  s.first_call_ns = 8000000;  // 8 ms, then 1 us calls
  std::vector<double> samples, probes;
  const ct_timing t = run(s, 1, 1, true, false, samples, probes);
  EXPECT_GE(t.calls_per_sample, 1000);  // 1 ms of 1 us calls
  EXPECT_DOUBLE_EQ(t.median_s, 1e-6);
}

// A count from an earlier calibration is used as it is: the warm-up call,
// then the measurements of exactly that many calls, no calibration.
TEST(TimingProtocol, AGivenCallCountSkipsTheCalibration) {
  Sim s;
  ct_clock clock{sim_now, nullptr, nullptr, &s};
  ct_protocol p{1.0, 2, 0, nullptr, nullptr, 7};
  std::vector<double> samples(2, -1);
  ct_timing t{};
  t.samples_s = samples.data();
  ct_time_calls(sim_call, &s, &p, &clock, &t);
  EXPECT_EQ(t.calls_per_sample, 7);
  EXPECT_EQ(s.calls, 1 + 2 * 7);  // a calibration would have run about 1000 calls per measurement
  EXPECT_DOUBLE_EQ(t.median_s, 1e-6);
}

// The duel's interquartile range (tune/finalist_duel.cpp) reads quantiles
// between samples, from any order.
TEST(Quantile, InterpolatesBetweenSortedNeighbours) {
  const std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(quantile(v, 0), 1);
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), median(v));
  EXPECT_DOUBLE_EQ(quantile(v, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(quantile(v, 1), 4);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.75), 7);
}

TEST(RoundOrder, TwoImplementationsRunABBA) {
  EXPECT_EQ(round_order(2, 0), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(round_order(2, 1), (std::vector<size_t>{1, 0}));
  EXPECT_EQ(round_order(2, 2), (std::vector<size_t>{1, 0}));
  EXPECT_EQ(round_order(2, 3), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(round_order(1, 1), (std::vector<size_t>{0}));
  EXPECT_TRUE(round_order(0, 1).empty());
}

TEST(RoundOrder, EachRunsInEveryPositionAndAfterBothNeighbours) {
  for (size_t n = 3; n <= 5; ++n) {
    std::vector<std::vector<int>> position(n, std::vector<int>(n)), after(n, std::vector<int>(n));
    for (size_t round = 0; round < 2 * n; ++round) {
      const std::vector<size_t> o = round_order(n, round);
      ASSERT_EQ(o.size(), n);
      for (size_t p = 0; p < n; ++p) {
        ++position[o[p]][p];
        if (p) ++after[o[p]][o[p - 1]];
      }
    }
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j)
        EXPECT_EQ(position[i][j], 2) << "n=" << n << " implementation " << i << " position " << j;
      EXPECT_EQ(after[i][(i + n - 1) % n], n - 1) << "n=" << n << " implementation " << i;
      EXPECT_EQ(after[i][(i + 1) % n], n - 1) << "n=" << n << " implementation " << i;
    }
  }
}

TEST(TimingProtocol, AtReferenceScalesEachSampleByItsProbe) {
  // The same kernel at two speeds of the VM: one figure at the reference speed.
  EXPECT_EQ(at_reference({2e-3, 4e-3}, {200, 100}, 200), (std::vector<double>{2e-3, 2e-3}));
  EXPECT_EQ(at_reference({2e-3}, {}, 200), (std::vector<double>{2e-3}));  // no probe: unchanged
}

TEST(TimingProtocol, ASpeedAboveThePeakLoopKeepsTheWallClockTime) {
  // A resnet18-5 kernel: 12.85 MFLOP of real multiply-adds, 160 us by the
  // wall clock (78 % of 102.5 GFLOP/s); a probe slowed to 66.9 GFLOP/s
  // scales it to 104 us, 123 GFLOP/s: impossible, wall time kept.
  const double flops = 12.845e6, peak = 102.5, wall = 160e-6;
  const double scaled = at_reference({wall}, {66.9}, peak).at(0);
  EXPECT_GT(flops / scaled * 1e-9, 1.03 * peak);
  EXPECT_DOUBLE_EQ(trusted_seconds(scaled, wall, flops, peak), wall);
  // A clock change the probe undoes, within the peak: the scaled time stands.
  const double slow_clock = at_reference({wall * 1.3}, {peak / 1.3}, peak).at(0);
  EXPECT_DOUBLE_EQ(trusted_seconds(slow_clock, wall * 1.3, flops, peak), slow_clock);
  // Up to 3 % above the peak is noise of a kernel at the peak, not a fault.
  const double at_peak = flops / (1.025 * peak) * 1e-9;
  EXPECT_DOUBLE_EQ(trusted_seconds(at_peak, 2 * at_peak, flops, peak), at_peak);
  EXPECT_DOUBLE_EQ(trusted_seconds(0, 1e-3, flops, peak), 0);  // no time: nothing to judge
}

}  // namespace
}  // namespace convtune::timing_test
