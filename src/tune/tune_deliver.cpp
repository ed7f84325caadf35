// run_tune's last stages (tune_stages.h): the finalists (the K best
// re-measured interleaved in fresh processes, the winner checked at every
// output element, finalist.h) and the best kernel's files.
#include <algorithm>

#include <fmt/format.h>

#include "convtune/core/files.h"
#include "convtune/core/interrupt.h"
#include "convtune/tune/finalist.h"
#include "convtune/tune/finalist_duel.h"
#include "convtune/tune/tune_stages.h"

namespace convtune {

namespace {

bool stop_requested() { return interrupted(); }

// The K best of the resumed and the new records, at this process's peak;
// those of a resumed log are built again (the search built only its own).
std::vector<Record> gather_finalists(TuneSession& s) {
  TuneResult& res = s.res;
  std::vector<Record> all = s.log.records;
  all.insert(all.end(), s.run_records.begin(), s.run_records.end());
  std::vector<Record> top = top_records(all, size_t(s.no_finalists ? 1 : std::max(1, s.opt.top)));
  std::vector<Config> to_build;
  std::vector<std::string> names;
  std::vector<size_t> which;
  for (size_t i = 0; i < top.size(); ++i) {
    Finalist f;
    f.config = top[i].config;
    f.search_gflops = at_peak(top[i], res.peak_gflops).gflops;
    auto it = s.exe_of.find(f.config);
    if (it != s.exe_of.end()) {
      f.exe = it->second;
    } else {  // from a resumed log
      to_build.push_back(parse_config(f.config));
      names.push_back(fmt::format("final{:02}", i));
      which.push_back(i);
    }
    res.finalists.push_back(f);
  }
  if (to_build.empty()) return top;
  std::vector<GeneratedKernel> gen;
  std::vector<CompileJob> cjobs;
  const std::vector<CompileResult> built = tune_generate_and_build(s, to_build, names, gen, cjobs);
  for (size_t j = 0; j < which.size(); ++j) {
    Finalist& f = res.finalists[which[j]];
    if (built[j].ok) {
      f.exe = cjobs[j].output;
    } else {
      f.status = Status::compile_error;
      f.detail = built[j].log.substr(0, 600);
    }
  }
  return top;
}

// Re-measured and dueled (natively, when there is more than one), ranked,
// then checked at every output element in rank order: the first to pass
// wins. Returns its index, or -1 (none passed, or interrupted).
int rank_finalists_and_check(TuneSession& s) {
  const TuneOptions& opt = s.opt;
  TuneResult& res = s.res;
  Runner& runner = *s.runner;
  if (res.finalists.size() > 1 && !res.emulated) {  // emulated timings rank nothing
    res.top_rounds = opt.top_rounds;
    if (opt.top_rounds > 0)
      remeasure(runner, res.finalists, s.protocol, opt.top_rounds, opt.timeout_s, opt.shape.flops(),
                opt.shape.real_flops(), res.peak_gflops, stop_requested);
    if (opt.duel_rounds > 0) {  // samples a fifth of a measurement: 20 ms at the default
      const DuelSetup ds{s.isa, opt.shape, opt.epilogue, fmt::format("{} ({})", s.table.origin, s.table.created),
                         s.cpu, opt.threads, s.wd->path(), s.jobs, runner.pch_flags(), opt.duel_rounds,
                         opt.min_repeat_ms / 5, opt.timeout_s, opt.check_points};
      const std::string note = duel(ds, res.finalists, stop_requested);
      if (!note.empty()) s.notes.push_back(note);
      if (std::any_of(res.finalists.begin(), res.finalists.end(), [](const Finalist& x) { return x.duel_gflops > 0; }))
        res.duel_rounds = opt.duel_rounds;
    }
  }
  rank_finalists(res.finalists);
  return interrupted() ? -1
                       : full_check(runner, ProblemData::make(opt.shape, 0, 20221101, opt.epilogue), res.finalists,
                                    opt.timeout_s, stop_requested);
}

// The best becomes the winner w with its re-measured figures; interrupted,
// the search's best stays, unconfirmed, and the finalists are dropped.
void settle_winner(TuneSession& s, const std::vector<Record>& top, int w) {
  TuneResult& res = s.res;
  res.interrupted = interrupted();
  if (res.interrupted) {  // as for a search interrupted
    res.finalists.clear();
    res.top_rounds = 0;
    res.duel_rounds = 0;
  } else if (w < 0) {
    res.has_best = false;
    s.notes.push_back("no finalist passed the check at every output element: no kernel written");
  } else {
    Finalist& f = res.finalists[size_t(w)];
    f.winner = true;
    res.best = *std::find_if(top.begin(), top.end(), [&](const Record& r) { return r.config == f.config; });
    res.best_search_gflops = res.best.gflops;
    if (f.gflops > 0) {
      res.best.seconds = f.seconds;
      res.best.gflops = f.gflops;
      res.best.real_gflops = s.opt.shape.real_flops() / f.seconds * 1e-9;
      res.best.percent_peak = 100 * f.gflops / res.peak_gflops;
    }
  }
}

void write_finalists(TuneSession& s, int w) {
  TuneResult& res = s.res;
  if (res.finalists.empty()) return;
  nlohmann::json j{{"layer", res.layer},
                   {"shape", s.opt.shape.to_string()},
                   {"top", s.opt.top},
                   {"rounds", res.top_rounds},
                   {"duel_rounds", res.duel_rounds},
                   {"winner", w >= 0 ? nlohmann::json(res.finalists[size_t(w)].config) : nlohmann::json()},
                   {"finalists", finalists_json(res.finalists)}};
  res.finalists_path = s.out_dir + "/finalists.json";
  write_file_atomic(res.finalists_path, j.dump(2) + "\n", "the finalists",
                    fmt::format("choose another --out; the log '{}' keeps every result", res.log_path));
}

}  // namespace

void tune_finalists(TuneSession& s) {
  if (!s.res.has_best || s.res.interrupted) return;
  const std::vector<Record> top = gather_finalists(s);
  const int w = rank_finalists_and_check(s);
  settle_winner(s, top, w);
  write_finalists(s, w);
}

void tune_deliver(TuneSession& s) {
  TuneResult& res = s.res;
  res.notes = fmt::format("{}", fmt::join(s.notes, "; "));
  if (!res.has_best) return;
  // The best may come from a resumed log: regenerate it from its text.
  auto it = s.kernels.find(res.best.config);
  GeneratedKernel k = it != s.kernels.end()
                          ? it->second
                          : generate_conv(s.isa, {s.opt.shape, parse_config(res.best.config), s.fn,
                                                  fmt::format("{} ({})", s.table.origin, s.table.created),
                                                  s.opt.epilogue});
  res.kernel_c = s.out_dir + "/" + res.layer + ".c";
  res.kernel_h = s.out_dir + "/" + res.layer + ".h";
  const std::string fix = fmt::format("choose another --out; the log '{}' keeps every result", res.log_path);
  write_file_atomic(res.kernel_c, k.c_source, "the best kernel", fix);
  write_file_atomic(res.kernel_h, k.header, "the best kernel's header", fix);
}

}  // namespace convtune
