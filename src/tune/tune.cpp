// The tuner's options and its reports (tune.h); run_tune itself is the
// sequence of stages in tune_stages.cpp.
#include "convtune/tune/tune.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/core/error.h"
#include "convtune/search/search.h"

namespace convtune {

void check_tune_options(const TuneOptions& opt) {
  // The CLI checks ranges at parse time; this guards every other caller.
  if (opt.trials < 1) throw Error(fmt::format("--trials is {}; give at least 1", opt.trials));
  if (opt.repeat < 1) throw Error(fmt::format("--repeat is {}; give at least 1", opt.repeat));
  if (!(std::isfinite(opt.min_repeat_ms) && opt.min_repeat_ms > 0))
    throw Error(fmt::format("--min-repeat-ms is {}; give a positive number of milliseconds", opt.min_repeat_ms));
  if (opt.top < 0) throw Error(fmt::format("--top is {}; give 0 or more", opt.top));
  if (opt.top_rounds < 0) throw Error(fmt::format("--top-rounds is {}; give 0 or more", opt.top_rounds));
  if (opt.duel_rounds < 0) throw Error(fmt::format("--duel-rounds is {}; give 0 or more", opt.duel_rounds));
  if (opt.threads < 1 || opt.threads > 4096)
    throw Error(fmt::format("--threads is {}; give a number of threads in [1, 4096]", opt.threads));
  if (!(std::isfinite(opt.timeout_s) && opt.timeout_s > 0))
    throw Error(fmt::format("--timeout is {}; give a positive number of seconds", opt.timeout_s));
  const auto names = strategy_names();
  if (std::find(names.begin(), names.end(), opt.search) == names.end())
    throw Error(fmt::format("unknown --search '{}'; choose one of: {}", opt.search, fmt::join(names, ", ")));
}

std::string default_out_dir(const std::string& layer, int threads, Epilogue epilogue) {
  const std::string base = "convtune-out/" + layer + epilogue_suffix(epilogue);
  return threads > 1 ? fmt::format("{}-t{}", base, threads) : base;
}

std::string tune_summary(const TuneResult& r) {
  std::string o;
  o += fmt::format("{}: {} ({}){}\n", r.interrupted ? "interrupted" : "done", r.layer, r.shape.to_string(),
                   r.epilogue == Epilogue::none ? "" : " with epilogue " + to_string(r.epilogue));
  o += fmt::format("trials: {} ({} this run), failed: {}, wall time: {:.1f} s{}\n", r.trials, r.new_trials,
                   r.failed, r.wall_s,
                   r.new_trials ? fmt::format(" ({:.2f} s per candidate)", r.wall_s / double(r.new_trials)) : "");
  const bool dropped = std::any_of(r.finalists.begin(), r.finalists.end(),
                                   [](const Finalist& f) { return f.status != Status::ok; });
  if (r.finalists.size() > 1 || dropped) o += finalists_table(r.finalists, r.top_rounds, r.duel_rounds);
  if (r.has_best) {
    o += fmt::format("best: {:.1f} GFLOP/s = {:.1f}% of peak {:.1f} GFLOP/s{} ({:.3f} ms; {:.1f} GFLOP/s on "
                     "multiply-adds not on padding){}\n",
                     r.best.gflops, 100 * r.best.gflops / r.peak_gflops, r.peak_gflops,
                     r.threads > 1 ? fmt::format(" on {} cores", r.threads) : "", r.best.seconds * 1e3,
                     r.best.real_gflops, r.emulated ? " (emulated: timings not meaningful)" : "");
    if (r.top_rounds > 0)
      o += fmt::format("  (re-measured: the median of {} rounds; {:.1f} GFLOP/s in the search)\n", r.top_rounds,
                       r.best_search_gflops);
    o += fmt::format("config: {}\n", r.best.config);
    if (std::any_of(r.finalists.begin(), r.finalists.end(), [](const Finalist& f) { return f.winner; }))
      o += "verified: at every output element (the search checks --check-points samples)\n";
    o += fmt::format("kernel: {} {}\n", r.kernel_c, r.kernel_h);
  } else if (!r.finalists.empty()) {
    o += "best: none (no finalist passed the check at every output element)\n";
  } else {
    o += "best: none (no candidate ran correctly)\n";
  }
  if (!r.notes.empty()) o += "note: " + r.notes + "\n";
  o += fmt::format("log: {}\n", r.log_path);
  return o;
}

std::string tune_json(const TuneResult& r) {
  nlohmann::json j;
  j["layer"] = r.layer;
  j["shape"] = r.shape.to_string();
  if (r.epilogue != Epilogue::none) j["epilogue"] = to_string(r.epilogue);
  j["search"] = r.search;
  j["trials"] = r.trials;
  j["new_trials"] = r.new_trials;
  j["failed"] = r.failed;
  j["wall_s"] = r.wall_s;
  j["peak_gflops"] = r.peak_gflops;
  j["threads"] = r.threads;
  if (r.peak_end_gflops > 0) j["peak_end_gflops"] = r.peak_end_gflops;
  j["space_size"] = r.space_size;
  j["interrupted"] = r.interrupted;
  j["log"] = r.log_path;
  j["table"] = r.table_origin;
  if (r.emulated) j["emulated"] = true;
  if (!r.notes.empty()) j["notes"] = r.notes;
  if (r.has_best) {
    j["best"] = {{"config", r.best.config},
                 {"gflops", r.best.gflops},
                 {"real_gflops", r.best.real_gflops},
                 {"percent_peak", 100 * r.best.gflops / r.peak_gflops},
                 {"seconds", r.best.seconds},
                 {"search_gflops", r.best_search_gflops > 0 ? r.best_search_gflops : r.best.gflops},
                 {"microkernels", r.best.microkernels},
                 {"kernel_c", r.kernel_c},
                 {"kernel_h", r.kernel_h}};
  } else {
    j["best"] = nullptr;
  }
  j["finalists"] = finalists_json(r.finalists);
  j["top_rounds"] = r.top_rounds;
  j["duel_rounds"] = r.duel_rounds;
  if (!r.finalists_path.empty()) j["finalists_file"] = r.finalists_path;
  return j.dump() + "\n";  // one line: --json prints JSON Lines
}

}  // namespace convtune
