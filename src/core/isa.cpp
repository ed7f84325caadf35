// ISA descriptions are JSON data (microkernels/isa/<name>.json), embedded in
// the binary; adding an ISA is a new file, not new generator code.
#include "convtune/core/isa.h"

#include <sys/utsname.h>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/core/embedded_data.h"
#include "convtune/core/error.h"

namespace convtune {

namespace {

// Best first: best_isa() takes the first one this CPU runs.
const char* const kIsaNames[] = {"avx512", "avx2", "neon"};

// `prefix` names the enclosing block in messages ("taps_space."), where a
// key's name alone would be ambiguous.
template <typename T>
T get(const nlohmann::json& j, const char* key, const std::string& origin, const std::string& prefix = "") {
  if (!j.contains(key))
    throw Error(fmt::format("ISA description {}: key '{}{}' is missing", origin, prefix, key));
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(fmt::format("ISA description {}: key '{}{}' has the wrong type", origin, prefix, key));
  }
}

// A family's block of bounds ("taps_space"), an object.
nlohmann::json get_block(const nlohmann::json& j, const char* key, const std::string& origin) {
  auto b = get<nlohmann::json>(j, key, origin);
  if (!b.is_object()) throw Error(fmt::format("ISA description {}: key '{}' has the wrong type", origin, key));
  return b;
}

// The bounds' value kinds: sizes (at least 1, one or a list), flags (0 or 1),
// counts (at least 0) and an accumulator range [min, max] of sizes.
std::vector<int> get_sizes(const nlohmann::json& j, const char* key, const std::string& origin, const std::string& p) {
  auto v = get<std::vector<int>>(j, key, origin, p);
  for (int x : v)
    if (x < 1) throw Error(fmt::format("ISA description {}: key '{}{}' takes integers of at least 1", origin, p, key));
  return v;
}

int get_size(const nlohmann::json& j, const char* key, const std::string& origin, const std::string& p) {
  const int x = get<int>(j, key, origin, p);
  if (x < 1) throw Error(fmt::format("ISA description {}: key '{}{}' takes integers of at least 1", origin, p, key));
  return x;
}

int get_flag(const nlohmann::json& j, const char* key, const std::string& origin, const std::string& p) {
  const int x = get<int>(j, key, origin, p);
  if (x < 0 || x > 1) throw Error(fmt::format("ISA description {}: key '{}{}' takes 0 or 1", origin, p, key));
  return x;
}

int get_count(const nlohmann::json& j, const char* key, const std::string& origin, const std::string& p) {
  const int x = get<int>(j, key, origin, p);
  if (x < 0)
    throw Error(fmt::format("ISA description {}: key '{}{}' takes an integer of at least 0", origin, p, key));
  return x;
}

std::pair<int, int> get_range(const nlohmann::json& j, const char* key, const std::string& origin,
                              const std::string& p) {
  auto v = get<std::vector<int>>(j, key, origin, p);
  if (v.size() != 2 || v[0] < 1 || v[0] > v[1])
    throw Error(fmt::format("ISA description {}: key '{}{}' takes [min, max] with 1 <= min <= max", origin, p, key));
  return {v[0], v[1]};
}

// The taps family's bounds (IsaTapsSpace); every number but broadcast_registers and reread_weights is a size, so at least 1.
IsaTapsSpace parse_taps_space(const nlohmann::json& j, const std::string& origin) {
  const std::string p = "taps_space.";
  const auto tp = get_block(j, "taps_space", origin);
  IsaTapsSpace t;
  std::tie(t.out_min, t.out_max) = get_range(tp, "output_regs", origin, p);
  t.filters = get_sizes(tp, "filters", origin, p);
  t.c_values = get_sizes(tp, "c_values", origin, p);
  t.max_taps = get_size(tp, "max_taps", origin, p);
  t.max_unroll = get_size(tp, "max_unroll", origin, p);
  t.broadcast_registers = get_flag(tp, "broadcast_registers", origin, p);
  t.reread_weights = get_count(tp, "reread_weights", origin, p);
  return t;
}

// The depthwise family's bounds (IsaDepthwiseSpace), read as the taps family's are.
IsaDepthwiseSpace parse_depthwise_space(const nlohmann::json& j, const std::string& origin) {
  const std::string p = "depthwise_space.";
  const auto dp = get_block(j, "depthwise_space", origin);
  IsaDepthwiseSpace d;
  std::tie(d.out_min, d.out_max) = get_range(dp, "output_regs", origin, p);
  d.rs_values = get_sizes(dp, "rs_values", origin, p);
  d.max_unroll = get_size(dp, "max_unroll", origin, p);
  d.input_registers = get_flag(dp, "input_registers", origin, p);
  d.reread_weights = get_count(dp, "reread_weights", origin, p);
  return d;
}

std::set<std::string> cpuinfo_flags_uncapped() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(f, line)) {
    // x86: "flags : ..."; AArch64: "Features : ..."
    if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) {
      std::istringstream ss(line.substr(line.find(':') + 1));
      std::string w;
      while (ss >> w) flags.insert(w);
      break;
    }
  }
#if defined(__aarch64__)
  if (getauxval(AT_HWCAP) & HWCAP_ASIMD) flags.insert("asimd");  // even without /proc
#endif
  return flags;
}

// The host's flags as the cap leaves them.
std::set<std::string> cpuinfo_flags() {
  std::set<std::string> flags = cpuinfo_flags_uncapped();
  for (auto it = flags.begin(); it != flags.end();) it = cpu_flag_hidden(*it) ? flags.erase(it) : std::next(it);
  return flags;
}

}  // namespace

std::string max_cpu_isa() {
  const char* env = std::getenv("CONVTUNE_MAX_CPU_ISA");
  if (!env || !*env) return "";
  const auto names = known_isas();
  if (std::find(names.begin(), names.end(), env) == names.end())
    throw Error(fmt::format("CONVTUNE_MAX_CPU_ISA='{}' is not an ISA; set it to one of {} or unset it", env,
                            fmt::join(names, ", ")));
  return env;
}

bool cpu_flag_hidden(const std::string& flag) {
  const std::string cap = max_cpu_isa();
  if (cap.empty()) return false;
  // Each ISA's name and flags, best first (embedded data: read once).
  static const auto isas = [] {
    std::vector<std::pair<std::string, std::vector<std::string>>> v;
    for (const auto& n : known_isas()) v.emplace_back(n, load_isa(n).cpu_flags);
    return v;
  }();
  auto at = isas.begin();
  while (at->first != cap) ++at;
  auto needs = [&](const std::vector<std::string>& fl) { return std::find(fl.begin(), fl.end(), flag) != fl.end(); };
  // What the cap ISA and the ones below it need stays visible (avx2 needs fma too).
  for (auto i = at; i != isas.end(); ++i)
    if (needs(i->second)) return false;
  for (auto i = isas.begin(); i != at; ++i)
    if (flag.rfind(i->first, 0) == 0 || needs(i->second)) return true;
  return false;
}

std::string Isa::expand(const std::string& tmpl,
                        const std::vector<std::pair<std::string, std::string>>& args) {
  std::string out;
  out.reserve(tmpl.size() + 32);
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '{') {
      size_t end = tmpl.find('}', i);
      if (end != std::string::npos) {
        std::string key = tmpl.substr(i + 1, end - i - 1);
        bool found = false;
        for (const auto& [k, v] : args)
          if (k == key) {
            out += v;
            found = true;
            break;
          }
        if (found) {
          i = end;
          continue;
        }
      }
    }
    out += tmpl[i];
  }
  return out;
}

std::vector<std::string> known_isas() { return {std::begin(kIsaNames), std::end(kIsaNames)}; }

Isa parse_isa(const std::string& text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(fmt::format("ISA description {} is not valid JSON: {}", origin, e.what()));
  }
  Isa isa;
  isa.name = get<std::string>(j, "name", origin);
  isa.description = j.value("description", "");
  isa.lanes = get<int>(j, "lanes", origin);
  isa.vector_registers = get<int>(j, "vector_registers", origin);
  isa.header = get<std::string>(j, "header", origin);
  isa.vector_type = get<std::string>(j, "vector_type", origin);
  isa.arch = get<std::string>(j, "arch", origin);
  auto in = get<nlohmann::json>(j, "intrinsics", origin);
  isa.zero = get<std::string>(in, "zero", origin);
  isa.load = get<std::string>(in, "load", origin);
  isa.store = get<std::string>(in, "store", origin);
  isa.broadcast = get<std::string>(in, "broadcast", origin);
  isa.fma = get<std::string>(in, "fma", origin);
  isa.load_masked = get<std::string>(in, "load_masked", origin);
  isa.store_masked = get<std::string>(in, "store_masked", origin);
  auto ep = get<nlohmann::json>(j, "epilogue", origin);
  if (!ep.is_object()) throw Error(fmt::format("ISA description {}: key 'epilogue' has the wrong type", origin));
  isa.add = get<std::string>(ep, "add", origin, "epilogue.");
  isa.max = get<std::string>(ep, "max", origin, "epilogue.");
  isa.min = get<std::string>(ep, "min", origin, "epilogue.");
  auto wg = get<nlohmann::json>(j, "winograd", origin);
  if (!wg.is_object()) throw Error(fmt::format("ISA description {}: key 'winograd' has the wrong type", origin));
  isa.sub = get<std::string>(wg, "sub", origin, "winograd.");
  auto pf = get<nlohmann::json>(j, "prefetch", origin);
  if (!pf.is_object()) throw Error(fmt::format("ISA description {}: key 'prefetch' has the wrong type", origin));
  isa.prefetch = get<std::string>(pf, "line", origin, "prefetch.");
  isa.line_floats = get<int>(pf, "line_floats", origin, "prefetch.");
  if (isa.line_floats < 1)
    throw Error(fmt::format("ISA description {}: key 'prefetch.line_floats' must be at least 1", origin));
  isa.prefetch_out = get<std::string>(pf, "output_line", origin, "prefetch.");
  isa.output_ahead_fmas = get<int>(pf, "output_ahead_fmas", origin, "prefetch.");
  if (isa.output_ahead_fmas < 1)
    throw Error(fmt::format("ISA description {}: key 'prefetch.output_ahead_fmas' must be at least 1", origin));
  auto st = get<nlohmann::json>(j, "stream", origin);
  if (!st.is_object()) throw Error(fmt::format("ISA description {}: key 'stream' has the wrong type", origin));
  isa.store_stream = get<std::string>(st, "store", origin, "stream.");
  isa.stream_align = get<int>(st, "align_bytes", origin, "stream.");
  if (isa.stream_align < 4 || (isa.stream_align & (isa.stream_align - 1)) != 0)
    throw Error(fmt::format("ISA description {}: key 'stream.align_bytes' must be a power of two, at least 4", origin));
  isa.stream_fence = get<std::string>(st, "fence", origin, "stream.");
  if (j.contains("lane_groups")) {  // optional: an ISA without it has no Lanes(g) view
    auto lg = get<nlohmann::json>(j, "lane_groups", origin);
    if (!lg.is_object()) throw Error(fmt::format("ISA description {}: key 'lane_groups' has the wrong type", origin));
    isa.index_type = get<std::string>(lg, "index_type", origin, "lane_groups.");
    isa.lane_index = get<std::string>(lg, "index", origin, "lane_groups.");
    isa.lane_permute = get<std::string>(lg, "permute", origin, "lane_groups.");
  }
  for (const auto& line : get<std::vector<std::string>>(j, "prelude", origin)) isa.prelude += line + "\n";
  isa.cflags = get<std::vector<std::string>>(j, "cflags", origin);
  isa.cpu_flags = get<std::vector<std::string>>(j, "cpu_flags", origin);
  isa.peak_accumulators = j.value("peak_accumulators", isa.vector_registers * 3 / 4);
  auto sp = get<nlohmann::json>(j, "space", origin);
  auto out = get<std::vector<int>>(sp, "output_regs", origin);
  auto tot = get<std::vector<int>>(sp, "total_regs", origin);
  if (out.size() != 2 || tot.size() != 2 || isa.lanes < 1)
    throw Error(fmt::format("ISA description {}: output_regs and total_regs take [min, max]", origin));
  isa.space.out_min = out[0];
  isa.space.out_max = out[1];
  isa.space.total_min = tot[0];
  isa.space.total_max = tot[1];
  isa.space.max_unroll = get<int>(sp, "max_unroll", origin);
  isa.space.rs_values = get<std::vector<int>>(sp, "rs_values", origin);
  isa.space.rs_square_when_both_above_1 = sp.value("rs_square_when_both_above_1", true);
  isa.taps = parse_taps_space(j, origin);
  isa.depthwise = parse_depthwise_space(j, origin);
  if (j.contains("emulation")) {
    auto em = get<nlohmann::json>(j, "emulation", origin);
    isa.emulation.cross_cc = get<std::string>(em, "cross_cc", origin);
    isa.emulation.qemu = get<std::string>(em, "qemu", origin);
    isa.emulation.packages = get<std::vector<std::string>>(em, "packages", origin);
  }
  return isa;
}

Isa load_isa(const std::string& name) {
  const char* text = embedded_file("microkernels/isa/" + name + ".json");
  if (!text) {
    std::string names;
    for (const auto& n : known_isas()) names += (names.empty() ? "" : ", ") + n;
    throw Error(fmt::format("unknown --arch '{}'; choose one of: {}", name, names));
  }
  return parse_isa(text, "microkernels/isa/" + name + ".json");
}

std::string host_arch() {
  utsname u{};
  return uname(&u) == 0 ? u.machine : "unknown";
}

std::string best_isa() {
  for (const auto& n : known_isas())
    if (cpu_supports(load_isa(n))) return n;
  throw Error(fmt::format("this CPU runs none of convtune's ISAs ({}); pass --arch NAME (with --emulate for "
                          "another architecture)",
                          fmt::join(known_isas(), ", ")));
}

bool cpu_supports(const Isa& isa) {
  if (isa.arch != host_arch()) return false;
  auto flags = cpuinfo_flags();
  for (const auto& f : isa.cpu_flags)
    if (!flags.count(f)) return false;
  return true;
}

}  // namespace convtune
