// The class table (000 §4.1): selection of microkernels into classes (the
// selected ones whose sizes differ only in h), its public JSON format, and
// where tables are read from and written to.
#include "convtune/class_table.h"

#include <unistd.h>
#include <pwd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "convtune/embedded_data.h"
#include "convtune/error.h"

namespace convtune {

namespace fs = std::filesystem;
using nlohmann::json;

void ClassTable::select_and_classify() {
  // The epsilon keeps e.g. 80.00 selected at threshold 0.8 despite 0.8*100 rounding.
  const double cut = threshold * 100 - 1e-9;
  std::map<std::tuple<int, int, int, int, int>, std::vector<int>> groups;
  for (UkRecord& r : microkernels) {
    r.selected = r.status == "ok" && r.percent_peak >= cut;
    if (r.selected)
      groups[{r.sizes.k, r.sizes.c, r.sizes.w, r.sizes.r, r.sizes.s}].push_back(r.sizes.h);
  }
  classes.clear();
  for (auto& [key, hs] : groups) {
    UkClass c;
    std::tie(c.sizes.k, c.sizes.c, c.sizes.w, c.sizes.r, c.sizes.s) = key;
    c.sizes.h = 0;
    std::sort(hs.begin(), hs.end());
    hs.erase(std::unique(hs.begin(), hs.end()), hs.end());
    c.h = hs;
    classes.push_back(c);
  }
}

const UkRecord* ClassTable::find(const UkSizes& u) const {
  for (const UkRecord& r : microkernels)
    if (r.sizes == u) return &r;
  return nullptr;
}

std::vector<UkRecord> ClassTable::selected() const {
  std::vector<UkRecord> out;
  for (const UkRecord& r : microkernels)
    if (r.selected) out.push_back(r);
  return out;
}

// ---- JSON (a public format: scripts read these keys) ----

namespace {

// Two decimals keep the file small and diffs readable; measurements are noisier.
double round2(double x) { return std::round(x * 100) / 100; }

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
  double num(const json& o, const std::string& key, const std::string& prefix = "") const {
    return get(o, key, prefix, [](const json& v) { return v.is_number(); }, "a number")
        .get<double>();
  }
  int64_t int64(const json& o, const std::string& key, const std::string& prefix = "") const {
    return get(o, key, prefix, [](const json& v) { return v.is_number_integer(); },
               "an integer").get<int64_t>();
  }
  int positive(const json& o, const std::string& key, const std::string& prefix) const {
    auto ok = [](const json& v) {
      return v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 1 << 20;
    };
    return int(get(o, key, prefix, ok, "a positive integer").get<int64_t>());
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
      return v.is_array() &&
             std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); });
    };
    return get(o, key, prefix, ok, "a list of strings").get<std::vector<std::string>>();
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

const char* const kStatuses[] = {"ok", "compile_error", "crash", "timeout", "wrong_result"};

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
  j["counters"] = t.counters;
  j["wall_seconds"] = round2(t.wall_seconds);
  json uks = json::array();
  for (const UkRecord& r : t.microkernels)
    uks.push_back({{"name", r.name},
                   {"sizes", sizes_json(r.sizes, true)},
                   {"status", r.status},
                   {"gflops", round2(r.gflops)},
                   {"percent_peak", round2(r.percent_peak)},
                   {"selected", r.selected}});
  j["microkernels"] = uks;
  json classes = json::array();
  for (const UkClass& c : t.classes)
    classes.push_back({{"sizes", sizes_json(c.sizes, false)}, {"h", c.h}});
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
  t.format_version = int(rd.int64(j, "format_version"));
  if (t.format_version != kTableFormatVersion)
    throw Error(fmt::format("class table {} has format_version {}, but this convtune reads "
                            "format_version {}; {}",
                            origin, t.format_version, kTableFormatVersion, rerun));
  t.isa = rd.str(j, "isa");
  const json& m = rd.object(j, "machine");
  t.machine.cpu_model = rd.str(m, "cpu_model", "machine.");
  t.machine.isa_flags = rd.strings(m, "isa_flags", "machine.");
  t.machine.cores = int(rd.int64(m, "cores", "machine."));
  const json& cache = rd.object(m, "cache", "machine.");
  t.machine.l1d_bytes = rd.int64(cache, "l1d_bytes", "machine.cache.");
  t.machine.l2_bytes = rd.int64(cache, "l2_bytes", "machine.cache.");
  t.machine.l3_bytes = rd.int64(cache, "l3_bytes", "machine.cache.");
  const json& cc = rd.object(j, "compiler");
  t.compiler.command = rd.str(cc, "command", "compiler.");
  t.compiler.version = rd.str(cc, "version", "compiler.");
  t.compiler.flags = rd.strings(cc, "flags", "compiler.");
  t.created = rd.str(j, "created");
  t.tool_version = rd.str(j, "tool_version");
  t.peak_gflops = rd.num(j, "peak_gflops");
  const json& peak = rd.object(j, "peak");
  t.peak_start_gflops = rd.num(peak, "start_gflops", "peak.");
  t.peak_end_gflops = rd.num(peak, "end_gflops", "peak.");
  t.threshold = rd.num(j, "threshold");
  t.quick = rd.boolean(j, "quick");
  t.emulated = j.value("emulated", false);
  t.counters = rd.str(j, "counters");
  t.wall_seconds = rd.num(j, "wall_seconds");
  const json& uks = rd.list(j, "microkernels");
  for (size_t i = 0; i < uks.size(); ++i) {
    std::string p = fmt::format("microkernels[{}].", i);
    UkRecord r;
    r.name = rd.str(uks[i], "name", p);
    r.sizes = rd.sizes(uks[i], p, true);
    r.status = rd.str(uks[i], "status", p);
    if (std::find(std::begin(kStatuses), std::end(kStatuses), r.status) == std::end(kStatuses))
      rd.fail(p + "status", "one of ok, compile_error, crash, timeout, wrong_result");
    r.gflops = rd.num(uks[i], "gflops", p);
    r.percent_peak = rd.num(uks[i], "percent_peak", p);
    r.selected = rd.boolean(uks[i], "selected", p);
    t.microkernels.push_back(r);
  }
  const json& classes = rd.list(j, "classes");
  for (size_t i = 0; i < classes.size(); ++i) {
    std::string p = fmt::format("classes[{}].", i);
    UkClass c;
    c.sizes = rd.sizes(classes[i], p, false);
    const json& hs = rd.list(classes[i], "h", p);
    for (size_t k = 0; k < hs.size(); ++k) {
      if (!hs[k].is_number_integer() || hs[k].get<int64_t>() < 1 || hs[k].get<int64_t>() > 1 << 20)
        rd.fail(fmt::format("{}h[{}]", p, k), "a positive integer");
      c.h.push_back(int(hs[k].get<int64_t>()));
    }
    t.classes.push_back(c);
  }
  t.origin = origin;
  return t;
}

// ---- Files ----

namespace {

std::string dump(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

// Objects one key per line, lists of objects one element per line: a
// re-profile then shows up in `git diff` as one changed line per microkernel.
void pretty(std::ostream& os, const json& v, int depth) {
  const std::string pad(2 * (depth + 1), ' '), end(2 * depth, ' ');
  if (v.is_object() && !v.empty()) {
    os << "{\n";
    size_t i = 0;
    for (auto it = v.begin(); it != v.end(); ++it, ++i) {
      os << pad << dump(it.key()) << ": ";
      pretty(os, it.value(), depth + 1);
      os << (i + 1 < v.size() ? ",\n" : "\n");
    }
    os << end << "}";
  } else if (v.is_array() && !v.empty() && v[0].is_object()) {
    os << "[\n";
    for (size_t i = 0; i < v.size(); ++i)
      os << pad << dump(v[i]) << (i + 1 < v.size() ? ",\n" : "\n");
    os << end << "]";
  } else {
    os << dump(v);
  }
}

std::string errno_text(int e) { return e ? std::strerror(e) : "write failed"; }

}  // namespace

void write_table(const ClassTable& t, const std::string& path) {
  auto fail = [&](const std::string& why) {
    throw Error(fmt::format("cannot write class table to '{}': {}; choose another --out", path,
                            why));
  };
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) fail(ec.message());
  }
  std::ostringstream text;
  pretty(text, table_to_json(t), 0);
  text << "\n";
  // Write aside and rename, so an interrupted write never leaves a truncated table.
  const std::string tmp = path + ".tmp";
  errno = 0;
  std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
  if (!f) fail(errno_text(errno));
  f << text.str();
  f.close();
  if (f.fail()) {
    int e = errno;
    fs::remove(tmp, ec);
    fail(errno_text(e));
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::string why = ec.message();
    fs::remove(tmp, ec);
    fail(why);
  }
}

ClassTable read_table(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw Error(fmt::format("class table '{}' does not exist; run 'convtune profile --arch ISA' "
                            "or pass an existing --table",
                            path));
  if (fs::is_directory(path, ec))
    throw Error(fmt::format("class table '{}' is a directory; pass a table file with --table", path));
  errno = 0;
  std::ifstream f(path, std::ios::binary);
  std::stringstream text;
  if (f) text << f.rdbuf();
  if (!f) throw Error(fmt::format("cannot read class table '{}': {}", path, errno_text(errno)));
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 1: ...; last read: ..."
    std::string msg = e.what();
    size_t p = msg.find("] ");
    if (p != std::string::npos) msg = msg.substr(p + 2);
    if (msg.rfind("parse error at ", 0) == 0) msg = msg.substr(15);
    msg = msg.substr(0, msg.find(';'));
    throw Error(fmt::format("class table '{}' is corrupt or truncated ({}); re-run 'convtune "
                            "profile' or delete it",
                            path, msg));
  }
  return table_from_json(j, path);
}

std::string default_table_path(const std::string& isa) {
  std::string base;
  // The XDG spec says relative values are to be ignored.
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    if (home && *home)
      base = home;
    else if (const passwd* pw = getpwuid(getuid()))
      base = pw->pw_dir;
    base += "/.cache";
  }
  return base + "/convtune/tables/" + isa + ".json";
}

ClassTable load_table(const std::string& isa, const std::optional<std::string>& path) {
  ClassTable t;
  std::error_code ec;
  std::string user = default_table_path(isa);
  if (path) {
    t = read_table(*path);
  } else if (fs::exists(user, ec)) {
    t = read_table(user);
  } else {
    const std::string rel = "configs/tables/" + isa + ".json";
    const char* text = embedded_file(rel);
    json j = text ? json::parse(text, nullptr, false) : json();
    // The shipped table starts as a placeholder until a real profile is committed.
    if (!j.is_object() || (j.contains("placeholder") && j["placeholder"] == true))
      throw Error(
          fmt::format("no class table for ISA '{}': run 'convtune profile --arch {}'", isa, isa));
    t = table_from_json(j, "built-in " + rel);
  }
  // Microkernels of another ISA would not even compile for this one.
  if (!isa.empty() && t.isa != isa)
    throw Error(fmt::format("class table {} was profiled for ISA '{}', not '{}'; pass --arch {} "
                            "or a table profiled for {}",
                            t.origin, t.isa, isa, t.isa, isa));
  return t;
}

std::string fingerprint_warning(const ClassTable& t) {
  MachineInfo here = detect_machine();
  if (t.machine.fingerprint() == here.fingerprint()) return "";
  std::string where = t.machine.cpu_model == here.cpu_model
                          ? fmt::format("was profiled on '{}' with other ISA flags ({}), this CPU "
                                        "has ({})",
                                        t.machine.cpu_model, fmt::join(t.machine.isa_flags, ","),
                                        fmt::join(here.isa_flags, ","))
                          : fmt::format("was profiled on '{}', this CPU is '{}'",
                                        t.machine.cpu_model, here.cpu_model);
  return fmt::format(
      "warning: class table {} {}; run 'convtune profile --arch {}' for tables that fit this "
      "machine",
      t.origin, where, t.isa);
}

}  // namespace convtune
