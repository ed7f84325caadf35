// The class table's JSON form: a public format, scripts read these keys.
#include "convtune/offline/class_table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "convtune/core/error.h"

namespace convtune {

using nlohmann::json;

namespace {

// Two decimals keep the file small and diffs readable; measurements are noisier.
double round2(double x) { return std::round(x * 100) / 100; }

// Bounds far above any profiled table (2556 microkernels, sizes up to 16),
// low enough that sizes multiply without overflow (UkSizes::weight_regs is
// an int) and a corrupt table cannot exhaust memory or time.
constexpr int kMaxUkSize = 64;
constexpr size_t kMaxMicrokernels = 100000;
constexpr size_t kMaxListItems = 4096;  // flags, counters, h of a class

json sizes_json(const UkSizes& u, bool with_h) {
  json j = {{"k", u.k}, {"c", u.c}, {"w", u.w}, {"r", u.r}, {"s", u.s}};
  if (with_h) j["h"] = u.h;
  return j;
}

// Reads keys of a table, naming the full key path ("microkernels[3].sizes.k")
// and the origin when one is missing or has the wrong type.
class Reader {
 public:
  explicit Reader(const std::string& origin) : origin_(origin) {}

  [[noreturn]] void fail(const std::string& key, const char* what) const {
    throw Error(fmt::format(
        "class table {}: key '{}' is missing or not {}; re-run 'convtune profile' to rewrite it",
        origin_, key, what));
  }
  const json& get(const json& o, const std::string& key, const std::string& prefix,
                  bool ok(const json&), const char* what) const {
    if (!o.is_object() || !o.contains(key) || !ok(o.at(key))) fail(prefix + key, what);
    return o.at(key);
  }
  // An integer in [lo, hi]; "the key is missing or not <what>" otherwise.
  int64_t ranged(const json& o, const std::string& key, const std::string& prefix, int64_t lo,
                 int64_t hi) const {
    if (!o.is_object() || !o.contains(key)) fail(prefix + key, range_text(lo, hi).c_str());
    return ranged_value(o.at(key), prefix + key, lo, hi);
  }
  int64_t ranged_value(const json& v, const std::string& where, int64_t lo, int64_t hi) const {
    // An unsigned value above INT64_MAX would wrap in get<int64_t>.
    const bool ok = v.is_number_integer() &&
                    !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi)) &&
                    v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    if (!ok) fail(where, range_text(lo, hi).c_str());
    return v.get<int64_t>();
  }
  static std::string range_text(int64_t lo, int64_t hi) {
    return fmt::format("an integer from {} to {}", lo, hi);
  }
  int positive(const json& o, const std::string& key, const std::string& prefix) const {
    return int(ranged(o, key, prefix, 1, kMaxUkSize));
  }
  // A finite number in [lo, hi] (JSON has no NaN, but 1e999 reads as infinity).
  double bounded(const json& o, const std::string& key, const std::string& prefix, double lo,
                 double hi) const {
    auto ok = [&](const json& v) {
      return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= lo &&
             v.get<double>() <= hi;
    };
    const std::string what = fmt::format("a number from {} to {}", lo, hi);
    if (!o.is_object() || !o.contains(key) || !ok(o.at(key))) fail(prefix + key, what.c_str());
    return o.at(key).get<double>();
  }
  std::string str(const json& o, const std::string& key, const std::string& prefix = "") const {
    return get(o, key, prefix, [](const json& v) { return v.is_string(); }, "a string")
        .get<std::string>();
  }
  bool boolean(const json& o, const std::string& key, const std::string& prefix = "") const {
    return get(o, key, prefix, [](const json& v) { return v.is_boolean(); }, "true or false")
        .get<bool>();
  }
  const json& object(const json& o, const std::string& key, const std::string& prefix = "") const {
    return get(o, key, prefix, [](const json& v) { return v.is_object(); }, "an object");
  }
  const json& list(const json& o, const std::string& key, const std::string& prefix = "") const {
    return get(o, key, prefix, [](const json& v) { return v.is_array(); }, "a list");
  }
  std::vector<std::string> strings(const json& o, const std::string& key,
                                   const std::string& prefix = "") const {
    auto ok = [](const json& v) {
      return v.is_array() && v.size() <= kMaxListItems &&
             std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); });
    };
    return get(o, key, prefix, ok, "a list of at most 4096 strings").get<std::vector<std::string>>();
  }
  UkSizes sizes(const json& o, const std::string& prefix, bool with_h) const {
    const json& s = object(o, "sizes", prefix);
    std::string p = prefix + "sizes.";
    UkSizes u;
    u.k = positive(s, "k", p);
    u.c = positive(s, "c", p);
    u.w = positive(s, "w", p);
    u.h = with_h ? positive(s, "h", p) : 0;
    u.r = positive(s, "r", p);
    u.s = positive(s, "s", p);
    return u;
  }

 private:
  std::string origin_;
};

// A table's microkernels were compiled and run by the profile: any status but load_error.
const std::vector<Status> kTableStatuses = {Status::ok, Status::compile_error, Status::crash, Status::timeout,
                                           Status::wrong_result};

}  // namespace

json table_to_json(const ClassTable& t) {
  json j;
  j["format_version"] = kTableFormatVersion;
  j["isa"] = t.isa;
  const MachineInfo& m = t.machine;
  j["machine"] = {{"cpu_model", m.cpu_model},
                  {"isa_flags", m.isa_flags},
                  {"cores", m.cores},
                  {"cache", {{"l1d_bytes", m.l1d_bytes},
                             {"l2_bytes", m.l2_bytes},
                             {"l3_bytes", m.l3_bytes}}},
                  {"fingerprint", m.fingerprint()}};
  j["compiler"] = {{"command", t.compiler.command},
                   {"version", t.compiler.version},
                   {"flags", t.compiler.flags}};
  j["created"] = t.created;
  j["tool_version"] = t.tool_version;
  j["peak_gflops"] = round2(t.peak_gflops);
  j["peak"] = {{"start_gflops", round2(t.peak_start_gflops)},
               {"end_gflops", round2(t.peak_end_gflops)}};
  j["threshold"] = t.threshold;
  j["quick"] = t.quick;
  if (t.emulated) j["emulated"] = true;
  if (t.resumed) j["resumed"] = true;
  j["counters"] = t.counters;
  j["families"] = t.families;
  j["wall_seconds"] = round2(t.wall_seconds);
  json uks = json::array();
  for (const UkRecord& r : t.microkernels) {
    json u = {{"name", r.name},
              {"sizes", sizes_json(r.sizes, true)},
              {"family", r.family},
              {"status", to_string(r.status)},
              {"gflops", round2(r.gflops)},
              {"percent_peak", round2(r.percent_peak)},
              {"selected", r.selected}};
    if (r.fence != TapFence::none) u["fence"] = fence_text(r.fence);
    if (!r.counters.empty()) u["counters"] = r.counters;  // only where the machine has them
    uks.push_back(u);
  }
  j["microkernels"] = uks;
  json classes = json::array();
  for (const UkClass& c : t.classes) {
    json cj = {{"sizes", sizes_json(c.sizes, false)}, {"h", c.h}};
    if (c.sizes.dw) cj["family"] = "depthwise";  // a dense class's is implied
    classes.push_back(cj);
  }
  j["classes"] = classes;
  return j;
}

ClassTable table_from_json(const json& j, const std::string& origin) {
  const std::string rerun = "re-run 'convtune profile' to rewrite it";
  if (!j.is_object())
    throw Error(fmt::format("class table {}: not a JSON object; {}", origin, rerun));
  if (j.contains("placeholder") && j["placeholder"] == true)
    throw Error(fmt::format(
        "class table {} is a placeholder without measurements; run 'convtune profile' to make one",
        origin));
  Reader rd(origin);
  ClassTable t;
  t.format_version = int(rd.ranged(j, "format_version", "", 0, 1 << 30));
  if (t.format_version > kTableFormatVersion)
    throw Error(fmt::format("class table {}: format_version {} is newer than this convtune ({}); update "
                            "convtune or {}",
                            origin, t.format_version, kTableFormatVersion, rerun));
  if (t.format_version < 1)
    throw Error(fmt::format("class table {} has format_version {}, but this convtune reads "
                            "format_version 1 to {}; {}",
                            origin, t.format_version, kTableFormatVersion, rerun));
  // Version 1 predates families: everything in it is the paper family's.
  const bool has_families = t.format_version >= 2;
  t.isa = rd.str(j, "isa");
  const json& m = rd.object(j, "machine");
  t.machine.cpu_model = rd.str(m, "cpu_model", "machine.");
  t.machine.isa_flags = rd.strings(m, "isa_flags", "machine.");
  t.machine.cores = int(rd.ranged(m, "cores", "machine.", 1, 1 << 20));
  const json& cache = rd.object(m, "cache", "machine.");
  t.machine.l1d_bytes = rd.ranged(cache, "l1d_bytes", "machine.cache.", 0, int64_t(1) << 50);
  t.machine.l2_bytes = rd.ranged(cache, "l2_bytes", "machine.cache.", 0, int64_t(1) << 50);
  t.machine.l3_bytes = rd.ranged(cache, "l3_bytes", "machine.cache.", 0, int64_t(1) << 50);
  const json& cc = rd.object(j, "compiler");
  t.compiler.command = rd.str(cc, "command", "compiler.");
  t.compiler.version = rd.str(cc, "version", "compiler.");
  t.compiler.flags = rd.strings(cc, "flags", "compiler.");
  t.created = rd.str(j, "created");
  t.tool_version = rd.str(j, "tool_version");
  constexpr double kMaxGflops = 1e9;  // far above any CPU core
  t.peak_gflops = rd.bounded(j, "peak_gflops", "", 0, kMaxGflops);
  const json& peak = rd.object(j, "peak");
  t.peak_start_gflops = rd.bounded(peak, "start_gflops", "peak.", 0, kMaxGflops);
  t.peak_end_gflops = rd.bounded(peak, "end_gflops", "peak.", 0, kMaxGflops);
  t.threshold = rd.bounded(j, "threshold", "", 0, 1.5);  // profile accepts (0, 1.5]
  t.quick = rd.boolean(j, "quick");
  t.emulated = j.contains("emulated") && rd.boolean(j, "emulated");
  t.resumed = j.contains("resumed") && rd.boolean(j, "resumed");
  t.counters = rd.str(j, "counters");
  if (has_families) {
    t.families = rd.strings(j, "families");
    // The dense families and "depthwise" (ukernel.h: its microkernels are UkSizes::dw).
    std::vector<std::string> known = ukernel_families();
    known.push_back("depthwise");
    bool ok = !t.families.empty();
    for (size_t i = 0; i < t.families.size() && ok; ++i)
      ok = std::find(known.begin(), known.end(), t.families[i]) != known.end() &&
           std::find(t.families.begin(), t.families.begin() + i, t.families[i]) == t.families.begin() + i;
    if (!ok) rd.fail("families", fmt::format("a list of distinct families from {}", fmt::join(known, ", ")).c_str());
  }
  t.wall_seconds = rd.bounded(j, "wall_seconds", "", 0, 1e12);
  const json& uks = rd.list(j, "microkernels");
  if (uks.size() > kMaxMicrokernels) rd.fail("microkernels", "a list of at most 100000 microkernels");
  for (size_t i = 0; i < uks.size(); ++i) {
    std::string p = fmt::format("microkernels[{}].", i);
    UkRecord r;
    r.name = rd.str(uks[i], "name", p);
    r.sizes = rd.sizes(uks[i], p, true);
    if (has_families) {
      r.family = rd.str(uks[i], "family", p);
      if (std::find(t.families.begin(), t.families.end(), r.family) == t.families.end())
        rd.fail(p + "family", fmt::format("one of the table's families ({})", fmt::join(t.families, ", ")).c_str());
      r.sizes.dw = r.family == "depthwise";
    }
    const std::optional<Status> status = status_from_text(rd.str(uks[i], "status", p));
    if (!status || std::find(kTableStatuses.begin(), kTableStatuses.end(), *status) == kTableStatuses.end())
      rd.fail(p + "status", ("one of " + status_list(kTableStatuses)).c_str());
    r.status = *status;
    r.gflops = rd.bounded(uks[i], "gflops", p, 0, kMaxGflops);
    r.percent_peak = rd.bounded(uks[i], "percent_peak", p, 0, 1e6);
    r.selected = rd.boolean(uks[i], "selected", p);
    if (t.format_version >= 3 && uks[i].contains("fence")) {
      if (!fence_from_text(rd.str(uks[i], "fence", p), &r.fence) || !fence_fits(r.fence, r.sizes))
        rd.fail(p + "fence", "F(r) (with r >= 2) or F(s) (with more than one tap), or no key for an unfenced figure");
    }
    if (uks[i].contains("counters")) {
      if (!uks[i]["counters"].is_array() || uks[i]["counters"].size() > kMaxListItems)
        rd.fail(p + "counters", "a list of at most 4096 integers");
      for (const auto& c : uks[i]["counters"]) {
        if (!c.is_number_integer() || (c.is_number_unsigned() && c.get<uint64_t>() > INT64_MAX))
          rd.fail(p + "counters", "a list of at most 4096 integers");
        r.counters.push_back(c.get<long long>());
      }
    }
    t.microkernels.push_back(r);
  }
  const json& classes = rd.list(j, "classes");
  if (classes.size() > kMaxMicrokernels) rd.fail("classes", "a list of at most 100000 classes");
  for (size_t i = 0; i < classes.size(); ++i) {
    std::string p = fmt::format("classes[{}].", i);
    UkClass c;
    c.sizes = rd.sizes(classes[i], p, false);
    if (classes[i].contains("family")) {
      if (rd.str(classes[i], "family", p) != "depthwise") rd.fail(p + "family", "\"depthwise\" or no key (dense)");
      c.sizes.dw = true;
    }
    const json& hs = rd.list(classes[i], "h", p);
    if (hs.size() > kMaxListItems) rd.fail(p + "h", "a list of at most 4096 integers");
    for (size_t k = 0; k < hs.size(); ++k)
      c.h.push_back(int(rd.ranged_value(hs[k], fmt::format("{}h[{}]", p, k), 1, kMaxUkSize)));
    t.classes.push_back(c);
  }
  t.origin = origin;
  return t;
}

}  // namespace convtune
