// More ISAs from the same generator (issue 6): AVX2's space scaled to 16
// registers, NEON's as in 000 §4.1, the ISA descriptions' keys, the default
// --arch. (Generated AVX2 convolutions against the reference:
// tests/codegen/codegen_test.cpp ConvAvx2.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <optional>

#include "convtune/core/embedded_data.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/ukernel/ukernel.h"
#include "test_util.h"

namespace convtune::isa_test {
namespace {

TEST(IsaSpace, Avx2ScaledTo16Registers) {
  Isa isa = load_isa("avx2");
  EXPECT_EQ(isa.lanes, 8);
  EXPECT_EQ(isa.vector_registers, 16);
  auto all = enumerate_ukernels(isa, "paper");
  EXPECT_EQ(all.size(), 500u);  // 7 <= w*h*k <= 14, 8 <= total <= 18 (CONTRACT.md)
  for (const auto& u : all) {
    EXPECT_GE(u.out_regs(), 7);
    EXPECT_LE(u.out_regs(), 14);
    EXPECT_GE(u.out_regs() + u.weight_regs(), 8);
    EXPECT_LE(u.out_regs() + u.weight_regs(), 18);
  }
  EXPECT_TRUE(ukernel_admitted(isa, UkSizes{2, 1, 6, 1, 1, 1}));    // BLIS's AVX2 6x16 sgemm kernel
  EXPECT_FALSE(ukernel_admitted(isa, UkSizes{2, 1, 12, 1, 1, 1}));  // 24 accumulators would spill
  EXPECT_FALSE(ukernel_admitted(isa, UkSizes{1, 1, 3, 1, 3, 3}));   // 3 accumulators: too little ILP
  // The taps family: 14 accumulators + 1 weight vector + 1 broadcast = 16 registers.
  EXPECT_EQ(ukernel_family(isa, UkSizes{1, 1, 14, 1, 3, 3}), "taps");
  // 14 + 2 + 1 = 17 registers: admitted because the emitted code re-reads one
  // weight vector at each use (reread_weights 1).
  EXPECT_EQ(ukernel_family(isa, UkSizes{2, 1, 7, 1, 3, 3}), "taps");
  EXPECT_EQ(ukernel_family(isa, UkSizes{3, 1, 4, 1, 3, 3}), "taps");  // 12 + 3 + 1 = 16
  EXPECT_EQ(ukernel_family(isa, UkSizes{3, 1, 2, 2, 3, 3}), "taps");
  EXPECT_EQ(ukernel_family(isa, UkSizes{6, 1, 2, 1, 3, 3}), "");  // 12 + (6 - 1) + 1 = 18
  EXPECT_EQ(ukernel_family(isa, UkSizes{2, 1, 7, 2, 3, 3}), "");  // 28 accumulators
}

TEST(IsaSpace, TapsSpaceIsData) {
  for (const auto& name : known_isas()) {
    Isa isa = load_isa(name);
    EXPECT_EQ(isa.taps.out_min, isa.space.out_min) << name;  // accumulators bounded as in the paper family
    EXPECT_EQ(isa.taps.out_max, isa.space.out_max) << name;
    EXPECT_EQ(isa.taps.filters, (std::vector<int>{3, 5, 7})) << name;
    EXPECT_EQ(isa.taps.c_values, (std::vector<int>{1, 2, 4})) << name;
    EXPECT_EQ(isa.taps.max_taps, 36) << name;
    EXPECT_EQ(isa.taps.max_unroll, 16) << name;
    EXPECT_EQ(isa.taps.broadcast_registers, name == "avx512" ? 0 : 1) << name;  // {1to16} memory operands
    EXPECT_EQ(isa.taps.reread_weights, name == "avx2" ? 1 : 0) << name;        // x86 FMA memory operands, 16 registers
  }
}

// A missing or bad key of taps_space is one line naming it with its block.
TEST(IsaSpace, BadTapsSpaceNamesTheKey) {
  auto err = [](const std::function<void(nlohmann::json&)>& edit) { return test::edited_isa_error("avx512", edit); };
  EXPECT_EQ(err([](auto&) {}), "no error");
  EXPECT_EQ(err([](auto& j) { j.erase("taps_space"); }), "ISA description x.json: key 'taps_space' is missing");
  EXPECT_EQ(err([](auto& j) { j["taps_space"] = 3; }), "ISA description x.json: key 'taps_space' has the wrong type");
  EXPECT_EQ(err([](auto& j) { j["taps_space"].erase("max_taps"); }),
            "ISA description x.json: key 'taps_space.max_taps' is missing");
  EXPECT_EQ(err([](auto& j) { j["taps_space"]["filters"] = "3x3"; }),
            "ISA description x.json: key 'taps_space.filters' has the wrong type");
  EXPECT_EQ(err([](auto& j) { j["taps_space"]["c_values"] = {1, 0}; }),
            "ISA description x.json: key 'taps_space.c_values' takes integers of at least 1");
  EXPECT_EQ(err([](auto& j) { j["taps_space"]["max_unroll"] = 0; }),
            "ISA description x.json: key 'taps_space.max_unroll' takes integers of at least 1");
  EXPECT_EQ(err([](auto& j) { j["taps_space"]["broadcast_registers"] = 2; }),
            "ISA description x.json: key 'taps_space.broadcast_registers' takes 0 or 1");
  EXPECT_EQ(err([](auto& j) { j["taps_space"].erase("broadcast_registers"); }),
            "ISA description x.json: key 'taps_space.broadcast_registers' is missing");
  EXPECT_EQ(err([](auto& j) { j["taps_space"]["reread_weights"] = -1; }),
            "ISA description x.json: key 'taps_space.reread_weights' takes an integer of at least 0");
  EXPECT_EQ(err([](auto& j) { j["taps_space"].erase("reread_weights"); }),
            "ISA description x.json: key 'taps_space.reread_weights' is missing");
  EXPECT_EQ(err([](auto& j) { j["taps_space"]["output_regs"] = {28, 14}; }),
            "ISA description x.json: key 'taps_space.output_regs' takes [min, max] with 1 <= min <= max");
}

// The epilogue operations are data too (issue 13): a missing one is named.
TEST(IsaSpace, EpilogueOperationsAreData) {
  for (const auto& name : known_isas()) {
    Isa isa = load_isa(name);
    for (const std::string* op : {&isa.add, &isa.max, &isa.min}) {
      EXPECT_NE(op->find("{a}"), std::string::npos) << name;
      EXPECT_NE(op->find("{b}"), std::string::npos) << name;
    }
  }
  nlohmann::json j = nlohmann::json::parse(embedded_file("microkernels/isa/avx2.json"));
  j["epilogue"].erase("min");
  EXPECT_EQ(test::error_of([&] { parse_isa(j.dump(), "x.json"); }),
            "ISA description x.json: key 'epilogue.min' is missing");
  j.erase("epilogue");
  EXPECT_EQ(test::error_of([&] { parse_isa(j.dump(), "x.json"); }), "ISA description x.json: key 'epilogue' is missing");
}

// Wino(2)'s transforms take the ISA's sub (and add): data like the rest.
TEST(IsaSpace, WinogradSubIsData) {
  for (const auto& name : known_isas()) {
    const Isa isa = load_isa(name);
    EXPECT_NE(isa.sub.find("{a}"), std::string::npos) << name;
    EXPECT_NE(isa.sub.find("{b}"), std::string::npos) << name;
  }
  EXPECT_EQ(load_isa("avx512").sub, "_mm512_sub_ps({a}, {b})");
  nlohmann::json j = nlohmann::json::parse(embedded_file("microkernels/isa/avx2.json"));
  j["winograd"].erase("sub");
  EXPECT_EQ(test::error_of([&] { parse_isa(j.dump(), "x.json"); }),
            "ISA description x.json: key 'winograd.sub' is missing");
  j["winograd"] = 1;
  EXPECT_EQ(test::error_of([&] { parse_isa(j.dump(), "x.json"); }),
            "ISA description x.json: key 'winograd' has the wrong type");
}

// Nt(o)'s stores and fence are data too: each ISA's store takes {ptr} and
// {val}, aligned to a power of two no wider than a vector; a missing or bad
// key is named.
TEST(IsaSpace, StreamStoresAreData) {
  for (const auto& name : known_isas()) {
    Isa isa = load_isa(name);
    EXPECT_NE(isa.store_stream.find("{ptr}"), std::string::npos) << name;
    EXPECT_NE(isa.store_stream.find("{val}"), std::string::npos) << name;
    EXPECT_EQ(isa.stream_align & (isa.stream_align - 1), 0) << name;
    EXPECT_LE(isa.stream_align, isa.lanes * 4) << name;
  }
  EXPECT_EQ(load_isa("avx512").stream_fence, "_mm_sfence()");
  EXPECT_EQ(load_isa("neon").stream_fence, "");
  nlohmann::json j = nlohmann::json::parse(embedded_file("microkernels/isa/avx2.json"));
  j["stream"]["align_bytes"] = 48;
  EXPECT_EQ(test::error_of([&] { parse_isa(j.dump(), "x.json"); }),
            "ISA description x.json: key 'stream.align_bytes' must be a power of two, at least 4");
  j["stream"]["align_bytes"] = 32;
  j["stream"].erase("fence");
  EXPECT_EQ(test::error_of([&] { parse_isa(j.dump(), "x.json"); }),
            "ISA description x.json: key 'stream.fence' is missing");
  j["stream"] = "x";
  EXPECT_EQ(test::error_of([&] { parse_isa(j.dump(), "x.json"); }),
            "ISA description x.json: key 'stream' has the wrong type");
  j.erase("stream");
  EXPECT_EQ(test::error_of([&] { parse_isa(j.dump(), "x.json"); }), "ISA description x.json: key 'stream' is missing");
}

TEST(IsaSpace, NeonHasTheBoundsOf32Registers) {
  Isa neon = load_isa("neon");
  EXPECT_EQ(neon.lanes, 4);
  EXPECT_EQ(neon.vector_registers, 32);
  // The paper family is the same; taps lose AVX-512's five full-file triples
  // (NEON's input element needs a register, broadcast_registers 1).
  EXPECT_EQ(enumerate_ukernels(neon, "paper"), enumerate_ukernels(load_isa("avx512"), "paper"));
  std::vector<UkSizes> taps512 = enumerate_ukernels(load_isa("avx512"), "taps"), only512;
  for (const UkSizes& u : taps512)
    if (!family_admits(neon, "taps", u)) only512.push_back(u);
  EXPECT_EQ(only512.size(), 25u);
  for (const UkSizes& u : only512) EXPECT_EQ(u.out_regs() + u.k, 32) << sizes_text(u);
  EXPECT_EQ(enumerate_ukernels(neon, "taps").size(), taps512.size() - 25);
  EXPECT_EQ(Isa::expand(neon.fma, {{"a", "x"}, {"b", "w"}, {"acc", "o"}}), "vfmaq_f32(o, x, w)");
  EXPECT_EQ(neon.arch, "aarch64");
  EXPECT_EQ(neon.emulation.qemu, "qemu-aarch64");
}

TEST(Isa, DefaultIsTheBestThisCpuRuns) {
  const std::string best = best_isa();
  EXPECT_TRUE(cpu_supports(load_isa(best)));
  for (const auto& n : known_isas()) {
    if (n == best) break;
    EXPECT_FALSE(cpu_supports(load_isa(n))) << n << " is better than " << best << " and supported";
  }
  for (const auto& n : known_isas())  // another architecture's ISA never runs natively
    if (load_isa(n).arch != host_arch()) EXPECT_FALSE(cpu_supports(load_isa(n))) << n;
}

TEST(Isa, CommandsSayWhichArchTheyChose) {
  auto r = test::run_cli("table");
  EXPECT_EQ(r.err.rfind("convtune: --arch not given; using " + best_isa() + ", the best ISA this CPU supports\n", 0),
            0u)
      << r.err;
}

// CONVTUNE_MAX_CPU_ISA=avx2 makes this host look AVX2-only, as the AVX2-only
// CI run relies on; the previous value (that run's) is restored after.
class MaxCpuIsa : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = std::getenv("CONVTUNE_MAX_CPU_ISA")) saved_ = v;
    ::unsetenv("CONVTUNE_MAX_CPU_ISA");
    if (!cpu_supports(load_isa("avx2"))) GTEST_SKIP() << "this CPU has no AVX2: nothing to cap";
  }
  void TearDown() override {
    if (saved_) ::setenv("CONVTUNE_MAX_CPU_ISA", saved_->c_str(), 1);
    else ::unsetenv("CONVTUNE_MAX_CPU_ISA");
  }
  std::optional<std::string> saved_;
};

TEST_F(MaxCpuIsa, Avx2HidesAvx512) {
  ::setenv("CONVTUNE_MAX_CPU_ISA", "avx2", 1);
  EXPECT_EQ(max_cpu_isa(), "avx2");
  EXPECT_FALSE(cpu_supports(load_isa("avx512")));
  EXPECT_TRUE(cpu_supports(load_isa("avx2")));
  EXPECT_EQ(best_isa(), "avx2");
  for (const char* f : {"avx512f", "avx512bw", "avx512_vnni"}) EXPECT_TRUE(cpu_flag_hidden(f)) << f;
  for (const char* f : {"avx2", "fma", "avx", "sse4_2"}) EXPECT_FALSE(cpu_flag_hidden(f)) << f;
  // The machine fingerprint loses them too: the shipped tables look foreign.
  for (const auto& f : detect_machine().isa_flags) EXPECT_EQ(f.rfind("avx512", 0), std::string::npos) << f;
  auto r = test::run_cli("table");  // the environment reaches the CLI
  EXPECT_EQ(r.err.rfind("convtune: --arch not given; using avx2, the best ISA this CPU supports\n", 0), 0u) << r.err;
}

TEST_F(MaxCpuIsa, UnsetOrBestChangesNothing) {
  const std::string best = best_isa();
  ::setenv("CONVTUNE_MAX_CPU_ISA", known_isas().front().c_str(), 1);
  EXPECT_EQ(best_isa(), best);
  EXPECT_FALSE(cpu_flag_hidden("avx512f"));
  ::setenv("CONVTUNE_MAX_CPU_ISA", "", 1);
  EXPECT_EQ(max_cpu_isa(), "");
  EXPECT_EQ(best_isa(), best);
}

TEST_F(MaxCpuIsa, UnknownNameIsAnError) {
  ::setenv("CONVTUNE_MAX_CPU_ISA", "avx1024", 1);
  EXPECT_EQ(test::error_of([] { best_isa(); }),
            "CONVTUNE_MAX_CPU_ISA='avx1024' is not an ISA; set it to one of avx512, avx2, neon or unset it");
  auto r = test::run_cli("table");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: CONVTUNE_MAX_CPU_ISA='avx1024' is not an ISA; set it to one of avx512, avx2, "
                   "neon or unset it\n");
}

}  // namespace
}  // namespace convtune::isa_test
