#include "convtune/online/records.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "convtune/core/error.h"

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

Record Record::from_json(const nlohmann::json& j) {
  for (const char* key : {"format_version", "layer", "shape", "config", "status", "gflops"})
    if (!j.contains(key)) throw Error(fmt::format("key '{}' is missing", key));
  if (j.at("format_version").get<int>() != kRecordFormatVersion)
    throw Error(fmt::format("format_version {} is not {}", j.at("format_version").dump(), kRecordFormatVersion));
  Record r;
  r.layer = j.at("layer").get<std::string>();
  r.shape = j.at("shape").get<std::string>();
  r.config = j.at("config").get<std::string>();
  r.status = j.at("status").get<std::string>();
  r.gflops = j.at("gflops").get<double>();
  r.choice = j.value("choice", "");
  r.microkernels = j.value("microkernels", std::vector<std::string>{});
  r.strategy = j.value("strategy", "random");
  r.seed = j.value("seed", uint64_t(0));
  r.trial = j.value("trial", int64_t(0));
  r.detail = j.value("detail", "");
  r.seconds = j.value("seconds", 0.0);
  r.samples = j.value("samples", std::vector<double>{});
  r.real_gflops = j.value("real_gflops", 0.0);
  r.percent_peak = j.value("percent_peak", 0.0);
  r.peak_gflops = j.value("peak_gflops", 0.0);
  r.compile_seconds = j.value("compile_seconds", 0.0);
  if (j.contains("counters")) {
    r.counter_names = j["counters"].value("names", "");
    r.counters = j["counters"].value("values", std::vector<long long>{});
  }
  r.isa = j.value("isa", "");
  r.table = j.value("table", "");
  r.table_fingerprint = j.value("table_fingerprint", "");
  r.tool_version = j.value("tool_version", "");
  r.timestamp = j.value("timestamp", "");
  r.emulated = j.value("emulated", false);
  r.note = j.value("note", "");
  if (j.contains("search_info") && j["search_info"].is_object()) r.search_info = j["search_info"];
  return r;
}

void append_record(const std::string& path, const Record& r) {
  std::string line = r.to_json().dump() + "\n";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(fmt::format("cannot append to log '{}': {}; choose another --log", path, std::strerror(errno)));
  // One write() of the whole line: a kill leaves whole lines or a torn last one.
  ssize_t n = write(fd, line.data(), line.size());
  int err = errno;
  fsync(fd);
  close(fd);
  if (n != ssize_t(line.size()))
    throw Error(fmt::format("cannot append to log '{}': {}", path, std::strerror(err)));
}

std::vector<Record> read_records(const std::string& path) {
  std::ifstream f(path);
  if (!f) return {};
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(f, line))
    if (!line.empty()) lines.push_back(line);
  std::vector<Record> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    try {
      out.push_back(Record::from_json(nlohmann::json::parse(lines[i])));
    } catch (const std::exception& e) {
      if (i + 1 == lines.size()) break;  // torn last line from a killed run
      throw Error(fmt::format("log '{}' line {} is not a convtune record ({}); fix or remove that line",
                              path, i + 1, e.what()));
    }
  }
  return out;
}

}  // namespace convtune
