// A machine's identity in records: derived only from the model, the ISA
// flags convtune's code depends on and the core count; stable bit for bit.
#include "convtune/core/machine_id.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "test_util.h"

namespace convtune::machine_id_test {
namespace {

TEST(MachineId, KeyIsFnv1aOfModelFlagsAndCores) {
  // Computed independently (FNV-1a 64 of "model\nflags\ncores", first 12 hex digits).
  EXPECT_EQ(machine_key("Intel(R) Xeon(R) Processor", {"avx2", "avx512f", "fma"}, 20), "500de9d6ceda");
  EXPECT_EQ(machine_key("Intel(R) Xeon(R) Processor", {"fma", "avx512f", "avx2"}, 20), "500de9d6ceda");
  EXPECT_EQ(machine_key("AMD EPYC 9654 96-Core Processor", {"avx", "avx2", "fma"}, 2), "a3027dbe07de");
  EXPECT_NE(machine_key("Intel(R) Xeon(R) Processor", {"avx2", "avx512f", "fma"}, 2), "500de9d6ceda");
  EXPECT_NE(machine_key("Intel(R) Xeon(R) Processor", {"avx2", "fma"}, 20), "500de9d6ceda");
}

TEST(MachineId, OnlyFlagsThatDecideTheCodeCount) {
  MachineInfo m;
  m.cpu_model = "Intel(R) Xeon(R) Processor";
  m.isa_flags = {"sse2", "fma", "avx512_fp16", "avx512f", "avx2", "avx512vl", "f16c"};
  m.cores = 20;
  MachineId id = machine_id(m);
  EXPECT_EQ(id.isa_flags, (std::vector<std::string>{"avx2", "avx512f", "avx512vl", "fma"}));
  EXPECT_EQ(id.cores, 20);
  // A kernel that prints one more AVX-512 extension: the same machine.
  m.isa_flags.push_back("avx512_bf16");
  EXPECT_EQ(machine_id(m).key, id.key);
  m.isa_flags = {"sse2", "fma", "avx2"};  // AVX-512 hidden (CONVTUNE_MAX_CPU_ISA=avx2): another machine
  EXPECT_NE(machine_id(m).key, id.key);
  EXPECT_EQ(id.describe(), id.key + " (Intel(R) Xeon(R) Processor; avx2 avx512f avx512vl fma; 20 CPUs)");
  EXPECT_EQ(MachineId{}.describe(), "unknown machine");
}

TEST(MachineId, ThisMachineIsKnown) {
  const MachineInfo m = detect_machine();
  const MachineId id = machine_id(m);
  EXPECT_EQ(id.key.size(), 12u);
  EXPECT_EQ(id.cpu_model, m.cpu_model);
  EXPECT_EQ(id.cores, m.cores);
  for (const auto& f : id.isa_flags)
    EXPECT_NE(std::find(m.isa_flags.begin(), m.isa_flags.end(), f), m.isa_flags.end()) << f;
  EXPECT_EQ(machine_id(detect_machine()).key, id.key);
}

TEST(MachineId, JsonRoundTripAndBadInput) {
  MachineInfo m;
  m.cpu_model = "X";
  m.isa_flags = {"avx2", "fma"};
  m.cores = 4;
  const MachineId id = machine_id(m);
  const MachineId back = MachineId::from_json(id.to_json());
  EXPECT_EQ(back.to_json(), id.to_json());
  auto bad = [&](const std::string& key, const nlohmann::json& value) {
    nlohmann::json j = id.to_json();
    if (value.is_discarded())
      j.erase(key);
    else
      j[key] = value;
    return test::error_of([&] { MachineId::from_json(j); });
  };
  EXPECT_EQ(bad("key", "../etc"), "in key 'machine': key 'key' is '../etc', not 4 to 64 lowercase hex digits");
  EXPECT_EQ(bad("key", nlohmann::json::value_t::discarded), "in key 'machine': key 'key' is missing");
  EXPECT_EQ(bad("cores", 0), "in key 'machine': key 'cores' is 0; it must be in [1, 1048576]");
  EXPECT_EQ(bad("cores", "2"), "in key 'machine': key 'cores' is a string, not an integer");
  EXPECT_EQ(bad("isa_flags", nlohmann::json::array({1})),
            "in key 'machine': key 'isa_flags' holds number, not only strings");
  EXPECT_EQ(test::error_of([] { MachineId::from_json(nlohmann::json::array()); }),
            "key 'machine' is an array, not an object");
}

}  // namespace
}  // namespace convtune::machine_id_test
