// Generated microkernels checked numerically against the scalar reference of
// microkernels/CONTRACT.md (tests/kernel_harness.h), and what the ISAs'
// compiler flags make of them in assembly.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "convtune/core/isa.h"
#include "convtune/execution/compiler.h"
#include "convtune/offline/profile.h"
#include "convtune/ukernel/codegen.h"
#include "convtune/ukernel/ukernel.h"
#include "kernel_harness.h"
#include "test_util.h"

namespace convtune::ukernel_codegen_test {
namespace {

// Every (r, s) pair and the edge sizes: the quick subset is exactly that.
// Each ISA this CPU runs (NEON on x86 runs under qemu in neon_test.cpp).
class UkernelCodegen : public ::testing::TestWithParam<const char*> {};

TEST_P(UkernelCodegen, SampleMatchesScalarReference) {
  Isa isa = load_isa(GetParam());
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run " << isa.name << " natively";
  // The dense families of the quick subset: its depthwise kernels take
  // another layout and reference (depthwise_ukernel_test.cpp).
  std::vector<UkSizes> sample = quick_subset(isa);
  sample.erase(std::remove_if(sample.begin(), sample.end(), [](const UkSizes& u) { return u.dw; }), sample.end());
  ASSERT_GE(sample.size(), 40u);
  // And blocks that re-read weight vectors (w*h*k + k + 1 > registers): the
  // first and last four of the space.
  std::vector<UkSizes> reread;
  for (const UkSizes& u : enumerate_ukernels(isa))
    if (u.out_regs() + u.k + 1 > isa.vector_registers) reread.push_back(u);
  ASSERT_GE(reread.size(), 8u);
  sample.insert(sample.end(), reread.begin(), reread.begin() + 4);
  sample.insert(sample.end(), reread.end() - 4, reread.end());
  // Odd strides and a conv stride of 2 so that no index can be silently wrong.
  std::vector<UkCase> cases;
  for (size_t i = 0; i < sample.size(); ++i) cases.push_back({sample[i], test::odd_layout(sample[i], isa.lanes, i, 16)});
  const auto checked = test::check_ukernels(isa, cases);
  ASSERT_EQ(checked.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(checked[i].status, Status::ok) << sizes_text(cases[i].u) << ": " << checked[i].detail;
}

INSTANTIATE_TEST_SUITE_P(Isas, UkernelCodegen, ::testing::Values("avx512", "avx2", "neon"));

// CONTRACT.md "How it is built": a microkernel loads each weight vector once
// per c step and keeps it in a register. GCC 12's znver2/znver3 cost model
// (what -mtune=native picks on Zen 2/3) instead folds the load into every FMA
// that uses it: k3c1w4h1 then issues 12 full-width loads and 4 broadcasts per
// 12 FMAs, more than two load ports carry, and runs at half the speed of
// the same microkernel with its weights in registers. The ISAs' flags must not
// let the compiler fold.
// Compiled to assembly only, so every x86 ISA is checked on any x86 CPU.
struct AsmCounts {
  int folded = 0;  // FMAs reading a weight from memory
  int stack = 0;   // vector moves to or from the stack: spills
};
AsmCounts count_asm(const Isa& isa, const UkSizes& u, const std::vector<std::string>& extra, const test::TempDir& td) {
  std::string src = generated_prelude(isa) + emit_ukernel(isa, u, profile_layout(u, isa.lanes, 512), "uk") +
                    "void call(const float *I, const float *W, float *O, long nc) { uk(I, 0, W, O, nc, 0); }\n";
  test::write_file(td.file("fold.c"), src);
  std::vector<std::string> flags = isa.cflags;
  flags.insert(flags.end(), extra.begin(), extra.end());
  Compiler cc = Compiler::from_env(flags);
  cc.output_flags = {"-S"};
  CompileResult cr = compile_one(cc, {td.file("fold.c"), td.file("fold.s")});
  EXPECT_TRUE(cr.ok) << cr.log;
  // An FMA whose first (AT&T: source) operand is memory, not an AVX-512
  // embedded broadcast of the input ({1toN}): a folded weight load.
  std::ifstream in(td.file("fold.s"));
  AsmCounts n;
  auto has = [](const std::string& line, const char* what) { return line.find(what) != std::string::npos; };
  for (std::string line; std::getline(in, line);) {
    if (has(line, "vfmadd") && has(line, "(%") && !has(line, "{1to")) ++n.folded;
    if (has(line, "vmov") && (has(line, "(%rsp)") || has(line, "(%rbp)"))) ++n.stack;
  }
  return n;
}
int folded_fmas(const Isa& isa, const std::vector<std::string>& extra, const test::TempDir& td) {
  return count_asm(isa, UkSizes{3, 1, 4, 1, 1, 1}, extra, td).folded;
}

class UkernelFlags : public ::testing::TestWithParam<const char*> {};

TEST_P(UkernelFlags, WeightVectorsStayInRegisters) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "x86 flags need an x86 compiler; this host is not x86-64";
#endif
  Isa isa = load_isa(GetParam());
  test::TempDir td;
  EXPECT_EQ(folded_fmas(isa, {}, td), 0) << "the " << isa.name << " flags let the compiler fold weight loads into FMAs";
  // The check itself: with the tuning that folds, it must see the folds.
  const int control = folded_fmas(isa, {"-mtune=znver3"}, td);
  if (control == 0) GTEST_SKIP() << "this compiler does not fold under -mtune=znver3 (GCC 12 does): the control is void";
  EXPECT_GE(control, 12);
}

// A block whose accumulators leave too few registers for its k weight
// vectors (w*h*k + k + 1 > registers) re-reads the last ones from memory at
// each use (ukernel/codegen.cpp, kLaunder) instead of keeping them live: one
// folded FMA per output pixel and re-read vector, and nothing on the stack.
// Left to itself, GCC keeps both of k2c1w7h1's weight vectors and spills an
// accumulator, at about half the speed of re-reading one.
TEST_P(UkernelFlags, AFullRegisterFileRereadsWeightsInsteadOfSpilling) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "x86 flags need an x86 compiler; this host is not x86-64";
#endif
  Isa isa = load_isa(GetParam());
  test::TempDir td;
  // 14 + 2 + 1 = 17 of 16 registers; 28 + 4 + 1 = 33 of 32: one vector re-read.
  const UkSizes full = isa.vector_registers == 16 ? UkSizes{2, 1, 7, 1, 1, 1} : UkSizes{4, 1, 7, 1, 1, 1};
  const AsmCounts n = count_asm(isa, full, {}, td);
  EXPECT_EQ(n.stack, 0) << sizes_text(full) << " spills";
  EXPECT_EQ(n.folded, 7) << sizes_text(full) << ": one re-read weight vector per output pixel";
  // A block that fits keeps every weight vector in registers.
  EXPECT_EQ(count_asm(isa, UkSizes{3, 1, 4, 1, 1, 1}, {}, td).folded, 0);
}

INSTANTIATE_TEST_SUITE_P(X86, UkernelFlags, ::testing::Values("avx512", "avx2"));

}  // namespace
}  // namespace convtune::ukernel_codegen_test
