#include "convtune/offline/profile_journal.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/json_fields.h"
#include "convtune/core/json_lines.h"

namespace convtune {

namespace {

using nlohmann::json;
using namespace json_field;  // NOLINT: the typed readers of a line's keys

const JsonLinesName kJournalName{"journal", "choose another --out"};
constexpr const char* kLineFix = "fix or remove that line, or remove the journal to start over";

// Checks the line's kind and format version.
void version_checked(const json& j, const char* kind) {
  if (!j.is_object()) throw Error(fmt::format("it is {}, not a JSON object", describe(j)));
  const std::string k = text(j, "kind", true);
  if (k != kind) throw Error(fmt::format("key 'kind' is '{}', not '{}'", k, kind));
  const json* version = field(j, "format_version", true, &json::is_number_integer, "an integer");
  if (*version != kJournalFormatVersion)
    throw Error(fmt::format("format_version {} is not {} (written by another convtune version)", version->dump(),
                            kJournalFormatVersion));
}

bool boolean(const json& j, const char* key) {
  return field(j, key, true, &json::is_boolean, "a boolean")->get<bool>();
}

int positive_int(const json& j, const char* key) {
  const json* v = field(j, key, true, &json::is_number_integer, "an integer");
  if (v->get<int64_t>() < 1 || v->get<int64_t>() > 1000000)
    throw Error(fmt::format("key '{}' is out of range ({})", key, v->dump()));
  return v->get<int>();
}

const char* pass_text(ProfilePass p) { return p == ProfilePass::first ? "first" : "again"; }

}  // namespace

json ProfileJournalHeader::to_json() const {
  return json{{"kind", "header"},           {"format_version", kJournalFormatVersion},
              {"isa", isa},                 {"quick", quick},
              {"threshold", threshold},     {"per_unit", per_unit},
              {"min_repeat_ms", min_repeat_ms}, {"repeat", repeat},
              {"emulated", emulated},       {"machine", machine},
              {"compiler", compiler},       {"tool_version", tool_version},
              {"peak_start_gflops", peak_start_gflops}, {"created", created}};
}

ProfileJournalHeader ProfileJournalHeader::from_json(const json& j) {
  version_checked(j, "header");
  ProfileJournalHeader h;
  h.isa = text(j, "isa", true);
  h.quick = boolean(j, "quick");
  h.threshold = number(j, "threshold", true);
  h.per_unit = positive_int(j, "per_unit");
  h.min_repeat_ms = number(j, "min_repeat_ms", true);
  h.repeat = positive_int(j, "repeat");
  h.emulated = boolean(j, "emulated");
  h.machine = text(j, "machine", true);
  h.compiler = text(j, "compiler", true);
  h.tool_version = text(j, "tool_version", true);
  h.peak_start_gflops = number(j, "peak_start_gflops", true);
  if (!(h.peak_start_gflops > 0)) throw Error("key 'peak_start_gflops' is not positive");
  h.created = text(j, "created", true);
  return h;
}

json ProfileJournalEntry::to_json() const {
  const UkSizes& u = sizes;
  json j{{"kind", "microkernel"}, {"format_version", kJournalFormatVersion},
         {"name", name},          {"sizes", {u.k, u.c, u.w, u.h, u.r, u.s}},
         {"pass", pass_text(pass)}, {"status", to_string(measured.status)},
         {"gflops", measured.gflops}};
  if (fence != TapFence::none) j["fence"] = fence_text(fence);
  if (!measured.counters.empty()) j["counters"] = measured.counters;
  return j;
}

ProfileJournalEntry ProfileJournalEntry::from_json(const json& j) {
  version_checked(j, "microkernel");
  ProfileJournalEntry e;
  e.name = text(j, "name", true);
  std::vector<int> s = array_of<int>(j, "sizes", &json::is_number_integer, "integers");
  if (s.size() != 6) throw Error("key 'sizes' is not [k, c, w, h, r, s]");
  e.sizes = UkSizes{s[0], s[1], s[2], s[3], s[4], s[5]};
  // A depthwise microkernel's sizes are a dense one's numbers: its name says which (ct_dwkernel_).
  UkSizes named;
  std::string named_isa;
  e.sizes.dw = parse_ukernel_name(e.name, &named, &named_isa) && named.dw;
  const std::string fence = text(j, "fence", false);
  if (!fence.empty() || j.contains("fence")) {
    if (!fence_from_text(fence, &e.fence) || !fence_fits(e.fence, e.sizes))
      throw Error(fmt::format("fence '{}' is not F(r) or F(s), or the microkernel cannot take it", fence));
  }
  const std::string pass = text(j, "pass", true);
  if (pass != "first" && pass != "again") throw Error(fmt::format("pass '{}' is not first or again", pass));
  e.pass = pass == "first" ? ProfilePass::first : ProfilePass::again;
  // What a profile measures: any status but load_error.
  static const std::vector<Status> statuses = {Status::ok, Status::compile_error, Status::wrong_result,
                                               Status::crash, Status::timeout};
  e.measured.status = parse_status(text(j, "status", true), statuses);
  e.measured.gflops = number(j, "gflops", true);
  e.measured.counters = array_of<long long>(j, "counters", &json::is_number_integer, "integers");
  return e;
}

std::string journal_path(const std::string& table_path) { return table_path + ".journal.jsonl"; }

std::string units_dir(const std::string& journal) { return journal + ".units"; }

void remove_journal(const std::string& journal) {
  std::error_code ec;
  std::filesystem::remove(journal, ec);
  std::filesystem::remove_all(units_dir(journal), ec);
}

ProfileJournal read_journal(const std::string& path, const std::map<std::string, UkSizes>& names,
                            const std::string& isa) {
  ProfileJournal out;
  std::map<std::tuple<std::string, TapFence, ProfilePass>, size_t> seen;  // -> line
  bool other_isa = false;
  JsonLinesTail tail = read_json_lines(path, kJournalName, kLineFix, [&](const json& j, size_t line) {
    if (!out.has_header) {
      if (j.is_object() && !(j.contains("kind") && j["kind"] == "header"))
        throw Error("the first line is not the journal's header");
      out.header = ProfileJournalHeader::from_json(j);
      out.has_header = true;
      other_isa = !isa.empty() && out.header.isa != isa;
      return;
    }
    if (other_isa) return;  // refused below, for its --arch
    ProfileJournalEntry e = ProfileJournalEntry::from_json(j);
    auto known = names.find(e.name);
    if (known == names.end())
      throw Error(fmt::format("microkernel '{}' is not one this profile measures", e.name));
    if (known->second != e.sizes) throw Error(fmt::format("key 'sizes' does not match microkernel '{}'", e.name));
    const std::string form = e.name + (e.fence == TapFence::none ? "" : " " + fence_text(e.fence));
    auto [it, fresh] = seen.emplace(std::make_tuple(e.name, e.fence, e.pass), line);
    if (!fresh)
      throw Error(fmt::format("microkernel '{}' ({} pass) was already measured on line {}", form,
                              pass_text(e.pass), it->second));
    if (e.pass == ProfilePass::again && !seen.count({e.name, e.fence, ProfilePass::first}))
      throw Error(fmt::format("microkernel '{}' is re-measured before its first measurement", form));
    out.entries.push_back(e);
  });
  if (other_isa)
    throw Error(fmt::format("journal '{}' was started with --arch {}, not --arch {}; resume with the same options or "
                            "remove the journal to start over",
                            path, out.header.isa, isa));
  out.exists = tail.complete_bytes + tail.torn_bytes > 0;
  out.complete_bytes = tail.complete_bytes;
  out.torn_bytes = tail.torn_bytes;
  return out;
}

void check_resumable(const std::string& path, const ProfileJournalHeader& was, const ProfileJournalHeader& now) {
  auto differs = [&](const std::string& what, const std::string& a, const std::string& b) {
    if (a != b)
      throw Error(fmt::format("journal '{}' was started with {}, not {}; resume with the same options or remove the "
                              "journal to start over",
                              path, fmt::format(what, a), fmt::format(what, b)));
  };
  auto flag = [](bool on, const char* name) { return on ? std::string(name) : fmt::format("no {}", name); };
  differs("--arch {}", was.isa, now.isa);
  differs("{}", flag(was.quick, "--quick"), flag(now.quick, "--quick"));
  differs("--threshold {}", fmt::format("{}", was.threshold), fmt::format("{}", now.threshold));
  differs("{} microkernels per unit", std::to_string(was.per_unit), std::to_string(now.per_unit));
  differs("--min-repeat-ms {}", fmt::format("{}", was.min_repeat_ms), fmt::format("{}", now.min_repeat_ms));
  differs("--repeat {}", std::to_string(was.repeat), std::to_string(now.repeat));
  differs("{}", flag(was.emulated, "--emulate"), flag(now.emulated, "--emulate"));
  auto other = [&](const std::string& what, const std::string& a, const std::string& b) {
    if (a != b)
      throw Error(fmt::format("journal '{}' was started {} '{}', not '{}'; remove the journal to start over", path,
                              what, a, b));
  };
  other("on a machine with fingerprint", was.machine, now.machine);
  other("with the compiler", was.compiler, now.compiler);
  other("by convtune", was.tool_version, now.tool_version);
}

void append_journal(const std::string& path, const json& line) { append_json_line(path, line, kJournalName); }

void repair_journal(const std::string& path, const ProfileJournal& j) {
  uint64_t dropped = drop_torn_tail(path, kJournalName, JsonLinesTail{j.complete_bytes, j.torn_bytes});
  if (dropped) std::fprintf(stderr, "convtune: note: %s\n", torn_tail_note(path, kJournalName, dropped).c_str());
}

}  // namespace convtune
