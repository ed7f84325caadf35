// The driver-object cache: keyed by everything that goes into the objects,
// stored whole or not at all, and a runner that finds them compiles no
// driver; a cache it cannot write only means compiling.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "convtune/core/isa.h"
#include "convtune/execution/clock_probe.h"
#include "convtune/execution/driver_cache.h"
#include "convtune/execution/runner.h"
#include "test_util.h"

namespace convtune::driver_cache_test {
namespace {

using test::ScopedEnv;

TEST(DriverCache, KeyIsStableAndSeparatesItsParts) {
  const std::string k = driver_key({"cc", "-O2", "int x;"});
  EXPECT_EQ(k.size(), 16u);
  EXPECT_EQ(k, driver_key({"cc", "-O2", "int x;"}));
  EXPECT_NE(k, driver_key({"cc", "-O3", "int x;"}));
  EXPECT_NE(driver_key({"ab", "c"}), driver_key({"a", "bc"}));
  EXPECT_EQ(driver_key({}), "cbf29ce484222325");  // FNV-1a's offset basis: nothing hashed
}

// A cache of its own under a temporary directory, and an out/ to fetch into.
class CacheInTemp : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(td.file("out")); }
  test::TempDir td;
  ScopedEnv xdg{"XDG_CACHE_HOME", td.file("cache")};
};

using DriverCacheStore = CacheInTemp;

TEST_F(DriverCacheStore, StoredWholeAndFetchedByKey) {
  test::write_file(td.file("a.o"), "object a");
  test::write_file(td.file("b.o"), "object b");
  EXPECT_FALSE(fetch_compiled("k1", {"a.o", "b.o"}, td.file("out")));
  store_compiled("k1", {"a.o", "b.o"}, td.path());
  ASSERT_TRUE(fetch_compiled("k1", {"a.o", "b.o"}, td.file("out")));
  EXPECT_EQ(test::read_file(td.file("out/a.o")), "object a");
  EXPECT_EQ(test::read_file(td.file("out/b.o")), "object b");
  EXPECT_FALSE(fetch_compiled("k2", {"a.o"}, td.file("out")));
  EXPECT_FALSE(fetch_compiled("k1", {"a.o", "c.o"}, td.file("out"))) << "c was never stored";
  // A store missing an object leaves no entry, and no temporary directory.
  store_compiled("k3", {"a.o", "missing.o"}, td.path());
  EXPECT_FALSE(fetch_compiled("k3", {"a.o"}, td.file("out")));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(td.file("cache/convtune/driver")),
                          std::filesystem::directory_iterator()),
            1);
}

// The entries holding a file are kept to the most recently stored or
// fetched; entries without it are not counted and stay.
TEST_F(DriverCacheStore, PruneKeepsTheMostRecentlyUsedHolders) {
  test::write_file(td.file("big.gch"), "header");
  test::write_file(td.file("a.o"), "object a");
  const auto at = [&](const std::string& key) { return td.file("cache/convtune/driver/" + key); };
  const auto now = std::filesystem::file_time_type::clock::now();
  for (int i = 0; i < 5; ++i) {
    store_compiled("h" + std::to_string(i), {"big.gch"}, td.path());
    std::filesystem::last_write_time(at("h" + std::to_string(i)), now - std::chrono::hours(10 - i));  // h4 newest
  }
  store_compiled("obj", {"a.o"}, td.path());
  std::filesystem::last_write_time(at("obj"), now - std::chrono::hours(100));
  ASSERT_TRUE(fetch_compiled("h0", {"big.gch"}, td.file("out")));  // the oldest, used now
  prune_compiled("big.gch", 3);
  for (const char* kept : {"h0", "h3", "h4", "obj"}) EXPECT_TRUE(std::filesystem::exists(at(kept))) << kept;
  for (const char* gone : {"h1", "h2"}) EXPECT_FALSE(std::filesystem::exists(at(gone))) << gone;
  prune_compiled("big.gch", 3);  // nothing more to remove
  EXPECT_TRUE(std::filesystem::exists(at("h3")));
}

TEST(DriverCache, AnUnwritableCacheOnlyMeansCompiling) {
  test::TempDir td;
  test::write_file(td.file("file"), "");
  ScopedEnv xdg("XDG_CACHE_HOME", td.file("file"));  // a file: no directory can be made under it
  test::write_file(td.file("a.o"), "object a");
  store_compiled("k", {"a.o"}, td.path());
  EXPECT_FALSE(fetch_compiled("k", {"a.o"}, td.path()));
}

// A runner compiles the driver once per compiler, flags and sources: the
// second finds it cached, and its peak loop (linked from those objects) runs;
// so does the clock probe.
TEST(DriverCache, ASecondRunnerCompilesNoDriver) {
  const Isa isa = load_isa("avx2");
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU has no AVX2";
  test::TempDir td;
  ScopedEnv xdg("XDG_CACHE_HOME", td.file("cache"));
  const std::string cc = td.file("cc.sh");  // logs the C files it compiles
  test::write_file(cc, "#!/bin/sh\nfor a; do case $a in *.c) basename \"$a\" >> " + td.file("log") +
                           " ;; esac; done\nexec cc \"$@\"\n");
  ASSERT_EQ(std::system(("chmod +x " + cc).c_str()), 0);
  ScopedEnv env_cc("CC", cc);
  auto compiled = [&] {
    std::string log;
    try {
      log = test::read_file(td.file("log"));
    } catch (const std::exception&) {
    }
    std::remove(td.file("log").c_str());
    return log;
  };
  std::filesystem::create_directories(td.file("one"));
  std::filesystem::create_directories(td.file("two"));
  std::filesystem::create_directories(td.file("three"));
  Runner(isa, false, -1, td.file("one"));
  EXPECT_EQ(compiled(), "driver.c\ntiming.c\ncheck.c\nreference.c\npeak.c\n");
  Runner second(isa, false, -1, td.file("two"));
  EXPECT_EQ(compiled(), "");
  EXPECT_GT(second.peak_gflops(1), 0);
  EXPECT_EQ(compiled(), "peak_main.c\n");
  Isa other = isa;
  other.cflags.push_back("-O1");  // other flags: another key
  Runner(other, false, -1, td.file("three"));
  EXPECT_EQ(compiled(), "driver.c\ntiming.c\ncheck.c\nreference.c\npeak.c\n");
  // The clock probe's peak loop, a shared object, likewise.
  ClockProbe(isa, 100.0);
  EXPECT_EQ(compiled(), "probe.c\n");
  ClockProbe probe(isa, 100.0);
  EXPECT_EQ(compiled(), "");
  probe.call()();  // the cached object loaded and runs
}

}  // namespace
}  // namespace convtune::driver_cache_test
