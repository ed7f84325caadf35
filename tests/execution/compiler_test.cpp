// The compiler's failures say what went wrong: a compiler that writes
// nothing (CC=true), one killed by a signal, one that cannot be run; and the
// precompiled intrinsics header.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "convtune/core/isa.h"
#include "convtune/execution/compiler.h"
#include "convtune/execution/driver_cache.h"
#include "convtune/execution/runner.h"
#include "test_util.h"

namespace convtune::compiler_test {
namespace {

TEST(Compiler, NoOutputFileIsAFailure) {
  test::TempDir td;
  test::write_file(td.file("a.c"), "int x;\n");
  Compiler cc;
  cc.command = {"true"};
  CompileResult r = compile_one(cc, {td.file("a.c"), td.file("a.so")});
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.no_output);
  EXPECT_EQ(r.log, "the C compiler 'true' produced no output file " + td.file("a.so"));
}

TEST(Compiler, KilledBySignalSaysSo) {
  test::TempDir td;
  test::write_file(td.file("a.c"), "int x;\n");
  Compiler cc;
  cc.command = {"sh", "-c", "echo partial; kill -KILL $$"};  // the rest of the command line lands in $0, $1, ...
  CompileResult r = compile_one(cc, {td.file("a.c"), td.file("a.so")});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.log, "the compiler was killed by signal 9 (Killed)\npartial\n");
}

TEST(Compiler, TimeOutSaysSo) {
  test::TempDir td;
  test::write_file(td.file("a.c"), "int x;\n");
  Compiler cc;
  cc.command = {"sh", "-c", "sleep 30"};
  cc.timeout_s = 1;
  CompileResult r = compile_one(cc, {td.file("a.c"), td.file("a.so")});
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.log, "the compiler timed out after 1 s");
}

TEST(Compiler, CompileErrorsKeepTheCompilersWords) {
  test::TempDir td;
  test::write_file(td.file("a.c"), "this is not C;\n");
  CompileResult r = compile_one(Compiler::from_env({}), {td.file("a.c"), td.file("a.so")});
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.no_output);
  EXPECT_NE(r.log.find("error"), std::string::npos) << r.log;
}

// The runner refuses a compiler that "succeeds" without output before any candidate.
TEST(Compiler, RunnerRefusesACompilerWithoutOutput) {
  test::TempDir td;
  const char* old = std::getenv("CC");
  const std::string saved = old ? old : "";
  setenv("CC", "true", 1);
  std::string msg = test::error_of([&] { Runner r(load_isa("avx2"), false, -1, td.path()); });
  if (old)
    setenv("CC", saved.c_str(), 1);
  else
    unsetenv("CC");
  EXPECT_EQ(msg, "the C compiler 'true' produced no output file " + td.file("driver.o") +
                     "; set CC to a working C compiler");
}

// The precompiled intrinsics header: made for the flags it is given, and a
// kernel compiled with it is the same code. A compiler that makes no header,
// or cannot compile with the one it made, gets no flags: compiles stay as
// they were.
TEST(PrecompiledHeader, MadeForTheFlagsAndUsed) {
  test::TempDir td;
  const Isa isa = load_isa("avx2");
  const Compiler cc = Compiler::from_env(isa.cflags);
  const std::vector<std::string> use = precompiled_header_flags(cc, isa.header, td.path(), {"-fopenmp"});
  ASSERT_EQ(use, (std::vector<std::string>{"-fPIC", "-include", td.file("ct_intrin.h")}));
  EXPECT_EQ(test::read_file(td.file("ct_intrin.h")), "#include <immintrin.h>\n");
  EXPECT_TRUE(std::ifstream(td.file("ct_intrin.h.gch")).good());
  // GCC says which header it read (-H): the precompiled one, marked '!'.
  test::write_file(td.file("k.c"), "#include <immintrin.h>\n__m256 f(__m256 a) { return _mm256_add_ps(a, a); }\n");
  Compiler with = cc;
  with.flags.insert(with.flags.end(), use.begin(), use.end());
  with.output_flags = {"-c", "-H"};
  const CompileResult r = compile_one(with, {td.file("k.c"), td.file("k.o"), {"-fopenmp"}});
  ASSERT_TRUE(r.ok) << r.log;
  if (cc.info().version.find("clang") == std::string::npos)
    EXPECT_EQ(r.log.rfind("! " + td.file("ct_intrin.h.gch"), 0), 0u) << r.log;
}

TEST(PrecompiledHeader, NoneWhenTheCompilerCannotMakeOrUseIt) {
  test::TempDir td;
  Compiler none;
  none.command = {"true"};  // "succeeds" without writing a file
  EXPECT_TRUE(precompiled_header_flags(none, "immintrin.h", td.path()).empty());
  // Makes the header but fails every compile that includes it.
  test::write_file(td.file("cc.sh"), "#!/bin/sh\ncase \"$*\" in *-include*) exit 1 ;; esac\nexec cc \"$@\"\n");
  ASSERT_EQ(std::system(("chmod +x " + td.file("cc.sh")).c_str()), 0);
  Compiler refuses = Compiler::from_env(load_isa("avx2").cflags);
  refuses.command = {td.file("cc.sh")};
  EXPECT_TRUE(precompiled_header_flags(refuses, "immintrin.h", td.path()).empty());
  EXPECT_TRUE(std::ifstream(td.file("ct_intrin.h.gch")).good()) << "it made one";
}

// Made once per compiler, flags and header, then fetched from the cache
// (driver_cache.h): a second run, whose compiler now refuses to make one,
// still compiles with the one the first run made and checked.
TEST(PrecompiledHeader, CachedAcrossRuns) {
  test::TempDir td;
  test::ScopedEnv xdg("XDG_CACHE_HOME", td.file("cache"));
  test::write_file(td.file("cc.sh"), "#!/bin/sh\ncase \"$*\" in *c-header*) [ -e " + td.file("deny") +
                                         " ] && exit 1 ;; esac\nexec cc \"$@\"\n");
  ASSERT_EQ(std::system(("chmod +x " + td.file("cc.sh")).c_str()), 0);
  Compiler cc = Compiler::from_env(load_isa("avx2").cflags);
  cc.command = {td.file("cc.sh")};
  std::filesystem::create_directories(td.file("one"));
  std::filesystem::create_directories(td.file("two"));
  ASSERT_EQ(precompiled_header_flags(cc, "immintrin.h", td.file("one"), {"-fopenmp"}).size(), 3u);
  test::write_file(td.file("deny"), "");
  EXPECT_EQ(precompiled_header_flags(cc, "immintrin.h", td.file("two"), {"-fopenmp"}),
            (std::vector<std::string>{"-fPIC", "-include", td.file("two/ct_intrin.h")}));
  EXPECT_EQ(test::read_file(td.file("two/ct_intrin.h.gch")), test::read_file(td.file("one/ct_intrin.h.gch")));
  // Other job flags are another header, which this compiler now cannot make.
  std::filesystem::create_directories(td.file("three"));
  EXPECT_TRUE(precompiled_header_flags(cc, "immintrin.h", td.file("three"), {}).empty());
}

}  // namespace
}  // namespace convtune::compiler_test
