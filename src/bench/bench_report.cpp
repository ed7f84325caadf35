// What `convtune bench` prints: a table per layer, or one JSON object, and
// that object read back (bench --processes merges its processes' objects).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "convtune/bench/bench.h"
#include "convtune/core/error.h"
#include "convtune/core/machine.h"
#include "convtune/execution/measure.h"
#include "report_text.h"
#include "triad.h"

namespace convtune {

double ratio_of_medians(const BenchResult& r) { return speed_ratio(r.find("convtune"), r.find("oneDNN")); }

// Paired: each process timed both, interleaved, at one clock and with one set of
// pages, so its ratio cancels what moves between processes. The ratio of the
// medians can pair one process's convtune time with another's oneDNN time, and
// read below every process's own ratio but one.
double bench_ratio(const BenchResult& r) { return paired_ratio(ratio_of_medians(r), r.process_ratios); }

std::string bench_summary(const BenchResult& r) {
  const double nominal = r.shape.flops(), real = r.shape.real_flops();
  const std::string where =
      r.threads > 1 ? fmt::format("CPUs {}, {} threads each, peak {:.1f} GFLOP/s ({} x one core's)",
                                  cpu_list(r.cpus), r.threads, r.peak_gflops, r.threads)
                    : fmt::format("CPU {}, peak {:.1f} GFLOP/s", r.cpu, r.peak_gflops);
  std::string o = fmt::format("bench: {} ({}) on {} measured now; {}, {}\n", r.layer, r.shape.to_string(), where,
                              r.machine, r.date);
  if (r.epilogue != Epilogue::none)
    o += fmt::format("epilogue: {} in every implementation: fused by convtune, oneDNN post-ops, a plain loop after "
                     "each GEMM for im2col+OpenBLAS (timed; not counted in the FLOPs)\n",
                     to_string(r.epilogue));
  o += fmt::format("work: {:.1f} MFLOP nominal, {:.1f} MFLOP of real multiply-adds ({:.1f}%; the rest land on zero "
                   "padding)\n",
                   nominal * 1e-6, real * 1e-6, 100 * real / nominal);
  o += "times: at the peak's speed: each measurement scaled by the speed of the peak loop timed beside it (the "
       "clock probe; wall-clock times in --json)\n";
  const double bytes = r.shape.tensor_bytes();
  o += fmt::format("memory: {:.2f} MB of tensors (input, weights, output once each); GB/s below is that over the "
                   "time, the STREAM triad's its own 3 arrays of the same size over its time\n",
                   bytes * 1e-6);
  o += fmt::format("{:<16} {:>9} {:>9} {:>7}  {:>12} {:>11} {:>7}  {}\n", "implementation", "time ms", "GFLOP/s",
                   "% peak", "real GFLOP/s", "real % peak", "GB/s", "what ran");
  for (const auto& e : r.entries) {
    if (!e.ran()) {
      o += fmt::format("{:<16} {:>9} {:>9} {:>7}  {:>12} {:>11} {:>7}  missing: {}\n", e.name, "-", "-", "-", "-", "-",
                       "-", e.missing);
      continue;
    }
    if (e.name == "STREAM triad") {
      o += fmt::format("{:<16} {:>9.3f} {:>9} {:>7}  {:>12} {:>11} {:>7.1f}  {}\n", e.name, e.seconds * 1e3, "-", "-",
                       "-", "-", triad_bytes(r.shape.tensor_bytes()) / e.seconds * 1e-9, e.impl);
      continue;
    }
    const double g = nominal / e.seconds * 1e-9, rg = real / e.seconds * 1e-9;
    std::string what = e.name != "convtune" ? e.impl
                       : r.config_given     ? std::string("given with --config")
                                            : fmt::format("best of {} in the log", r.trials);
    o += fmt::format("{:<16} {:>9.3f} {:>9.1f} {:>7.1f}  {:>12.1f} {:>11.1f} {:>7.1f}  {}\n", e.name, e.seconds * 1e3,
                     g, 100 * g / r.peak_gflops, rg, 100 * rg / r.peak_gflops, bytes / e.seconds * 1e-9, what);
  }
  if (double q = bench_ratio(r))
    o += fmt::format("convtune/oneDNN: {:.2f} (oneDNN's time over convtune's{})\n", q,
                     r.process_ratios.empty() ? "" : "; the median of the processes' ratios");
  if (r.processes > 1)
    o += fmt::format("processes: {}, each with its own buffers; times are the medians of theirs; convtune/oneDNN "
                     "in each: {:.3f}; their times' medians' ratio: {:.3f}\n",
                     r.processes, fmt::join(r.process_ratios, " "), ratio_of_medians(r));
  o += fmt::format("convtune kernel: {}\n", r.best.config);
  o += r.config_given ? std::string("log: none (--config)\n") : fmt::format("log: {}\n", r.log_path);
  return o;
}

std::string bench_json(const BenchResult& r) {
  nlohmann::json j;
  j["layer"] = r.layer;
  j["shape"] = r.shape.to_string();
  if (r.epilogue != Epilogue::none) j["epilogue"] = to_string(r.epilogue);
  j["cpu"] = r.cpu;
  j["threads"] = r.threads;
  j["cpus"] = r.cpus;
  j["peak_gflops"] = r.peak_gflops;
  j["machine"] = r.machine;
  j["date"] = r.date;
  j["flops"] = r.shape.flops();
  j["real_flops"] = r.shape.real_flops();
  j["bytes"] = r.shape.tensor_bytes();
  j["log"] = r.log_path;
  j["trials"] = r.trials;
  j["config"] = r.best.config;
  if (r.config_given) j["config_given"] = true;
  j["log_gflops"] = r.best.gflops;
  for (const auto& e : r.entries) {
    nlohmann::json x;
    if (!e.ran()) {
      x["missing"] = e.missing;
    } else {
      const double g = r.shape.flops() / e.seconds * 1e-9, rg = r.shape.real_flops() / e.seconds * 1e-9;
      x = {{"impl", e.impl},          {"seconds", e.seconds},
           {"samples", e.samples},    {"wall_seconds", e.wall_seconds},
           {"probe_gflops", e.probe_gflops}, {"gflops", g},
           {"percent_peak", 100 * g / r.peak_gflops},
           {"real_gflops", rg},       {"real_percent_peak", 100 * rg / r.peak_gflops},
           {"max_error", e.max_error}};
      // GB/s: the layer's tensors over this time; the triad's own arrays over its time.
      x["gbs"] = (e.name == "STREAM triad" ? triad_bytes(r.shape.tensor_bytes()) : r.shape.tensor_bytes()) / e.seconds * 1e-9;
      if (e.name == "STREAM triad")
        for (const char* k : {"gflops", "percent_peak", "real_gflops", "real_percent_peak"}) x.erase(k);
    }
    j[bench_json_key(e.name)] = x;
  }
  if (r.processes > 1) {
    j["processes"] = r.processes;
    j["process_ratios"] = r.process_ratios;
  }
  const double q = bench_ratio(r), m = ratio_of_medians(r);
  j["ratio_convtune_onednn"] = q > 0 ? nlohmann::json(q) : nlohmann::json(nullptr);
  if (r.processes > 1) j["ratio_of_medians"] = m > 0 ? nlohmann::json(m) : nlohmann::json(nullptr);
  return j.dump() + "\n";  // one line: --json prints JSON Lines
}

BenchEntry entry_from_json(const std::string& name, const nlohmann::json& x) {
  BenchEntry e(name);
  if (x.contains("missing")) {
    e.missing = x["missing"].get<std::string>();
    return e;
  }
  e.impl = x.at("impl").get<std::string>();
  e.seconds = x.at("seconds").get<double>();
  e.samples = x.at("samples").get<std::vector<double>>();
  e.wall_seconds = x.at("wall_seconds").get<double>();
  e.probe_gflops = x.at("probe_gflops").get<std::vector<double>>();
  e.max_error = x.value("max_error", 0.0);  // bench --library's totals leave it to their layers
  return e;
}

BenchResult bench_from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error("bench's JSON is not a JSON object");
  try {
    BenchResult r;
    r.layer = j.at("layer").get<std::string>();
    r.shape = parse_shape(j.at("shape").get<std::string>());
    if (j.contains("epilogue")) r.epilogue = parse_epilogue(j["epilogue"].get<std::string>());
    r.cpu = j.at("cpu").get<int>();
    r.threads = j.at("threads").get<int>();
    r.cpus = j.at("cpus").get<std::vector<int>>();
    r.peak_gflops = j.at("peak_gflops").get<double>();
    r.machine = j.at("machine").get<std::string>();
    r.date = j.at("date").get<std::string>();
    r.log_path = j.at("log").get<std::string>();
    r.trials = j.at("trials").get<int64_t>();
    r.best.config = j.at("config").get<std::string>();
    r.config_given = j.value("config_given", false);
    r.best.gflops = j.at("log_gflops").get<double>();
    for (const BenchImpl& impl : kBenchImpls) {
      if (!j.contains(impl.key)) continue;
      r.entries.push_back(entry_from_json(impl.name, j[impl.key]));
    }
    r.processes = j.value("processes", 1);
    if (j.contains("process_ratios")) r.process_ratios = j["process_ratios"].get<std::vector<double>>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("bench's JSON lacks a field or has a wrong type: {}", e.what()));
  }
}

std::string bench_scaling(const std::vector<BenchResult>& runs) {
  if (runs.empty()) return "";
  const double flops = runs[0].shape.flops();
  auto seconds = [](const BenchResult& r, const char* name) {
    const BenchEntry* e = r.find(name);
    return e && e->ran() ? e->seconds : 0.0;
  };
  auto cell = [&](double s, double first) {  // time, GFLOP/s and speed-up over the first count
    if (s <= 0) return fmt::format("{:>9} {:>9} {:>8}", "-", "-", "-");
    return fmt::format("{:>9.3f} {:>9.1f} {:>8}", s * 1e3, flops / s * 1e-9,
                       first > 0 ? fmt::format("{:.2f}x", first / s) : std::string("-"));
  };
  std::string o = fmt::format("scaling: {} ({})\n{:>7}  {:>9} {:>9} {:>8}  {:>9} {:>9} {:>8}  {:>15}\n", runs[0].layer,
                              runs[0].shape.to_string(), "threads", "convtune", "GFLOP/s", "speed-up", "oneDNN",
                              "GFLOP/s", "speed-up", "convtune/oneDNN");
  const double ct0 = seconds(runs[0], "convtune"), dn0 = seconds(runs[0], "oneDNN");
  for (const BenchResult& r : runs) {
    const double q = bench_ratio(r);
    o += fmt::format("{:>7}  {}  {}  {:>15}\n", r.threads, cell(seconds(r, "convtune"), ct0),
                     cell(seconds(r, "oneDNN"), dn0), q > 0 ? fmt::format("{:.2f}", q) : std::string("-"));
  }
  o += "(times in ms; speed-up over the first thread count; convtune/oneDNN is oneDNN's time over convtune's)\n";
  return o;
}

}  // namespace convtune
