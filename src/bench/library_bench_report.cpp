// What `convtune bench --library` prints: a line per layer, the whole
// sequence and the sum of the layers, or one JSON object.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "convtune/bench/library_bench.h"
#include "convtune/core/error.h"
#include "convtune/core/machine.h"
#include "convtune/core/shape.h"
#include "report_text.h"

namespace convtune {

namespace {

const char* const kNames[] = {"library", "oneDNN", "XNNPACK"};

std::string ms(const BenchEntry* e) { return e && e->ran() ? fmt::format("{:.4f}", e->seconds * 1e3) : "-"; }
std::string times(double q) { return q > 0 ? fmt::format("{:.2f}", q) : "-"; }

std::string row(size_t width, const std::string& label, const std::string& count, const std::string& lib,
                const std::string& dn, const std::string& xn, const std::string& q_dn, const std::string& q_xn) {
  return fmt::format("{:<{}} {:>5} {:>11} {:>11} {:>11} {:>11} {:>12}\n", label, width, count, lib, dn, xn, q_dn, q_xn);
}

std::string row(size_t width, const std::string& label, int count, const BenchEntry* lib, const BenchEntry* dn,
                const BenchEntry* xn, double q_dn) {
  return row(width, label, std::to_string(count), ms(lib), ms(dn), ms(xn), times(q_dn), times(speed_ratio(lib, xn)));
}

// The paired ratios' range, "0.98-1.12", or "-".
std::string range(const std::vector<double>& q) {
  if (q.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(q.begin(), q.end());
  return fmt::format("{:.2f}-{:.2f}", *lo, *hi);
}

nlohmann::json entry_json(const BenchEntry& e) {
  if (!e.ran()) return {{"missing", e.missing}};
  return {{"impl", e.impl},       {"seconds", e.seconds},           {"wall_seconds", e.wall_seconds},
          {"samples", e.samples}, {"probe_gflops", e.probe_gflops}, {"max_error", e.max_error}};
}

nlohmann::json ratio_json(double q) { return q > 0 ? nlohmann::json(q) : nlohmann::json(nullptr); }

}  // namespace

double library_ratio(const LibraryBenchResult& r) {
  return paired_ratio(speed_ratio(r.total("library"), r.total("oneDNN")), r.process_ratios);
}

double library_ratio(const LibraryLayer& l) {
  return paired_ratio(speed_ratio(l.find("library"), l.find("oneDNN")), l.process_ratios);
}

std::string library_bench_summary(const LibraryBenchResult& r) {
  const std::string where = r.threads > 1 ? fmt::format("CPUs {}, {} threads each", cpu_list(r.cpus), r.threads)
                                          : fmt::format("CPU {}", r.cpu);
  std::string o = fmt::format(
      "bench --library: {} from {} ({} convolution{} in sequence, {} distinct shape{}) on {}; {}, {}\n", r.name,
      r.dir, r.sequence.size(), r.sequence.size() == 1 ? "" : "s", r.layers.size(), r.layers.size() == 1 ? "" : "s",
      where, r.machine, r.date);
  size_t width = std::string("sum of layers").size();
  for (const auto& l : r.layers) width = std::max(width, l.layer.size());
  o += row(width, "layer", "count", "library ms", "oneDNN ms", "XNNPACK ms", "lib/oneDNN", "lib/XNNPACK");
  for (const auto& l : r.layers)
    o += row(width, l.layer, l.count, l.find("library"), l.find("oneDNN"), l.find("XNNPACK"), library_ratio(l));
  o += row(width, "sequence", int(r.sequence.size()), r.total("library"), r.total("oneDNN"), r.total("XNNPACK"),
           library_ratio(r));
  BenchEntry sums[3];
  for (int i = 0; i < 3; ++i) {
    sums[i].name = kNames[i];
    sums[i].seconds = r.sum_of_layers(kNames[i]);
    if (sums[i].seconds <= 0) sums[i].missing = "-";
  }
  o += row(width, "sum of layers", int(r.sequence.size()), &sums[0], &sums[1], &sums[2],
           speed_ratio(&sums[0], &sums[1]));
  o += "(ms per call at the clock probe's reference speed, the implementations of a row timed in interleaved rounds: "
       "one layer, or the whole sequence of the network's convolutions in order; sum of layers: count x each layer's "
       "time alone; lib/X: X's time over the library's, above 1 the library is faster)\n";
  if (r.processes > 1)
    o += fmt::format("processes: {}, each with its own buffers; times are the medians of theirs; lib/oneDNN is the "
                     "median of their paired ratios, the sequence's ranging {} (a layer's range is in --json)\n",
                     r.processes, range(r.process_ratios));
  for (const char* name : {"oneDNN", "XNNPACK"}) {
    const BenchEntry* t = r.total(name);
    if (t && !t->ran()) {
      o += fmt::format("{}: missing: {}\n", name, t->missing);
      continue;
    }
    std::map<std::string, int> impls;  // what ran, and on how many layers
    for (const auto& l : r.layers)
      if (const BenchEntry* e = l.find(name); e && e->ran()) impls[e->impl]++;
    std::vector<std::string> parts;
    for (const auto& [impl, count] : impls) parts.push_back(fmt::format("{} ({} layer{})", impl, count,
                                                                        count == 1 ? "" : "s"));
    o += fmt::format("{} ran: {}\n", name, fmt::join(parts, ", "));
  }
  o += fmt::format("library: {}/lib{}.a through {}_conv{}\n", r.dir, r.name, r.name,
                   r.openmp ? " (some kernels with OpenMP threads, as exported)" : "");
  return o;
}

std::string library_bench_json(const LibraryBenchResult& r) {
  nlohmann::json j;
  j["library"] = r.name;
  j["dir"] = r.dir;
  j["openmp"] = r.openmp;
  j["cpu"] = r.cpu;
  j["threads"] = r.threads;
  j["cpus"] = r.cpus;
  j["machine"] = r.machine;
  j["date"] = r.date;
  j["layers"] = nlohmann::json::array();
  for (const auto& l : r.layers) {
    nlohmann::json x = {{"layer", l.layer}, {"shape", l.shape.to_string()}, {"count", l.count},
                        {"flops", l.shape.flops()}};
    for (const auto& e : l.entries) x[bench_json_key(e.name)] = entry_json(e);
    x["ratio_library_onednn"] = ratio_json(library_ratio(l));
    if (r.processes > 1) x["process_ratios_library_onednn"] = l.process_ratios;
    x["ratio_library_xnnpack"] = ratio_json(speed_ratio(l.find("library"), l.find("XNNPACK")));
    j["layers"].push_back(x);
  }
  j["sequence"] = nlohmann::json::array();
  for (size_t i : r.sequence) j["sequence"].push_back(r.layers[i].layer);
  nlohmann::json total;
  for (const auto& e : r.totals) {
    nlohmann::json x = entry_json(e);
    if (e.ran()) x.erase("max_error");  // checked per layer
    if (const double s = r.sum_of_layers(e.name); s > 0) x["sum_of_layers_seconds"] = s;
    total[bench_json_key(e.name)] = x;
  }
  j["total"] = total;
  // As bench's ratio_convtune_onednn: the other's time over the library's.
  j["ratio_library_onednn"] = ratio_json(library_ratio(r));
  if (r.processes > 1) {
    j["processes"] = r.processes;
    j["process_ratios_library_onednn"] = r.process_ratios;
    j["ratio_of_medians_library_onednn"] = ratio_json(speed_ratio(r.total("library"), r.total("oneDNN")));
  }
  j["ratio_library_xnnpack"] = ratio_json(speed_ratio(r.total("library"), r.total("XNNPACK")));
  return j.dump() + "\n";
}

LibraryBenchResult library_bench_from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error("bench --library's JSON is not a JSON object");
  try {
    LibraryBenchResult r;
    r.name = j.at("library").get<std::string>();
    r.dir = j.at("dir").get<std::string>();
    r.openmp = j.at("openmp").get<bool>();
    r.cpu = j.at("cpu").get<int>();
    r.threads = j.at("threads").get<int>();
    r.cpus = j.at("cpus").get<std::vector<int>>();
    r.machine = j.at("machine").get<std::string>();
    r.date = j.at("date").get<std::string>();
    std::map<std::string, size_t> index;
    for (const nlohmann::json& x : j.at("layers")) {
      LibraryLayer l;
      l.layer = x.at("layer").get<std::string>();
      l.shape = parse_shape(x.at("shape").get<std::string>());
      l.count = x.at("count").get<int>();
      for (const char* name : kNames) l.entries.push_back(entry_from_json(name, x.at(bench_json_key(name))));
      if (x.contains("process_ratios_library_onednn"))
        l.process_ratios = x["process_ratios_library_onednn"].get<std::vector<double>>();
      index[l.layer] = r.layers.size();
      r.layers.push_back(l);
    }
    for (const nlohmann::json& name : j.at("sequence")) {
      const auto it = index.find(name.get<std::string>());
      if (it == index.end()) throw Error("bench --library's JSON names a layer in its sequence that it lacks");
      r.sequence.push_back(it->second);
    }
    for (const char* name : kNames) r.totals.push_back(entry_from_json(name, j.at("total").at(bench_json_key(name))));
    r.processes = j.value("processes", 1);
    if (j.contains("process_ratios_library_onednn"))
      r.process_ratios = j["process_ratios_library_onednn"].get<std::vector<double>>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("bench --library's JSON lacks a field or has a wrong type: {}", e.what()));
  }
}

}  // namespace convtune
