// Cache sizes: CPUID first, then the C library, then the measuring CPU's
// sysfs, and the source is recorded (csa's tiles depend on these numbers).
#include "convtune/core/machine.h"

#include <sched.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "convtune/core/error.h"

namespace convtune::machine_test {
namespace {

TEST(MachineCaches, SourceIsRecordedAndSizesAreConsistent) {
  const MachineInfo m = detect_machine(default_cpu());
  const std::string src = m.cache_source;
  const bool known = src == "cpuid" || src == "sysconf" || src.rfind("sysfs cpu", 0) == 0;
  ASSERT_TRUE(known || src == "unknown") << src;
  if (!known) {
    EXPECT_EQ(m.l1d_bytes, 0);
    EXPECT_EQ(m.l2_bytes, 0);
    EXPECT_EQ(m.l3_bytes, 0);
    GTEST_SKIP() << "this machine reports no cache sizes through CPUID, sysconf or sysfs";
  }
  // Real caches: L1d between 8 KiB and 1 MiB, L2 larger than L1d.
  EXPECT_GE(m.l1d_bytes, 8 << 10);
  EXPECT_LE(m.l1d_bytes, 1 << 20);
  EXPECT_GT(m.l2_bytes, m.l1d_bytes);
  EXPECT_GE(m.l3_bytes, 0);
}

#if defined(__x86_64__) && defined(_SC_LEVEL1_DCACHE_SIZE)
TEST(MachineCaches, CpuidAgreesWithTheCLibraryOnL1AndL2) {
  // glibc answers sysconf from the same CPUID leaves for L1d and L2 (its L3
  // may be the whole package rather than this core's slice, so not compared).
  const MachineInfo m = detect_machine();
  if (m.cache_source != "cpuid") GTEST_SKIP() << "CPUID gives no cache leaf here (source: " << m.cache_source << ")";
  const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l1 <= 0 || l2 <= 0) GTEST_SKIP() << "the C library reports no cache sizes";
  EXPECT_EQ(m.l1d_bytes, l1);
  EXPECT_EQ(m.l2_bytes, l2);
}
#endif

TEST(MachineCaches, AnyCpuNumberIsSafe) {
  // A CPU without sysfs entries (or beyond the machine) never fails detection.
  for (int cpu : {-1, 0, 99999}) {
    const MachineInfo m = detect_machine(cpu);
    EXPECT_FALSE(m.cache_source.empty());
    EXPECT_GE(m.l1d_bytes, 0);
  }
}

// --threads N measures on --cpu and the nearest N-1 CPUs below (then above) it.
TEST(MeasuringCpus, EndAtTheCpuAndRefuseTooMany) {
  const int last = default_cpu(), n = available_cpus();
  ASSERT_GE(n, 1);
  EXPECT_EQ(measuring_cpus(-1, 1), std::vector<int>{last});
  const std::vector<int> all = measuring_cpus(-1, n);
  ASSERT_EQ(int(all.size()), n);
  EXPECT_EQ(all.back(), last);
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1], all[i]);
  EXPECT_EQ(cpu_list({2, 3}), "2,3");
  EXPECT_EQ(measuring_cpus(all.front(), n), all);  // the lowest CPU: the others are above it
  try {
    measuring_cpus(-1, n + 1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--threads " + std::to_string(n + 1) + " needs " + std::to_string(n + 1) +
                                         " CPUs, but this process may use only " + std::to_string(n) +
                                         "; give --threads " + std::to_string(n) + " or fewer");
  }
}

// Bound to several CPUs, each thread of an OpenMP team of that size runs on
// one of them, in order, the calling thread on the first.
TEST(BindOpenmpThreads, EachThreadGetsOneCpu) {
  if (available_cpus() < 2) GTEST_SKIP() << "this process may use only one CPU";
  if (openmp_thread_cpus(1).empty()) GTEST_SKIP() << "this build has no OpenMP (no oneDNN or LIBXSMM found)";
  const std::vector<int> cpus = measuring_cpus(-1, 2);
  cpu_set_t saved;
  CPU_ZERO(&saved);
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  bind_openmp_threads(cpus);
  const std::vector<std::vector<int>> got = openmp_thread_cpus(2);
  sched_setaffinity(0, sizeof saved, &saved);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::vector<int>{cpus[0]});
  EXPECT_EQ(got[1], std::vector<int>{cpus[1]});
}

}  // namespace
}  // namespace convtune::machine_test
