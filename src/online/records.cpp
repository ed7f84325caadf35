#include "convtune/online/records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/files.h"

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
  j["status"] = status;
  if (!detail.empty()) j["detail"] = detail;
  j["seconds"] = seconds;
  j["samples"] = samples;
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
  return j;
}

namespace {

using nlohmann::json;

// "a string", "an array", "null".
std::string describe(const json& v) {
  if (v.is_null()) return "null";
  return fmt::format("{} {}", v.is_object() || v.is_array() ? "an" : "a", v.type_name());
}

// The value of `key` if present; throws when it has another JSON type.
const json* field(const json& j, const char* key, bool required, bool (json::*is)() const noexcept,
                  const char* type) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) throw Error(fmt::format("key '{}' is missing", key));
    return nullptr;
  }
  if (!((*it).*is)())
    throw Error(fmt::format("key '{}' is {}, not {}", key, describe(*it), type));
  return &*it;
}

std::string text(const json& j, const char* key, bool required = false) {
  const json* v = field(j, key, required, &json::is_string, "a string");
  return v ? v->get<std::string>() : std::string();
}

double number(const json& j, const char* key, bool required = false) {
  const json* v = field(j, key, required, &json::is_number, "a number");
  if (!v) return 0;
  double d = v->get<double>();
  if (!std::isfinite(d)) throw Error(fmt::format("key '{}' is not a finite number", key));
  if (d < 0) throw Error(fmt::format("key '{}' is negative ({})", key, v->dump()));
  return d;
}

// A non-negative integer (seed, trial), or nullptr when absent.
const json* counter(const json& j, const char* key) {
  const json* v = field(j, key, false, &json::is_number_integer, "an integer");
  if (v && v->is_number_integer() && !v->is_number_unsigned() && v->get<int64_t>() < 0)
    throw Error(fmt::format("key '{}' is negative ({})", key, v->dump()));
  return v;
}

template <typename T>
std::vector<T> array_of(const json& j, const char* key, bool (json::*is)() const noexcept, const char* type) {
  const json* v = field(j, key, false, &json::is_array, "an array");
  std::vector<T> out;
  if (!v) return out;
  for (const auto& e : *v) {
    if (!(e.*is)()) throw Error(fmt::format("key '{}' holds {}, not only {}", key, e.type_name(), type));
    out.push_back(e.get<T>());
  }
  return out;
}

}  // namespace

const std::vector<std::string>& record_statuses() {
  static const std::vector<std::string> v = {"ok", "compile_error", "wrong_result", "crash", "timeout", "load_error"};
  return v;
}

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
  r.status = text(j, "status", true);
  const auto& statuses = record_statuses();
  if (std::find(statuses.begin(), statuses.end(), r.status) == statuses.end())
    throw Error(fmt::format("status '{}' is not one of: {}", r.status, fmt::join(statuses, ", ")));
  r.gflops = number(j, "gflops", true);
  r.choice = text(j, "choice");
  r.microkernels = array_of<std::string>(j, "microkernels", &json::is_string, "strings");
  if (j.contains("strategy")) r.strategy = text(j, "strategy");
  if (const json* v = counter(j, "seed")) r.seed = v->get<uint64_t>();
  if (const json* v = counter(j, "trial")) r.trial = v->get<int64_t>();
  r.detail = text(j, "detail");
  r.seconds = number(j, "seconds");
  r.samples = array_of<double>(j, "samples", &json::is_number, "numbers");
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
  r.note = text(j, "note");
  if (j.contains("search_info") && j["search_info"].is_object()) r.search_info = j["search_info"];
  return r;
}

void append_record(const std::string& path, const Record& r) {
  const std::string line = r.to_json().dump() + "\n";
  auto fail = [&](int err) {
    throw Error(fmt::format("cannot append to log '{}': {}; {}choose another --log", path, std::strerror(err),
                            err == ENOSPC || err == EDQUOT ? "free some space or " : ""));
  };
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) fail(errno);
  struct stat st {};
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const off_t start = regular ? st.st_size : 0;  // the tuner holds the log's lock: nobody else appends
  // One write() of the whole line: a kill leaves whole lines or a torn last
  // one (read_log and drop_torn_tail deal with it). write_all writes the rest
  // only after a short write, to learn the real errno (a full disk: ENOSPC).
  int err = write_all(fd, line.data(), line.size());
  if (err && regular) {
    int undone = ftruncate(fd, start);  // if this fails too, the next --resume cuts the torn line off
    (void)undone;
  }
  if (close(fd) != 0 && !err) err = errno;
  if (err) fail(err);
}

LogContents read_log(const std::string& path) {
  LogContents log;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return log;  // no log yet, or /dev/null and the like
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw Error(fmt::format("cannot read log '{}': {}; check the file or choose another --log", path,
                            std::strerror(errno)));
  const std::string data{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  size_t end = data.rfind('\n');
  log.complete_bytes = end == std::string::npos ? 0 : end + 1;
  log.torn_bytes = data.size() - log.complete_bytes;
  size_t pos = 0, line_no = 0;
  while (pos < log.complete_bytes) {
    size_t nl = data.find('\n', pos);
    std::string line = data.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      json j;
      try {
        j = json::parse(line);
      } catch (const json::parse_error& e) {
        throw Error(fmt::format("not a JSON object (syntax error at byte {})", e.byte));
      }
      log.records.push_back(Record::from_json(j));
      log.lines.push_back(line_no);
    } catch (const Error& e) {
      throw Error(fmt::format("log '{}' line {}: {}; fix or remove that line", path, line_no, e.what()));
    }
  }
  return log;
}

uint64_t drop_torn_tail(const std::string& path, const LogContents& log) {
  if (log.torn_bytes == 0) return 0;
  if (truncate(path.c_str(), off_t(log.complete_bytes)) != 0)
    throw Error(fmt::format("cannot repair the torn last line of log '{}': {}; remove that line by hand", path,
                            std::strerror(errno)));
  return log.torn_bytes;
}

std::vector<Record> read_records(const std::string& path) { return read_log(path).records; }

}  // namespace convtune
