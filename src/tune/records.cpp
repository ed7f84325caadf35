#include "convtune/tune/records.h"

#include <algorithm>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/json_fields.h"
#include "convtune/core/json_lines.h"

namespace convtune {

nlohmann::json Record::to_json() const {
  nlohmann::json j;
  j["format_version"] = kRecordFormatVersion;
  j["layer"] = layer;
  j["shape"] = shape;
  j["config"] = config;
  j["choice"] = choice;
  j["microkernels"] = microkernels;
  j["strategy"] = strategy;
  j["seed"] = seed;
  j["trial"] = trial;
  j["status"] = to_string(status);
  if (!detail.empty()) j["detail"] = detail;
  j["seconds"] = seconds;
  j["samples"] = samples;
  if (probe_gflops > 0) {
    j["wall_seconds"] = wall_seconds;
    j["probe_gflops"] = probe_gflops;
  }
  j["gflops"] = gflops;
  j["real_gflops"] = real_gflops;
  j["percent_peak"] = percent_peak;
  j["peak_gflops"] = peak_gflops;
  j["compile_seconds"] = compile_seconds;
  nlohmann::json c;
  c["names"] = counter_names;
  c["values"] = counters;
  j["counters"] = c;
  j["isa"] = isa;
  j["table"] = table;
  j["table_fingerprint"] = table_fingerprint;
  j["tool_version"] = tool_version;
  j["timestamp"] = timestamp;
  if (!note.empty()) j["note"] = note;
  if (search_info.is_object() && !search_info.empty()) j["search_info"] = search_info;
  if (emulated) j["emulated"] = true;
  if (threads > 1) j["threads"] = threads;
  if (machine.known()) j["machine"] = machine.to_json();
  if (epilogue != Epilogue::none) j["epilogue"] = to_string(epilogue);
  if (seed_from) j["seed_from"] = seed_from->to_json();
  return j;
}

using nlohmann::json;
using namespace json_field;  // NOLINT: the typed readers of a record's keys

double relative_speed(const Record& r) { return r.peak_gflops > 0 ? r.gflops / r.peak_gflops : r.gflops; }

bool faster(const Record& a, const Record& b) { return relative_speed(a) > relative_speed(b); }

Record at_peak(Record r, double peak) {
  if (peak <= 0 || r.peak_gflops <= 0) return r;
  const double f = peak / r.peak_gflops;
  r.gflops *= f;
  r.real_gflops *= f;
  r.seconds /= f;
  for (double& s : r.samples) s /= f;
  r.peak_gflops = peak;
  return r;
}

namespace {
const char* seed_by_name(SeedOrigin::By b) { return b == SeedOrigin::transfer ? "transfer" : "start-from"; }
}  // namespace

nlohmann::json SeedOrigin::to_json() const {
  return json{{"by", seed_by_name(by)}, {"layer", layer}, {"config", config}, {"log", log}};
}

SeedOrigin SeedOrigin::from_json(const json& j) {
  if (!j.is_object()) throw Error(fmt::format("key 'seed_from' is {}, not a JSON object", describe(j)));
  SeedOrigin o;
  const std::string by = text(j, "by", true);
  if (by != seed_by_name(start_from) && by != seed_by_name(transfer))
    throw Error(fmt::format("key 'seed_from.by' is '{}'; it must be one of: start-from | transfer", by));
  o.by = by == seed_by_name(transfer) ? transfer : start_from;
  o.layer = text(j, "layer", true);
  o.config = text(j, "config", true);
  o.log = text(j, "log");
  return o;
}

const std::vector<Status>& record_statuses() { return all_statuses(); }

Record Record::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error(fmt::format("it is {}, not a JSON object", describe(j)));
  const json* version = field(j, "format_version", true, &json::is_number_integer, "an integer");
  if (*version != kRecordFormatVersion)
    throw Error(fmt::format("format_version {} is not {} (written by another convtune version)", version->dump(),
                            kRecordFormatVersion));
  Record r;
  r.layer = text(j, "layer", true);
  r.shape = text(j, "shape", true);
  r.config = text(j, "config", true);
  r.status = parse_status(text(j, "status", true), record_statuses());
  r.gflops = number(j, "gflops", true);
  r.choice = text(j, "choice");
  r.microkernels = array_of<std::string>(j, "microkernels", &json::is_string, "strings");
  if (j.contains("strategy")) r.strategy = text(j, "strategy");
  if (const json* v = counter(j, "seed")) r.seed = v->get<uint64_t>();
  if (const json* v = counter(j, "trial")) r.trial = v->get<int64_t>();
  r.detail = text(j, "detail");
  r.seconds = number(j, "seconds");
  r.samples = array_of<double>(j, "samples", &json::is_number, "numbers");
  r.wall_seconds = j.contains("wall_seconds") ? number(j, "wall_seconds") : r.seconds;
  r.probe_gflops = number(j, "probe_gflops");
  r.real_gflops = number(j, "real_gflops");
  r.percent_peak = number(j, "percent_peak");
  r.peak_gflops = number(j, "peak_gflops");
  r.compile_seconds = number(j, "compile_seconds");
  if (const json* c = field(j, "counters", false, &json::is_object, "an object")) {
    r.counter_names = text(*c, "names");
    r.counters = array_of<long long>(*c, "values", &json::is_number_integer, "integers");
  }
  r.isa = text(j, "isa");
  r.table = text(j, "table");
  r.table_fingerprint = text(j, "table_fingerprint");
  r.tool_version = text(j, "tool_version");
  r.timestamp = text(j, "timestamp");
  if (const json* v = field(j, "emulated", false, &json::is_boolean, "a boolean")) r.emulated = v->get<bool>();
  if (const json* v = counter(j, "threads")) {
    if (*v < 1 || *v > 4096) throw Error(fmt::format("key 'threads' is {}; it must be in [1, 4096]", v->dump()));
    r.threads = v->get<int>();
  }
  if (const json* v = field(j, "epilogue", false, &json::is_string, "a string")) {
    const std::string e = v->get<std::string>();
    const auto& names = epilogue_names();
    if (std::find(names.begin(), names.end(), e) == names.end())
      throw Error(fmt::format("key 'epilogue' is '{}'; it must be one of: {}", e, fmt::join(names, " | ")));
    r.epilogue = parse_epilogue(e);
  }
  r.note = text(j, "note");
  if (j.contains("machine")) r.machine = MachineId::from_json(j["machine"]);
  if (j.contains("search_info") && j["search_info"].is_object()) r.search_info = j["search_info"];
  if (j.contains("seed_from")) r.seed_from = SeedOrigin::from_json(j["seed_from"]);
  return r;
}

namespace {
const JsonLinesName kLogName{"log", "choose another --log"};
}  // namespace

void append_record(const std::string& path, const Record& r) { append_json_line(path, r.to_json(), kLogName); }

LogContents read_log(const std::string& path) {
  LogContents log;
  JsonLinesTail tail = read_json_lines(path, kLogName, "fix or remove that line", [&](const json& j, size_t line) {
    log.records.push_back(Record::from_json(j));
    log.lines.push_back(line);
  });
  log.complete_bytes = tail.complete_bytes;
  log.torn_bytes = tail.torn_bytes;
  return log;
}

uint64_t drop_torn_tail(const std::string& path, const LogContents& log) {
  return drop_torn_tail(path, kLogName, JsonLinesTail{log.complete_bytes, log.torn_bytes});
}

std::string torn_log_note(const std::string& path, uint64_t bytes) { return torn_tail_note(path, kLogName, bytes); }

std::vector<Record> read_records(const std::string& path) { return read_log(path).records; }

}  // namespace convtune
