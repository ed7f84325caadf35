// A machine's identity for records (machine_id.h).
#include "convtune/core/machine_id.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/core/json_fields.h"

namespace convtune {

const std::vector<std::string>& relevant_isa_flags() {
  static const std::vector<std::string> flags = [] {
    std::set<std::string> s = {"avx", "avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl", "asimd", "sve"};
    for (const auto& name : known_isas())
      for (const auto& f : load_isa(name).cpu_flags) s.insert(f);
    return std::vector<std::string>(s.begin(), s.end());
  }();
  return flags;
}

std::string machine_key(const std::string& cpu_model, std::vector<std::string> isa_flags, int cores) {
  std::sort(isa_flags.begin(), isa_flags.end());
  const std::string text = fmt::format("{}\n{}\n{}", cpu_model, fmt::join(isa_flags, ","), cores);
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64: defined bit for bit, unlike std::hash
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h).substr(0, 12);
}

MachineId machine_id(const MachineInfo& m) {
  MachineId id;
  id.cpu_model = m.cpu_model;
  const auto& relevant = relevant_isa_flags();
  for (const auto& f : m.isa_flags)
    if (std::find(relevant.begin(), relevant.end(), f) != relevant.end()) id.isa_flags.push_back(f);
  std::sort(id.isa_flags.begin(), id.isa_flags.end());
  id.cores = m.cores;
  id.key = machine_key(id.cpu_model, id.isa_flags, id.cores);
  return id;
}

std::string MachineId::describe() const {
  if (!known()) return "unknown machine";
  const std::string flags = isa_flags.empty() ? "no vector ISA" : fmt::format("{}", fmt::join(isa_flags, " "));
  return fmt::format("{} ({}; {}; {} CPUs)", key, cpu_model, flags, cores);
}

nlohmann::json MachineId::to_json() const {
  return {{"key", key}, {"cpu_model", cpu_model}, {"isa_flags", isa_flags}, {"cores", cores}};
}

MachineId MachineId::from_json(const nlohmann::json& j) {
  using namespace json_field;  // NOLINT: the typed readers
  if (!j.is_object()) throw Error(fmt::format("key 'machine' is {}, not an object", json_field::describe(j)));
  try {
    MachineId id;
    id.key = text(j, "key", true);
    // The key names a directory of a merged store: plain hex only.
    if (id.key.size() < 4 || id.key.size() > 64 ||
        id.key.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw Error(fmt::format("key 'key' is '{}', not 4 to 64 lowercase hex digits", id.key));
    id.cpu_model = text(j, "cpu_model", true);
    id.isa_flags = array_of<std::string>(j, "isa_flags", &nlohmann::json::is_string, "strings");
    const nlohmann::json* c = counter(j, "cores");
    if (!c) throw Error("key 'cores' is missing");
    if (*c < 1 || *c > 1 << 20) throw Error(fmt::format("key 'cores' is {}; it must be in [1, 1048576]", c->dump()));
    id.cores = c->get<int>();
    return id;
  } catch (const Error& e) {
    throw Error(fmt::format("in key 'machine': {}", e.what()));
  }
}

}  // namespace convtune
