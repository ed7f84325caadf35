// The compiler's failures say what went wrong: a compiler that writes
// nothing (CC=true), one killed by a signal, one that cannot be run.
#include <gtest/gtest.h>

#include <cstdlib>

#include "convtune/core/isa.h"
#include "convtune/execution/compiler.h"
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

}  // namespace
}  // namespace convtune::compiler_test
