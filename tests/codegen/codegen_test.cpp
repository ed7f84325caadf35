// Generated convolutions equal the reference convolution at every output
// element (tests/kernel_harness.h): the one list of cases on AVX-512 and on
// AVX2 (single and combined (Lseq) microkernels, stride 2, R = 7, padded K,
// P loops), the border and tail matrix, epilogues, Flat(hw), Winograd; and the
// generated text itself.
#include <gtest/gtest.h>

#include "convtune/codegen/conv.h"
#include "convtune/execution/compiler.h"
#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/execution/runner.h"
#include "convtune/offline/class_table.h"
#include "convtune/space/space.h"
#include "kernel_harness.h"
#include "test_util.h"

#include <optional>
#include <random>

#include <fmt/format.h>

namespace convtune::codegen_test {
namespace {

using test::check_conv;
using test::blocked_config;
using test::ConvCase;
using test::largest_divisor;

class ConvCodegen : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvCodegen, EqualsReferenceEverywhere) {
  Isa isa = load_isa("avx512");
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU has no AVX-512";
  const auto r = check_conv(isa, parse_shape(GetParam().shape), parse_config(GetParam().config));
  EXPECT_EQ(r.status, Status::ok) << r.detail << "\n" << r.source.substr(0, 4000);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvCodegen, ::testing::ValuesIn(test::conv_cases("avx512")));

// The same list's cases for 8 lanes (K counts 8 channels per V(k)).
class ConvAvx2 : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvAvx2, EqualsReferenceEverywhere) {
  Isa isa = load_isa("avx2");
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU has no AVX2";
  const auto r = check_conv(isa, parse_shape(GetParam().shape), parse_config(GetParam().config));
  EXPECT_EQ(r.status, Status::ok) << r.detail << "\n" << r.source;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvAvx2, ::testing::ValuesIn(test::conv_cases("avx2")));

// The border and tail matrix of issue 11, for every ISA this CPU runs: each
// configuration is built from the shape (a whole-filter "taps" microkernel and
// the paper's tap loops outside it), so the same cases serve 8 and 16 lanes.
struct Border {
  const char* shape;
  bool taps;  // U(S,s) U(R,r) in the microkernel; else T(R,r), T(S,s) outside
  TapFence fence = TapFence::none;  // taps only: F(r) / F(s)
  bool prefetch_out = false;        // Pf(o)
  bool stream_out = false;          // Nt(o)
};
void PrintTo(const Border& b, std::ostream* os) {
  *os << b.shape << (b.taps ? " taps" : " paper") << (b.fence == TapFence::r ? " F(r)" : b.fence == TapFence::s ? " F(s)" : "")
      << (b.prefetch_out ? " Pf(o)" : "") << (b.stream_out ? " Nt(o)" : "");
}

class ConvBorders : public ::testing::TestWithParam<std::tuple<std::string, Border>> {};

TEST_P(ConvBorders, EqualsReferenceEverywhereWithGuardZones) {
  Isa isa = load_isa(std::get<0>(GetParam()));
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run " << isa.name;
  const Border b = std::get<1>(GetParam());
  Shape shape = parse_shape(b.shape);
  Config cfg = blocked_config(shape, isa.lanes, b.taps);
  cfg.fence = b.fence;
  cfg.prefetch_out = b.prefetch_out;
  cfg.stream_out = b.stream_out;
  const auto r = check_conv(isa, shape, cfg);
  EXPECT_EQ(r.status, Status::ok) << to_string(cfg) << ": " << r.detail;
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, ConvBorders,
    ::testing::Combine(
        ::testing::Values(std::string("avx512"), std::string("avx2")),
        ::testing::Values(
            // pad 0..3 with 3x3, 5x5 and 7x7 filters, stride 1 and 2, both families
            Border{"K=16,C=4,H=6,R=3,pad=0", true}, Border{"K=16,C=4,H=6,R=3,pad=1", true},
            Border{"K=16,C=4,H=6,R=3,pad=1", false}, Border{"K=16,C=4,H=7,R=3,pad=2", true},
            Border{"K=16,C=4,H=8,R=3,pad=3", false}, Border{"K=16,C=4,H=9,R=3,stride=2,pad=1", true},
            Border{"K=16,C=4,H=9,R=3,stride=2,pad=1", false}, Border{"K=16,C=2,H=9,R=5,pad=2", true},
            Border{"K=16,C=2,H=8,R=5,stride=2,pad=2", false}, Border{"K=16,C=3,H=12,R=7,stride=2,pad=3", true},
            Border{"K=16,C=3,H=12,R=7,stride=2,pad=3", false}, Border{"K=16,C=4,H=5,R=1,pad=0", true},
            Border{"K=16,C=4,H=6,R=1,stride=2,pad=1", false},
            // C = 3 (an RGB input) and exact K: 1, 20, 40 and 28269 (yolo9000-23 in small)
            Border{"K=1,C=3,H=6,R=3,pad=1", true}, Border{"K=20,C=3,H=5,R=3,pad=1", true},
            Border{"K=40,C=4,H=6,R=3,pad=1", false}, Border{"K=28269,C=2,H=2,R=1,pad=0", true},
            // fenced taps: border variants skip taps, so a row may start at any s
            Border{"K=16,C=4,H=7,R=3,pad=2", true, TapFence::r}, Border{"K=20,C=3,H=5,R=3,pad=1", true, TapFence::s},
            Border{"K=16,C=3,H=12,R=7,stride=2,pad=3", true, TapFence::r},
            // Pf(o): prefetching the output block changes no value, at borders, in the K tail and with taps outside
            Border{"K=20,C=3,H=5,R=3,pad=1", true, TapFence::none, true},
            Border{"K=16,C=3,H=12,R=7,stride=2,pad=3", false, TapFence::none, true},
            Border{"K=28269,C=2,H=2,R=1,pad=0", true, TapFence::none, true},
            Border{"K=40,C=4,H=6,R=3,pad=1", true, TapFence::s, true},
            // Nt(o): streamed at borders, in the K tail and with taps outside (one streaming call per block)
            Border{"K=20,C=3,H=5,R=3,pad=1", true, TapFence::none, false, true},
            Border{"K=16,C=3,H=12,R=7,stride=2,pad=3", false, TapFence::none, false, true},
            Border{"K=40,C=4,H=6,R=3,pad=1", true, TapFence::r, true, true})));

// The shape matrix beyond 000's square windows: dilation 2 and 4, 1x7 and
// 7x1 filters with pads (0,3) and (3,0), asymmetric pads (0,0,1,1), strides
// (2,1), K and C off the vector length, and the shapes only an unprofiled
// fallback microkernel tiles (a prime 17x17 output on one AVX-512 vector of
// K, a 3x3 filter over a 1x1 input). Per shape: configurations drawn from
// its space with the shipped table (seeds 1, 2, ...) and the border
// matrix's configuration (taps inside or outside the microkernel, by turns),
// each checked against the reference at every output element with guard
// zones, through one driver per ISA.
const char* const kMatrixShapes[] = {
    "K=16,C=4,H=9,R=3,dilation=2",
    "K=16,C=4,H=10,R=3,dilation=2,pad=0",
    "K=16,C=3,H=11,R=3,dilation=4",
    "K=20,C=5,H=12,W=9,R=3,dilation_h=4,dilation_w=2,pad_h=1,pad_w=2",
    "K=16,C=4,H=6,W=9,R=1,S=7,pad_h=0,pad_w=3",
    "K=16,C=4,H=9,W=6,R=7,S=1,pad_h=3,pad_w=0",
    "K=16,C=4,H=8,R=3,pad_t=0,pad_l=0,pad_b=1,pad_r=1",
    "K=16,C=4,H=9,R=3,stride=2,pad_t=0,pad_l=0,pad_b=1,pad_r=1",
    "K=16,C=4,H=9,W=7,R=3,stride_h=2,stride_w=1,pad=1",
    "K=13,C=7,H=9,W=7,R=3,stride_h=2,stride_w=1,pad_t=0,pad_l=0,pad_b=1,pad_r=1,dilation=2",
    "K=20,C=3,H=7,R=5,stride_h=1,stride_w=2,pad_t=2,pad_l=1,pad_b=0,pad_r=2",
    "K=8,C=8,H=17,R=3,pad=1",
    "K=16,C=8,H=1,R=3,pad=1",
};

class ConvShapeMatrix : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvShapeMatrix, SampledConfigurationsEqualTheReferenceEverywhere) {
  const Isa isa = load_isa(GetParam());
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run " << isa.name;
  const ClassTable table = load_table(isa.name, std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/" + isa.name + ".json");
  std::vector<test::ConvSpec> specs;
  bool taps = false;
  uint64_t seed = 0;
  for (const char* text : kMatrixShapes) {
    const Shape shape = parse_shape(text);
    const Space space = build_space(shape, table, isa.lanes);
    std::mt19937_64 rng(++seed);
    for (int i = 0; i < 2; ++i) specs.push_back({shape, sample_config(space, rng)});
    specs.push_back({shape, blocked_config(shape, isa.lanes, taps = !taps)});
  }
  const std::vector<test::ConvCheck> results = test::check_convs(isa, specs);
  ASSERT_EQ(results.size(), specs.size());
  for (size_t i = 0; i < specs.size(); ++i)
    EXPECT_EQ(results[i].status, Status::ok)
        << specs[i].shape.to_string() << " " << to_string(specs[i].cfg) << ": " << results[i].detail;
}

INSTANTIATE_TEST_SUITE_P(Isas, ConvShapeMatrix, ::testing::Values(std::string("avx512"), std::string("avx2")));

// Nt(o) streams only to aligned addresses: a caller's output one float off
// the vector alignment (the header promises no alignment) must neither fault
// (a streaming store there is a #GP) nor change a value, and stays inside
// its buffer; the aligned call is the one the matrix above checks against
// the reference.
class ConvStream : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvStream, UnalignedOutputEqualsAlignedAndStaysInside) {
  Isa isa = load_isa(GetParam());
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run " << isa.name;
  for (const char* text : {"K=32,C=4,H=6,R=3,pad=1", "K=16,C=3,H=12,R=7,stride=2,pad=3"}) {
    const Shape shape = parse_shape(text);
    Config cfg = blocked_config(shape, isa.lanes, true);
    cfg.stream_out = true;
    test::TempDir td;
    GeneratedKernel k = generate_conv(isa, {shape, cfg, "ct_conv", "test"});
    ASSERT_NE(k.c_source.find(Isa::expand(isa.store_stream, {{"ptr", ""}, {"val", ""}}).substr(0, 10)), std::string::npos);
    test::write_file(td.file("k.c"), k.c_source);
    test::write_file(td.file("main.c"), fmt::format(R"(#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "k.c"
enum {{ NI = {0}, NW = {1}, NO = {2}, G = 64 }};
/* 64-byte aligned (the compile is -std=c99: no aligned_alloc); never freed */
static float *aligned(size_t floats) {{
  char *p = malloc(sizeof(float) * floats + 64);
  return (float *)(p + (64 - (size_t)p % 64));
}}
int main(void) {{
  float *in = malloc(sizeof(float) * NI), *kcrs = malloc(sizeof(float) * NW);
  float *packed = aligned(ct_conv_packed_floats), *a = aligned(NO), *b = aligned(NO + 2 * G + 1);
  for (long i = 0; i < NI; ++i) in[i] = (float)((i * 7) % 13) - 6.0f;
  for (long i = 0; i < NW; ++i) kcrs[i] = (float)((i * 5) % 11) * 0.25f - 1.0f;
  ct_conv_pack(kcrs, packed);
  memset(b, 0x5a, sizeof(float) * (NO + 2 * G + 1));
  float *u = b + G + 1;  /* 4 bytes past a 64-byte boundary */
  ct_conv(in, packed, a);
  ct_conv(in, packed, u);
  for (long i = 0; i < NO; ++i)
    if (memcmp(&a[i], &u[i], sizeof(float)) != 0) {{ printf("differ at %ld: %g vs %g\n", i, a[i], u[i]); return 1; }}
  for (long i = 0; i < G + 1; ++i)  /* G + 1 floats before u, G after its end */
    if (((unsigned char *)b)[4 * i] != 0x5a || (i < G && ((unsigned char *)(u + NO))[4 * i] != 0x5a)) {{
      printf("guard %ld\n", i);
      return 1;
    }}
  long nonzero = 0;
  for (long i = 0; i < NO; ++i) nonzero += a[i] != 0.0f;
  printf("ok %ld\n", nonzero);
  return 0;
}}
)",
                                                    shape.N * shape.H * shape.W * shape.C,
                                                    shape.K * shape.C * shape.R * shape.S,
                                                    shape.N * shape.Ho() * shape.Wo() * shape.K));
    Compiler cc = Compiler::from_env(isa.cflags);
    cc.output_flags = {};
    CompileResult c = compile_one(cc, {td.file("main.c"), td.file("main")});
    ASSERT_TRUE(c.ok) << c.log;
    const test::CliResult r = test::run_command(td.file("main"));
    EXPECT_EQ(r.exit_code, 0) << text << ": " << r.out;
    EXPECT_EQ(r.out.substr(0, 3), "ok ") << text << ": " << r.out;
    EXPECT_GT(std::atol(r.out.c_str() + 3), shape.N * shape.Ho() * shape.Wo() * shape.K / 2) << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, ConvStream, ::testing::Values(std::string("avx512"), std::string("avx2")));

// Issue 13: fused epilogues, for every ISA this CPU runs, equal the reference
// (convolution, then ct_ref_epilogue) at every output element with guard
// zones: a K tail (K = 20) whose biases and residual load masked, padding
// borders, a whole filter in the microkernel (every call completes its block)
// and tap and channel loops outside it (only the last c, r, s call applies it).
struct EpCase {
  const char* shape;
  bool taps;        // as Border
  int64_t c_outer;  // blocked_config's channel split
};

// One runner per ISA (the driver compiled once) for the 4 epilogues x 2 cases.
class ConvEpilogues : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvEpilogues, EqualReferenceEverywhereWithGuardZones) {
  Isa isa = load_isa(GetParam());
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run " << isa.name;
  const EpCase cases[] = {{"K=20,C=2,H=4,R=3,pad=1", true, 1}, {"K=20,C=4,H=5,R=3,stride=2,pad=1", false, 2}};
  std::vector<test::ConvSpec> specs;
  for (Epilogue e : {Epilogue::bias, Epilogue::bias_relu, Epilogue::bias_relu6, Epilogue::bias_add})
    for (const EpCase& c : cases) {
      const Shape shape = parse_shape(c.shape);
      specs.push_back({shape, blocked_config(shape, isa.lanes, c.taps, c.c_outer), e});
    }
  const auto checked = test::check_convs(isa, specs);
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto& k = specs[i];
    const auto& r = checked[i];
    const std::string what = to_string(k.epilogue) + " " + to_string(k.cfg) + " on " + k.shape.to_string();
    EXPECT_EQ(r.status, Status::ok) << what << ": " << r.detail << "\n"
                                    << r.source.substr(r.source.find("void ct_conv("), 3000);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, ConvEpilogues, ::testing::Values(std::string("avx512"), std::string("avx2")));

// The data makes every epilogue matter (ReLU6 output both clamped at 0 and
// at 6), and the check sees it: a kernel whose epilogue differs from the
// reference's is a wrong result.
TEST(ConvEpilogueCheck, AnotherEpilogueIsAWrongResult) {
  Isa isa = load_isa(best_isa());
  const Shape shape = parse_shape("K=20,C=3,H=5,R=3,pad=1");
  ProblemData p = ProblemData::make(shape, 0, 42, Epilogue::bias_relu6);
  size_t low = 0, high = 0;
  for (double v : p.check_value) {
    low += v == 0;
    high += v == 6;
  }
  EXPECT_GT(low, p.check_value.size() / 10);
  EXPECT_GT(high, p.check_value.size() / 20);
  const Config cfg = blocked_config(shape, isa.lanes, true);
  auto r = check_conv(isa, shape, cfg, Epilogue::bias_relu, 1, Epilogue::bias_relu6);
  EXPECT_EQ(r.status, Status::wrong_result) << r.detail;  // not clamped at 6
  r = check_conv(isa, shape, cfg, Epilogue::bias, 1, Epilogue::bias_add);
  EXPECT_EQ(r.status, Status::wrong_result) << r.detail;  // the residual not added
}

// Issue 12: P loops run on OpenMP threads, pinned to 2 CPUs, and still equal
// the reference at every output element (each output written by one thread).
class ConvParallel : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvParallel, EqualsReferenceEverywhereOnTwoThreads) {
  Isa isa = load_isa("avx512");
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU has no AVX-512";
  if (available_cpus() < 2) GTEST_SKIP() << "this process may use only " << available_cpus() << " CPU; P needs 2";
  Shape shape = parse_shape(GetParam().shape);
  Config cfg = parse_config(GetParam().config);
  const auto r = check_conv(isa, shape, cfg, Epilogue::none, 2);
  EXPECT_EQ(r.status, Status::ok) << r.detail << "\n" << r.source.substr(r.source.find("void ct_conv("), 3000);
  EXPECT_NE(r.source.find("#pragma omp parallel for"), std::string::npos);
}

// The one list's cases on two threads (tests/kernel_harness.cpp).
INSTANTIATE_TEST_SUITE_P(Loops, ConvParallel, ::testing::ValuesIn(test::conv_cases("avx512", 2)));

// The driver binds each OpenMP thread of a candidate to its own CPU of the
// set: a wrapper around a real P(2,k) kernel computes the convolution only
// when its two threads each see exactly one CPU and not the same one (else
// the output stays NaN and the driver reports wrong_result).
TEST(ConvParallelPinning, EachThreadRunsOnItsOwnCpu) {
  Isa isa = load_isa("avx512");
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU has no AVX-512";
  if (available_cpus() < 2) GTEST_SKIP() << "this process may use only " << available_cpus() << " CPU; P needs 2";
  Shape shape = parse_shape("K=32,C=8,H=6,R=3");
  Config cfg = parse_config("[P(2,k), T(3,h), T(6,w), T(3,r), T(3,s), T(8,c), U(2,h), V(k)]");
  GeneratedKernel k = generate_conv(isa, {shape, cfg, "ct_real", "test"});
  const std::string wrapper =
      "\nvoid ct_conv(const float *restrict i, const float *restrict w, float *restrict o) {\n"
      "  int cpu[2] = {-1, -1}, alone[2] = {0, 0};\n"
      "#pragma omp parallel num_threads(2)\n"
      "  {\n"
      "    cpu_set_t s;\n"
      "    CPU_ZERO(&s);\n"
      "    sched_getaffinity(0, sizeof s, &s);\n"
      "    const int t = omp_get_thread_num();\n"
      "    alone[t] = CPU_COUNT(&s) == 1;\n"
      "    for (int c = 0; c < CPU_SETSIZE; ++c) if (CPU_ISSET(c, &s)) cpu[t] = c;\n"
      "  }\n"
      "  if (alone[0] && alone[1] && cpu[0] != cpu[1]) ct_real(i, w, o);\n"
      "}\n"
      "void ct_conv_pack(const float *restrict kcrs, float *restrict packed) { ct_real_pack(kcrs, packed); }\n"
      "const unsigned long ct_conv_packed_floats = " + std::to_string(k.packed_floats) + ";\n";
  const std::string src = "#define _GNU_SOURCE\n#include <sched.h>\n#include <omp.h>\n" + k.c_source + wrapper;
  auto r = test::check_conv_source(isa, shape, src, k.cflags, 2);
  EXPECT_EQ(r.status, Status::ok) << r.detail;
  // The same file on one CPU: both threads share it, so the wrapper leaves NaN.
  r = test::check_conv_source(isa, shape, src, k.cflags, 1);
  EXPECT_EQ(r.status, Status::wrong_result) << r.detail;
}

TEST(ConvCodegenText, ParallelLoopsAreOpenMp) {
  Isa isa = load_isa("avx512");
  Shape shape = parse_shape("K=32,C=8,H=8,R=3");
  GeneratedKernel one = generate_conv(
      isa, {shape, parse_config("[P(2,k), T(4,h), T(8,w), T(3,r), T(3,s), T(8,c), U(2,h), V(k)]"), "f", ""});
  EXPECT_EQ(one.threads, 2);
  EXPECT_EQ(one.cflags, std::vector<std::string>{"-fopenmp"});
  EXPECT_NE(one.c_source.find("#pragma omp parallel for schedule(static) num_threads(2)\n  for (long k1 = 0; k1 < 2; "
                              "++k1) {  /* P(2,k) */"),
            std::string::npos)
      << one.c_source;
  EXPECT_NE(one.header.find("Threads: 2, fixed by the configuration's P loops"), std::string::npos);
  EXPECT_NE(one.header.find("Call it from one\n   thread at a time"), std::string::npos) << one.header;
  EXPECT_NE(one.c_source.find(" * threads: 2 (OpenMP; compile with -fopenmp)"), std::string::npos);

  GeneratedKernel uneven = generate_conv(
      isa, {parse_shape("K=16,C=4,H=17,R=1"), parse_config("[P(17,h,2), T(17,w), T(4,c), V(k)]"), "f", ""});
  EXPECT_EQ(uneven.threads, 2);
  EXPECT_NE(uneven.c_source.find("#pragma omp parallel for schedule(static) num_threads(2)\n  for (long h1 = 0; h1 < "
                                 "17; ++h1) {  /* P(17,h,2) */"),
            std::string::npos)
      << uneven.c_source;

  GeneratedKernel two = generate_conv(
      isa, {shape, parse_config("[P(2,k), P(2,h), T(2,h), T(8,w), T(3,r), T(3,s), T(8,c), U(2,h), V(k)]"), "f", ""});
  EXPECT_EQ(two.threads, 4);
  EXPECT_NE(two.c_source.find("#pragma omp parallel for collapse(2) schedule(static) num_threads(4)\n"),
            std::string::npos);
  EXPECT_EQ(two.c_source.find("#pragma omp parallel for schedule"), std::string::npos);  // one region only

  // No P (or only P(1,d)): no OpenMP, no flag, one thread.
  GeneratedKernel none = generate_conv(
      isa, {shape, parse_config("[P(1,k), T(2,k), T(4,h), T(8,w), T(3,r), T(3,s), T(8,c), U(2,h), V(k)]"), "f", ""});
  EXPECT_EQ(none.threads, 1);
  EXPECT_TRUE(none.cflags.empty());
  EXPECT_EQ(none.c_source.find("#pragma omp"), std::string::npos);
  EXPECT_NE(none.header.find("Threads: runs on the calling thread"), std::string::npos);
}

TEST(ConvCodegenText, ReadableAndStamped) {
  Isa isa = load_isa("avx512");
  Shape shape = zoo_layer("yolo9000-12");
  Config cfg = parse_config(
      "[T(16,k), Lseq(h,[(2,11),(1,12)]), T(17,w), T(3,s), T(3,r), T(2,w), T(256,c), U(a,h), U(2,k), V(k)]");
  GeneratedKernel k = generate_conv(isa, {shape, cfg, "yolo_conv", "configs/tables/avx512.json"});
  EXPECT_NE(k.c_source.find("config: " + to_string(cfg)), std::string::npos);
  EXPECT_NE(k.c_source.find("(yolo9000-12)"), std::string::npos);
  EXPECT_NE(k.c_source.find("ct_ukernel_k2c1w1h11r1s1__avx512"), std::string::npos);
  EXPECT_NE(k.c_source.find("ct_ukernel_k2c1w1h12r1s1__avx512"), std::string::npos);
  EXPECT_NE(k.c_source.find("for (long w1 = 0; w1 < 17; ++w1)"), std::string::npos);
  EXPECT_NE(k.c_source.find("void yolo_conv("), std::string::npos);
  EXPECT_NE(k.header.find("#define YOLO_CONV_PACKED_FLOATS 1179648"), std::string::npos);  // 512*256*3*3
  EXPECT_NE(k.header.find("void yolo_conv_pack(const float *restrict kcrs, float *restrict packed);"),
            std::string::npos);
  // Border rows of the 3x3 taps run variants without the padding taps.
  EXPECT_NE(k.c_source.find("ct_hv0["), std::string::npos);
  EXPECT_NE(k.c_source.find("border/tail variant"), std::string::npos);
  EXPECT_NE(k.header.find("void yolo_conv("), std::string::npos);
}

// No multiply-add on a padding tap: a 3x3 output covered by one block of a
// 3x3 filter with pad 1 has (2+3+2)^2 = 49 real taps of the nominal 81, and the
// generated file holds exactly 49 FMAs (one block, one variant, one k vector).
TEST(ConvCodegenText, PaddingTapsAreNotEmitted) {
  Isa isa = load_isa("avx512");
  Shape shape = parse_shape("K=16,C=1,H=3,R=3,pad=1");
  Config cfg = parse_config("[T(1,c), U(3,s), U(3,r), U(3,w), U(3,h), V(k)]");
  GeneratedKernel k = generate_conv(isa, {shape, cfg, "f", ""});
  size_t fmas = 0;
  for (size_t at = k.c_source.find("_mm512_fmadd_ps"); at != std::string::npos;
       at = k.c_source.find("_mm512_fmadd_ps", at + 1))
    ++fmas;
  EXPECT_EQ(fmas, 49u) << k.c_source;
  EXPECT_EQ(k.c_source.find("switch"), std::string::npos);  // one pattern per axis: no dispatch
}

// F(r) puts a fence before each filter row but the first, F(s) before each
// tap but the first; the fenced microkernel never takes the profiled name.
TEST(ConvCodegenText, TapFences) {
  Isa isa = load_isa("avx512");
  Shape shape = parse_shape("K=16,C=1,H=3,R=3,pad=0");  // Ho = 1: one block, every tap real
  auto fences = [&](const std::string& text) {
    GeneratedKernel k = generate_conv(isa, {shape, parse_config(text), "f", ""});
    size_t n = 0;
    for (size_t at = k.c_source.find("__asm__ __volatile__"); at != std::string::npos;
         at = k.c_source.find("__asm__ __volatile__", at + 1))
      ++n;
    const bool profiled_name = k.c_source.find("ct_ukernel_k1c1w1h1r3s3__avx512(") != std::string::npos;
    return std::make_pair(n, profiled_name);
  };
  const std::string base = "[T(1,c), U(3,s), U(3,r), V(k)";
  EXPECT_EQ(fences(base + "]"), std::make_pair(size_t(0), true));
  EXPECT_EQ(fences(base + ", F(r)]"), std::make_pair(size_t(2), false));
  EXPECT_EQ(fences(base + ", F(s)]"), std::make_pair(size_t(8), false));
}

// Pf(w): each call prefetches its share of the next c block: 4 c steps x 9
// taps x 32 floats = 72 lines over the 6 x 3 calls of a T(2,c) iteration is 4
// lines, one per c step; the next block starts 1152 floats on.
TEST(ConvCodegenText, PrefetchSharesTheNextBlock) {
  Isa isa = load_isa("avx512");
  const std::string cfg = "[T(2,c), T(6,h), T(3,w), T(4,c), U(3,s), U(3,r), U(2,w), U(2,k), V(k)";
  const Shape shape = parse_shape("K=32,C=8,H=6,R=3");
  GeneratedKernel k = generate_conv(isa, {shape, parse_config(cfg + ", Pf(w)]"), "f", ""});
  EXPECT_NE(k.c_source.find("long pfg = 0;"), std::string::npos) << k.c_source;
  EXPECT_NE(k.c_source.find("const float *pf = weights + k * 72 + c * 288 + 1152 + pfg++ * 64;"), std::string::npos);
  EXPECT_NE(k.c_source.find("(input, io, wp, op, 4, acc, pf, 4);"), std::string::npos);
  EXPECT_NE(k.c_source.find("_mm_prefetch((const char *)(P + it * 16 + 0), _MM_HINT_T1);"), std::string::npos);
  EXPECT_EQ(k.c_source.find("P + it * 16 + 16"), std::string::npos);  // one line per c step
  GeneratedKernel plain = generate_conv(isa, {shape, parse_config(cfg + "]"), "f", ""});
  EXPECT_EQ(plain.c_source.find("prefetch"), std::string::npos);
}

// Pf(o): 4 c x 2 w x 2 k = 16 multiply-adds a c step, so 384 of them ahead is
// 24 steps (more than nc = 4: the first step prefetches); one line per pixel
// (2 x 8 lanes), two at U(4,k); none without Pf(o).
TEST(ConvCodegenText, PrefetchOutputLinesAhead) {
  Isa isa = load_isa("avx2");
  ASSERT_EQ(isa.output_ahead_fmas, 384);
  const Shape shape = parse_shape("K=32,C=16,H=4,R=1");
  GeneratedKernel k = generate_conv(
      isa, {shape, parse_config("[T(2,k), T(4,h), T(2,w), T(4,c), U(4,c), U(2,w), U(2,k), V(k), Pf(o)]"), "f", ""});
  EXPECT_NE(k.c_source.find("  const long po = nc > 24 ? nc - 24 : 0;"), std::string::npos) << k.c_source;
  EXPECT_NE(k.c_source.find("    if (it == po) {\n      _mm_prefetch((const char *)(O + 0), _MM_HINT_T0);\n"
                            "      _mm_prefetch((const char *)(O + 32), _MM_HINT_T0);\n    }\n"),
            std::string::npos);
  GeneratedKernel wide = generate_conv(
      isa, {shape, parse_config("[T(4,h), T(4,w), T(16,c), U(4,k), V(k), Pf(o)]"), "f", ""});
  EXPECT_NE(wide.c_source.find("  const long po = nc > 96 ? nc - 96 : 0;"), std::string::npos) << wide.c_source;
  EXPECT_NE(wide.c_source.find("_mm_prefetch((const char *)(O + 16), _MM_HINT_T0);"), std::string::npos);
  GeneratedKernel plain = generate_conv(
      isa, {shape, parse_config("[T(2,k), T(4,h), T(2,w), T(4,c), U(4,c), U(2,w), U(2,k), V(k)]"), "f", ""});
  EXPECT_EQ(plain.c_source.find("_MM_HINT_T0"), std::string::npos);
  EXPECT_EQ(plain.c_source.find("po"), std::string::npos);
}

// Nt(o): only the call with the last r and s streams its block (the c loop
// is the microkernel's own); a block whose taps are all in the microkernel
// streams on every call; a fence ends the function and, under P, each
// thread's loop body; none of it without Nt(o). K = 20 on 8 lanes: pixels
// 80 bytes apart, so w = 0's vector streams and w = 1's stores as before,
// and so does the K tail (stored masked).
TEST(ConvCodegenText, StreamingStoresOnTheLastVisit) {
  Isa isa = load_isa("avx2");
  const Shape shape = parse_shape("K=20,C=8,H=6,R=3");
  auto gen = [&](const char* config) { return generate_conv(isa, {shape, parse_config(config), "f", ""}).c_source; };
  const std::string outside = gen("[T(3,k), T(3,r), T(3,h), T(3,w), T(3,s), T(8,c), U(2,w), U(2,h), V(k), Nt(o)]");
  EXPECT_NE(outside.find("      const int last = r == 2 && s == 2;\n"), std::string::npos) << outside;
  EXPECT_NE(outside.find("(input, io, wp, op, 8, acc, last);"), std::string::npos);
  EXPECT_NE(outside.find("  if (last && ((__UINTPTR_TYPE__)O & 31) == 0) {\n    _mm256_stream_ps(O + 0, acc_h0_w0_k0);\n"
                         "    _mm256_storeu_ps(O + 20, acc_h0_w1_k0);\n"),
            std::string::npos);
  EXPECT_NE(outside.find("  } else {\n    _mm256_storeu_ps(O + 0, acc_h0_w0_k0);\n"), std::string::npos);
  EXPECT_NE(outside.find("    _mm256_maskstore_ps(O + 0,"), std::string::npos);  // the tail variant, both paths
  EXPECT_NE(outside.find("  _mm_sfence();  /* Nt(o) */\n}\n"), std::string::npos);
  const std::string inside = gen("[T(3,k), T(3,h), T(3,w), T(8,c), U(3,s), U(3,r), U(2,w), U(2,h), V(k), Nt(o)]");
  EXPECT_NE(inside.find("      const int last = 1;\n"), std::string::npos) << inside;
  const std::string threads = gen("[P(3,k), T(3,r), T(3,h), T(3,w), T(3,s), T(8,c), U(2,w), U(2,h), V(k), Nt(o)]");
  EXPECT_NE(threads.find("    _mm_sfence();  /* Nt(o) */\n  }\n  _mm_sfence();  /* Nt(o) */\n}\n"), std::string::npos)
      << threads;
  const std::string plain = gen("[T(3,k), T(3,r), T(3,h), T(3,w), T(3,s), T(8,c), U(2,w), U(2,h), V(k)]");
  EXPECT_EQ(plain.find("last"), std::string::npos);
  EXPECT_EQ(plain.find("stream"), std::string::npos);
  EXPECT_EQ(plain.find("sfence"), std::string::npos);
}

// K = 20 on 16 lanes: the second vector keeps 4 lanes, loaded and stored masked.
TEST(ConvCodegenText, KTailIsMasked) {
  Isa isa = load_isa("avx512");
  GeneratedKernel k = generate_conv(isa, {parse_shape("K=20,C=2,H=2,R=1"),
                                          parse_config("[T(2,h), T(2,c), U(2,w), U(2,k), V(k)]"), "f", ""});
  EXPECT_NE(k.c_source.find("_mm512_mask_storeu_ps(O + 16, (__mmask16)((1u << 4) - 1u)"), std::string::npos)
      << k.c_source;
  EXPECT_NE(k.c_source.find("_mm512_maskz_loadu_ps((__mmask16)((1u << 4) - 1u), O + 16)"), std::string::npos);
  EXPECT_NE(k.header.find("#define F_PACKED_FLOATS 64"), std::string::npos);  // Kp 32 x C 2
  EXPECT_EQ(k.c_source.find("switch"), std::string::npos);  // the one k block is always the tail
}

// The epilogue's signature and header (CONTRACT.md "Epilogues"), the `last`
// test of the loops outside the microkernel, and the K tail's masked loads of
// the biases and the residual; without an epilogue the signature is unchanged.
TEST(ConvCodegenText, EpilogueSignatureAndLastCall) {
  Isa isa = load_isa("avx512");
  const Shape shape = parse_shape("K=20,C=4,H=4,R=3,pad=1");
  const Config cfg = parse_config("[T(2,c), T(3,r), T(4,h), T(3,s), T(2,c), U(4,w), U(2,k), V(k)]");
  GeneratedKernel k = generate_conv(isa, {shape, cfg, "f", "", Epilogue::bias_add});
  const std::string sig =
      "void f(const float *restrict input, const float *restrict weights,\n    const float *restrict bias, const "
      "float *restrict residual, float *restrict output)";
  EXPECT_NE(k.c_source.find(sig + "\n{"), std::string::npos) << k.c_source;
  EXPECT_NE(k.header.find(sig + ";"), std::string::npos) << k.header;
  EXPECT_NE(k.header.find("#define F_EPILOGUE \"bias,add\""), std::string::npos);
  EXPECT_NE(k.c_source.find(" * epilogue: bias,add: output = conv + bias[k] + residual"), std::string::npos);
  EXPECT_NE(k.c_source.find("const int last = c == 2 && r == 2 && s == 2;"), std::string::npos) << k.c_source;
  EXPECT_NE(k.c_source.find("const float *qp = residual + n * 320 + h * 80 + w * 20 + k;"), std::string::npos);
  EXPECT_NE(k.c_source.find("_mm512_maskz_loadu_ps((__mmask16)((1u << 4) - 1u), B + 16)"), std::string::npos);
  EXPECT_NE(k.c_source.find("_mm512_maskz_loadu_ps((__mmask16)((1u << 4) - 1u), Q + 76)"), std::string::npos);
  EXPECT_NE(k.c_source.find("acc_h0_w0_k0 = _mm512_add_ps(acc_h0_w0_k0, b_k0);"), std::string::npos);

  // A whole filter and all channels in the microkernel: every call is the last.
  GeneratedKernel six = generate_conv(
      isa, {shape, parse_config("[T(4,h), T(4,c), U(3,s), U(3,r), U(4,w), U(2,k), V(k)]"), "f", "",
            Epilogue::bias_relu6});
  EXPECT_NE(six.c_source.find("const int last = 1;"), std::string::npos) << six.c_source;
  EXPECT_NE(six.c_source.find("const float *qp = 0;"), std::string::npos);
  EXPECT_NE(six.c_source.find("_mm512_min_ps(acc_h0_w3_k1, ct_six)"), std::string::npos);
  EXPECT_NE(six.c_source.find("const __m512 ct_six = _mm512_set1_ps(6.0f);"), std::string::npos);
  EXPECT_NE(six.header.find("residual [N][HO][WO][K] is not read: pass NULL"), std::string::npos);

  GeneratedKernel none = generate_conv(isa, {shape, cfg, "f", ""});
  EXPECT_NE(none.c_source.find("void f(const float *restrict input, const float *restrict weights,\n    float "
                               "*restrict output)\n{"),
            std::string::npos);
  EXPECT_EQ(none.c_source.find("last"), std::string::npos);
  EXPECT_NE(none.header.find("#define F_EPILOGUE \"none\""), std::string::npos);
}

// Flat(hw) (config.h): the output pixels tiled as one column, for every ISA
// this CPU runs. {K} is 4 vectors of the ISA (3 lanes short for the tail
// case); blocks of 3 and 2 pixels run across the ends of the 7-pixel output
// rows at stride 2, so their rows' input offsets differ from the contract's.
struct FlatCase {
  const char* shape;   // {K}: K
  const char* config;  // for K = 4 vectors
  Epilogue epilogue = Epilogue::none;
  int threads = 1;
};

class ConvFlat : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvFlat, EqualsReferenceEverywhereWithGuardZones) {
  Isa isa = load_isa(GetParam());
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run " << isa.name;
  const int K = 4 * isa.lanes;
  const FlatCase cases[] = {
      // Stride 1, 5x5 = 25 = 7*3 + 2*2 pixels: the input is the same column.
      {"K={K},C=6,H=5,R=1", "[Flat(hw), T(2,k), Lseq(h,[(7,3),(2,2)]), T(3,c), U(2,c), U(a,h), U(2,k), V(k)]"},
      // Stride 2, 14x14 -> 7x7 = 49 = 15*3 + 2*2 (resnet18-11's output).
      {"K={K},C=4,H=14,R=1,stride=2", "[Flat(hw), Lseq(h,[(15,3),(2,2)]), T(2,k), T(4,c), U(a,h), U(2,k), V(k)]"},
      // Stride 2 from an odd input, 15x13 -> 8x7 = 56 = 4*5 + 6*6, the Lseq inside the k loop, Pf(w).
      {"K={K},C=3,H=15,W=13,R=1,stride=2", "[Flat(hw), T(4,k), Lseq(h,[(4,5),(6,6)]), T(3,c), U(a,h), V(k), Pf(w)]"},
      // Stride 3, the K tail and a residual: 4 k vectors, the last masked; 4x5 = 20 = 10*2.
      {"K={T},C=5,H=12,W=15,R=1,stride=3", "[Flat(hw), T(2,k), T(10,h), T(5,c), U(2,h), U(2,k), V(k)]",
       Epilogue::bias_add},
      // P(2,k) on two threads above the Lseq.
      {"K={K},C=4,H=14,R=1,stride=2", "[Flat(hw), P(2,k), Lseq(h,[(15,3),(2,2)]), T(4,c), U(a,h), U(2,k), V(k)]",
       Epilogue::bias_relu, 2},
      // Pf(o) on rows read through their own offsets, the K tail and a residual.
      {"K={T},C=5,H=12,W=15,R=1,stride=3", "[Flat(hw), T(2,k), T(10,h), T(5,c), U(2,h), U(2,k), V(k), Pf(o)]",
       Epilogue::bias_add},
  };
  for (const FlatCase& c : cases) {
    if (c.threads > available_cpus()) continue;
    std::string text = c.shape;
    text.replace(text.find('{'), 3, std::to_string(text.find("{T}") != std::string::npos ? K - 3 : K));
    const Shape shape = parse_shape(text);
    const Config cfg = parse_config(c.config);
    const auto r = check_conv(isa, shape, cfg, c.epilogue, c.threads);
    const std::string& src = r.source;
    EXPECT_EQ(r.status, Status::ok) << text << " " << c.config << ": " << r.detail << "\n"
                              << src.substr(src.find("void ct_conv("), 3000);
    // Only at stride > 1 may a block's rows lie other than the contract's h*ST*IROW apart.
    EXPECT_EQ(src.find("input rows at io +") != std::string::npos, shape.stride() > 1) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, ConvFlat, ::testing::Values(std::string("avx512"), std::string("avx2")));

// A row-crossing block of 3 at stride 2 on 7-pixel rows: its variant reads the
// next output row's pixel from the input row two below, column 0.
TEST(ConvCodegenText, FlatBlocksAcrossRowsReadTheirOwnPixels) {
  Isa isa = load_isa("avx2");
  const Shape shape = parse_shape("K=16,C=4,H=14,R=1,stride=2");
  GeneratedKernel k = generate_conv(
      isa, {shape, parse_config("[Flat(hw), Lseq(h,[(15,3),(2,2)]), T(2,k), T(4,c), U(a,h), V(k)]"), "f", ""});
  // Pixel 6 is (0, 6) at input (0, 12); pixel 7 is (1, 0) at input (2, 0):
  // 2 rows of 14 pixels of 4 channels on, minus 12 pixels: (28 - 12) * 4 = 64.
  EXPECT_NE(k.c_source.find("input rows at io + 0 64 72 */"), std::string::npos) << k.c_source;
  EXPECT_NE(k.c_source.find("const long io = n * 784 + (h / 7) * 112 + (h % 7) * 8 + c;  /* Flat(hw) */"),
            std::string::npos);
  EXPECT_NE(k.c_source.find("static const unsigned char ct_fv"), std::string::npos);
  EXPECT_NE(k.header.find(" * config: [Flat(hw), Lseq(h,[(15,3),(2,2)]), T(2,k), T(4,c), U(a,h), V(k)]"),
            std::string::npos);
  EXPECT_NE(k.header.find("#define F_HO 7"), std::string::npos);  // the header keeps the layer's shape
}

// Wino(2) (config.h): Winograd F(2x2,3x3) equals the reference at every
// output element within the one output check's tolerance, with the driver's
// guard zones around the output and the packed buffer (which holds its
// scratch), for every ISA this CPU runs: padding 0..2, odd and even output
// sizes (half tiles at the bottom and right), C and K tails of both vector
// lengths, C = 3 and K = 1, batch 2, every epilogue, Lseq over the tiles;
// Wino(2,b)'s blocks across tile rows and across images.
struct WinoCase {
  const char* shape;
  Epilogue epilogue = Epilogue::none;
  bool lseq = false;  // tile the view's column with an Lseq instead of T
  int64_t block = 0;  // Wino(2,block): the fused order
  int64_t threads = 1;  // Wino(2,block,threads)
};

// [Wino(2[,b[,t]]), T(.,k), T(.,h), T(.,c), U(cu,c), U(uh,h), U(uk,k), V(k)] over wino_view(s, block).
Config wino_config(const Shape& s, int lanes, bool lseq, int64_t block = 0, int64_t threads = 1) {
  const Shape v = wino_view(s, block);
  const int64_t kv = v.padded_K(lanes) / lanes, uk = largest_divisor(kv, 2);
  const int64_t cu = largest_divisor(v.C, 2), uh = largest_divisor(v.H, 4);
  std::string h = fmt::format("T({},h)", v.H / uh), u = fmt::format("U({},h)", uh);
  if (lseq && (v.H % 2 == 1 ? v.H >= 5 : v.H >= 8)) {  // H = a1*2 + a2*3, both at least 1
    const int64_t a2 = v.H % 2 == 0 ? 2 : 1;
    h = fmt::format("Lseq(h,[({},2),({},3)])", (v.H - 3 * a2) / 2, a2);
    u = "U(a,h)";
  }
  return parse_config(fmt::format("[{}, T({},k), {}, T({},c), U({},c), {}, U({},k), V(k)]",
                                  to_string(View{View::wino, block, threads}), kv / uk, h, v.C / cu, cu, u, uk));
}

class ConvWino : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvWino, EqualsReferenceEverywhereWithGuardZones) {
  Isa isa = load_isa(GetParam());
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run " << isa.name;
  const WinoCase cases[] = {
      {"K=16,C=4,H=6,R=3,pad=1"},                                   // 3x3 tiles, every edge padded
      {"K=16,C=4,H=7,R=3,pad=0"},                                   // Ho = 5: half tiles, no padding
      {"K=32,C=8,H=7,W=9,R=3,pad=2", Epilogue::none, true},         // pad 2, Lseq over 20 tiles
      {"K=20,C=3,H=5,R=3,pad=1", Epilogue::bias_relu},              // C = 3, the K tail
      {"K=1,C=20,H=6,W=4,R=3,pad=1", Epilogue::bias_relu6},         // K = 1, the C tail of 16 and 8 lanes
      {"N=2,K=40,C=17,H=5,W=6,R=3,pad=1", Epilogue::bias_add, true}, // batch 2, tails, residual
      {"K=16,C=4,H=3,R=3,pad=0", Epilogue::bias},                   // one output: one tile, three outputs missing
      {"K=32,C=8,H=7,W=9,R=3,pad=2", Epilogue::bias_relu, true, 15}, // 5x6 tiles in blocks of 15: across a row
      {"N=2,K=40,C=17,H=5,W=6,R=3,pad=1", Epilogue::bias_add, false, 6},  // 2x9 tiles in 6s: across the images
      {"K=20,C=3,H=6,R=3,pad=1", Epilogue::none, false, 1},         // one tile a block
      {"K=32,C=8,H=7,W=9,R=3,pad=2", Epilogue::bias_relu, true, 16}, // 30 tiles: 16, then a short 14
      // Stride 2 (the polyphase transform, 5x5 patches):
      {"K=16,C=4,H=8,R=3,stride=2,pad=1"},                          // Ho = 4: 2x2 tiles, top and left padded
      {"K=16,C=4,H=9,R=3,stride=2,pad=0"},                          // Ho = 4, no padding, the last patch inside
      {"K=20,C=3,H=9,W=14,R=3,stride=2,pad=1", Epilogue::bias_relu, true},  // Ho 5 Wo 7: half tiles, Lseq, K tail
      {"N=2,K=40,C=17,H=11,W=10,R=3,stride=2,pad=2", Epilogue::bias_add, false, 8},  // pad 2, 2x12 tiles in 8s
      {"N=2,K=40,C=17,H=11,W=10,R=3,stride=2,pad=2", Epilogue::bias, false, 10},  // 10, 10, a short 4
      {"K=1,C=20,H=5,R=3,stride=2,pad=1", Epilogue::bias_relu6},    // one tile of 3 outputs, K = 1, C tail
  };
  for (const WinoCase& c : cases) {
    const Shape shape = parse_shape(c.shape);
    const Config cfg = wino_config(shape, isa.lanes, c.lseq, c.block);
    const auto r = check_conv(isa, shape, cfg, c.epilogue);
    EXPECT_EQ(r.status, Status::ok) << c.shape << " " << to_string(cfg) << ": " << r.detail;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, ConvWino, ::testing::Values(std::string("avx512"), std::string("avx2")));

// Wino(2,b,t): the threads share the blocks, each with its own scratch, on 2
// CPUs (3 threads oversubscribe them); every output equals the reference and
// the guard zones around the packed buffer (the scratch) stay untouched.
TEST(ConvWinoThreads, EqualsReferenceEverywhereOnTwoCpus) {
  Isa isa = load_isa(cpu_supports(load_isa("avx512")) ? "avx512" : "avx2");
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run " << isa.name;
  if (available_cpus() < 2) GTEST_SKIP() << "this process may use only " << available_cpus() << " CPU; it needs 2";
  const WinoCase cases[] = {
      {"K=32,C=8,H=7,W=9,R=3,pad=2", Epilogue::bias_relu, true, 15, 2},             // 2 blocks, one each
      {"N=2,K=40,C=17,H=5,W=6,R=3,pad=1", Epilogue::bias_add, false, 6, 2},         // 3 blocks: 1 and 2
      {"K=20,C=3,H=6,R=3,pad=1", Epilogue::none, false, 1, 2},                      // 9 one-tile blocks: 4 and 5
      {"N=2,K=40,C=17,H=11,W=10,R=3,stride=2,pad=2", Epilogue::bias, false, 8, 3},  // stride 2, 3 threads
      {"K=32,C=8,H=7,W=9,R=3,pad=2", Epilogue::bias_relu, false, 16, 2},            // 16, a short 14
      {"N=2,K=40,C=17,H=11,W=10,R=3,stride=2,pad=2", Epilogue::bias_add, false, 7, 2},  // 7, 7 | 7, a short 3
  };
  for (const WinoCase& c : cases) {
    const Shape shape = parse_shape(c.shape);
    const Config cfg = wino_config(shape, isa.lanes, c.lseq, c.block, c.threads);
    const auto r = check_conv(isa, shape, cfg, c.epilogue, 2);
    const std::string& src = r.source;
    EXPECT_EQ(r.status, Status::ok) << c.shape << " " << to_string(cfg) << ": " << r.detail;
    EXPECT_NE(src.find(fmt::format("#pragma omp parallel for schedule(static, 1) num_threads({})", c.threads)),
              std::string::npos) << src.substr(src.find("void ct_conv("));
  }
}

// A wrong transform is a wrong result: the check's tolerance does not hide one.
TEST(ConvWinoCheck, AWrongTransformIsAWrongResult) {
  Isa isa = load_isa("avx2");
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run avx2";
  isa.sub = isa.add;  // B^T and A^T with + for -
  const Shape shape = parse_shape("K=16,C=4,H=6,R=3,pad=1");
  const auto r = check_conv(isa, shape, wino_config(shape, isa.lanes, false));
  EXPECT_EQ(r.status, Status::wrong_result) << r.detail;
}

TEST(ConvCodegenText, WinoTransformsAndScratch) {
  Isa isa = load_isa("avx512");
  const Shape shape = parse_shape("K=20,C=3,H=5,R=3,pad=1");  // 3x3 tiles
  GeneratedKernel k = generate_conv(isa, {shape, wino_config(shape, isa.lanes, false), "f", "", Epilogue::bias});
  // 16 * Kp * C weights, then 16 tiles' worth of [9][C] and [9][K] scratch.
  EXPECT_EQ(k.packed_floats, 16 * 32 * 3 + 16 * 9 * (3 + 20));
  EXPECT_NE(k.c_source.find("static void f_gemm(const float *restrict input"), std::string::npos);
  // The scratch is written through weights: no restrict on it in the definition (the prototype keeps it).
  EXPECT_NE(k.c_source.find("void f(const float *restrict input, const float *weights,\n"), std::string::npos);
  EXPECT_NE(k.header.find("void f(const float *restrict input, const float *restrict weights,\n"), std::string::npos);
  EXPECT_NE(k.c_source.find("for (long p = 0; p < 16; ++p) f_gemm(v + p * 27, weights + p * 96, m + p * 180);"),
            std::string::npos) << k.c_source;
  EXPECT_NE(k.c_source.find("_mm512_sub_ps(d00, d20)"), std::string::npos);  // B^T's first row
  EXPECT_NE(k.c_source.find("ry[0] && rx[0] ?"), std::string::npos);          // border patches read no padding
  EXPECT_NE(k.c_source.find("if (oky && okx) "), std::string::npos);         // half tiles store what exists
  EXPECT_NE(k.header.find("a packed buffer each"), std::string::npos) << k.header;
  EXPECT_NE(k.header.find("Winograd F(2x2,3x3)"), std::string::npos);
  EXPECT_EQ(k.c_source.find("last"), std::string::npos);  // the GEMMs have no epilogue: the output transform has it
  EXPECT_NE(k.c_source.find("for (long t0 = 0; t0 < 9; t0 += 9) {"), std::string::npos);  // one block
  // Wino(2,b): the scratch is a block's, and the entry runs the blocks in turn.
  const Shape two = parse_shape("N=2,K=20,C=3,H=5,R=3,pad=1");  // 2 x 9 tiles
  GeneratedKernel f = generate_conv(isa, {two, wino_config(two, isa.lanes, false, 6), "f", ""});
  EXPECT_EQ(f.packed_floats, 16 * 32 * 3 + 16 * 6 * (3 + 20));
  EXPECT_NE(f.c_source.find("for (long t0 = 0; t0 < 18; t0 += 6) {"), std::string::npos) << f.c_source;
  EXPECT_NE(f.c_source.find("f_gemm(v + p * 18, weights + p * 96, m + p * 120);"), std::string::npos);
  EXPECT_NE(f.header.find("[16][6][C] and [16][6][K], 6 tiles a block"), std::string::npos) << f.header;
  // Wino(2,b,t): a scratch per thread, thread q's share of the 3 blocks.
  GeneratedKernel t = generate_conv(isa, {two, wino_config(two, isa.lanes, false, 6, 2), "f", ""});
  EXPECT_EQ(t.threads, 2);
  EXPECT_EQ(t.cflags, std::vector<std::string>{"-fopenmp"});
  EXPECT_EQ(t.packed_floats, 16 * 32 * 3 + 2 * 16 * 6 * (3 + 20));
  EXPECT_NE(t.c_source.find("float *v = (float *)(weights + 1536) + q * 2208;"), std::string::npos) << t.c_source;
  EXPECT_NE(t.c_source.find("for (long t0 = q * 3 / 2 * 6; t0 < (q + 1) * 3 / 2 * 6; t0 += 6) {"), std::string::npos);
  EXPECT_NE(t.header.find("Threads: 2, fixed by Wino(2,b,2)"), std::string::npos) << t.header;
  EXPECT_NE(t.header.find("6 tiles a block, once per thread (2)"), std::string::npos) << t.header;
  EXPECT_EQ(t.c_source.find("short last block"), std::string::npos);  // 6 divides 18
  // A block that does not divide the tiles: 7, 7 and a short 4, whose GEMMs run 7 rows; the
  // transforms stop at the last tile (ConvWino runs such kernels).
  GeneratedKernel s = generate_conv(isa, {two, wino_config(two, isa.lanes, false, 7, 2), "f", ""});
  EXPECT_NE(s.c_source.find("for (long t0 = q * 3 / 2 * 7; t0 < (q + 1) * 3 / 2 * 7; t0 += 7) {"), std::string::npos);
  const std::string stop = "    if (t0 + t >= 18) break;  /* the short last block */\n";
  const size_t first = s.c_source.find(stop);
  ASSERT_NE(first, std::string::npos) << s.c_source;
  EXPECT_NE(s.c_source.find(stop, first + 1), std::string::npos);  // in both transforms
  EXPECT_EQ(s.packed_floats, 16 * 32 * 3 + 2 * 16 * 7 * (3 + 20));
  // Stride 2: 25 GEMMs over 5x5 patches whose tiles start 4 inputs apart.
  const Shape s2 = parse_shape("K=20,C=3,H=8,R=3,stride=2,pad=1");  // Ho = 4: 2x2 tiles
  GeneratedKernel p = generate_conv(isa, {s2, wino_config(s2, isa.lanes, false), "f", ""});
  EXPECT_EQ(p.packed_floats, 25 * 32 * 3 + 25 * 4 * (3 + 20));
  EXPECT_NE(p.c_source.find("for (long p = 0; p < 25; ++p) f_gemm(v + p * 12, weights + p * 96, m + p * 80);"),
            std::string::npos) << p.c_source;
  EXPECT_NE(p.c_source.find("const long y0 = 4 * ty - 1, x0 = 4 * tx - 1;"), std::string::npos);
  EXPECT_NE(p.c_source.find("int ry[5], rx[5]"), std::string::npos);
  EXPECT_NE(p.c_source.find("_mm512_sub_ps(d40, d20)"), std::string::npos);  // B^T's third row: x4 - x2
  EXPECT_NE(p.header.find("Winograd F(2x2,3x3) stride 2"), std::string::npos) << p.header;
}

TEST(ConvCodegenText, InvalidConfigIsRejected) {
  Isa isa = load_isa("avx512");
  Shape shape = parse_shape("K=32,C=8,H=6,R=1");
  EXPECT_THROW(generate_conv(isa, {shape, parse_config("[T(3,h), T(6,w), T(8,c), U(2,k), V(k)]"), "f", ""}),
               Error);
}

}  // namespace
}  // namespace convtune::codegen_test
