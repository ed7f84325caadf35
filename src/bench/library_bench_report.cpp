// What `convtune bench --library` prints: a line per layer, the whole
// sequence and the sum of the layers, or one JSON object.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "convtune/bench/library_bench.h"
#include "convtune/core/machine.h"
#include "report_text.h"

namespace convtune {

namespace {

const char* const kNames[] = {"library", "oneDNN", "XNNPACK"};

// The other's time over the library's (above 1: the library is faster); 0
// when either did not run.
double speed_ratio(const BenchEntry* lib, const BenchEntry* other) {
  return lib && other && lib->ran() && other->ran() && lib->seconds > 0 ? other->seconds / lib->seconds : 0;
}

std::string ms(const BenchEntry* e) { return e && e->ran() ? fmt::format("{:.4f}", e->seconds * 1e3) : "-"; }
std::string times(double q) { return q > 0 ? fmt::format("{:.2f}", q) : "-"; }

std::string row(size_t width, const std::string& label, const std::string& count, const std::string& lib,
                const std::string& dn, const std::string& xn, const std::string& q_dn, const std::string& q_xn) {
  return fmt::format("{:<{}} {:>5} {:>11} {:>11} {:>11} {:>11} {:>12}\n", label, width, count, lib, dn, xn, q_dn, q_xn);
}

std::string row(size_t width, const std::string& label, int count, const BenchEntry* lib, const BenchEntry* dn,
                const BenchEntry* xn) {
  return row(width, label, std::to_string(count), ms(lib), ms(dn), ms(xn), times(speed_ratio(lib, dn)),
             times(speed_ratio(lib, xn)));
}

nlohmann::json entry_json(const BenchEntry& e) {
  if (!e.ran()) return {{"missing", e.missing}};
  return {{"impl", e.impl},       {"seconds", e.seconds},           {"wall_seconds", e.wall_seconds},
          {"samples", e.samples}, {"probe_gflops", e.probe_gflops}, {"max_error", e.max_error}};
}

nlohmann::json ratio_json(double q) { return q > 0 ? nlohmann::json(q) : nlohmann::json(nullptr); }

}  // namespace

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
    o += row(width, l.layer, l.count, l.find("library"), l.find("oneDNN"), l.find("XNNPACK"));
  o += row(width, "sequence", int(r.sequence.size()), r.total("library"), r.total("oneDNN"), r.total("XNNPACK"));
  BenchEntry sums[3];
  for (int i = 0; i < 3; ++i) {
    sums[i].name = kNames[i];
    sums[i].seconds = r.sum_of_layers(kNames[i]);
    if (sums[i].seconds <= 0) sums[i].missing = "-";
  }
  o += row(width, "sum of layers", int(r.sequence.size()), &sums[0], &sums[1], &sums[2]);
  o += "(ms per call at the clock probe's reference speed, the implementations of a row timed in interleaved rounds: "
       "one layer, or the whole sequence of the network's convolutions in order; sum of layers: count x each layer's "
       "time alone; lib/X: X's time over the library's, above 1 the library is faster)\n";
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
    x["ratio_library_onednn"] = ratio_json(speed_ratio(l.find("library"), l.find("oneDNN")));
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
  j["ratio_library_onednn"] = ratio_json(speed_ratio(r.total("library"), r.total("oneDNN")));
  j["ratio_library_xnnpack"] = ratio_json(speed_ratio(r.total("library"), r.total("XNNPACK")));
  return j.dump() + "\n";
}

}  // namespace convtune
