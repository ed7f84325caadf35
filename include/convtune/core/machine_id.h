#pragma once
// Which machine measured a record: CPU model, the ISA flags convtune's code
// depends on, the core count, and a short stable key derived from them, so
// that logs from many machines can be merged and told apart (merge.h).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "convtune/core/machine.h"

namespace convtune {

struct MachineId {
  std::string key;                     // 12 hex digits; "" = unknown (records written before machines were named)
  std::string cpu_model;
  std::vector<std::string> isa_flags;  // sorted, only those relevant_isa_flags() names
  int cores = 0;                       // online logical CPUs of the whole machine

  bool known() const { return !key.empty(); }
  /// "3f2a9c01b7de (Intel(R) Xeon(R) Processor; avx2 avx512f fma; 20 CPUs)", or "unknown machine".
  std::string describe() const;
  /// {"key", "cpu_model", "isa_flags", "cores"}; only for a known machine.
  nlohmann::json to_json() const;
  /// Throws Error naming the key that is missing or wrong ("key 'cores' is ...").
  static MachineId from_json(const nlohmann::json& j);
};

/// The CPU flags that decide which of convtune's ISAs run and how wide their
/// vectors are: avx, avx2, fma, avx512f/bw/dq/vl, asimd, sve, and every flag an
/// ISA description requires. Other flags (a newer kernel printing one more
/// AVX-512 extension) must not make the same machine look different.
const std::vector<std::string>& relevant_isa_flags();

/// The identity of a machine as detect_machine() describes it; the flags
/// hidden by CONVTUNE_MAX_CPU_ISA stay hidden.
MachineId machine_id(const MachineInfo& m);

/// The key: FNV-1a 64 of "model\nflag,flag,...\ncores" (flags sorted), its
/// first 12 hex digits. Stable across runs, compilers and convtune builds.
std::string machine_key(const std::string& cpu_model, std::vector<std::string> isa_flags, int cores);

}  // namespace convtune
