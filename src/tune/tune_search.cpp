// run_tune's measuring stages (tune_stages.h): the runner and its peak, the
// search loop (propose -> generate -> compile, in parallel with nothing
// measured meanwhile -> verify and time one at a time -> record), the peak
// re-checked at the end.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "convtune/core/files.h"
#include "convtune/core/interrupt.h"
#include "convtune/core/machine.h"
#include "convtune/core/progress.h"
#include "convtune/core/timestamp.h"
#include "convtune/execution/timer.h"
#include "convtune/tune/tune_stages.h"
#include "convtune/ukernel/peak.h"

namespace convtune {

namespace {

std::vector<std::string> microkernels_of(const Space& space, const Config& c, const std::string& isa) {
  int i = choice_of(space, c);
  if (i < 0) return {};
  const UkChoice& ch = space.choices[size_t(i)];
  std::vector<std::string> v{ukernel_name(ch.uk, isa)};
  if (ch.pair) v.push_back(ukernel_name(ch.uk2, isa));
  return v;
}

// The next batch: --start-from's configurations first, then the strategy's;
// never more than the trials left before `cap`. Empty: nothing left to try.
std::vector<Config> next_candidates(TuneSession& s, size_t batch, int64_t cap) {
  const int64_t left = cap - s.res.trials;
  std::vector<Config> cands;
  while (!s.starts.empty() && int64_t(cands.size()) < left) {
    cands.push_back(s.starts.front());
    s.starts.pop_front();
  }
  if (cands.empty()) cands = s.strategy->propose(size_t(std::min<int64_t>(batch, left)));
  return cands;
}

std::string best_text(const TuneResult& res) {
  if (!res.has_best) return {};
  return fmt::format("{:.1f} GFLOP/s ({:.1f}%)", res.best.gflops, 100 * res.best.gflops / res.peak_gflops);
}

}  // namespace

void tune_start_runner(TuneSession& s) {
  const TuneOptions& opt = s.opt;
  TuneResult& res = s.res;
  // Ctrl-C from here on, the opening peak measurement included: stop with a
  // line (and the lock and work dir removed), not by the default action.
  install_interrupt_handlers();
  s.wd.emplace("tune", opt.keep_dir);
  const char* stopped = "interrupted while measuring the peak, before any candidate; the log is unchanged: run the "
                        "same command again to tune";
  try {
    s.runner.emplace(s.isa, res.emulated, s.cpu, s.wd->path(), opt.threads);  // native or under qemu (runner.h)
    res.peak_gflops = s.runner->peak_gflops(peak_min_ms(opt.min_repeat_ms)) * opt.threads;  // N cores' peak
  } catch (const Error&) {
    if (interrupted()) throw Interrupted(stopped);  // the peak loop got the Ctrl-C too
    throw;
  }
  if (interrupted()) throw Interrupted(stopped);
  // The resumed records, at this process's peak (records.h at_peak): a session
  // at another clock must not outrank or trail this one's candidates.
  for (size_t i = 0; i < s.log.records.size(); ++i) {
    const Record r = at_peak(s.log.records[i], res.peak_gflops);
    s.strategy->observe(s.previous_configs[i],
                        Observation{r.status == Status::ok, r.status == Status::ok ? r.gflops : 0, r.samples});
    ++res.trials;
    if (r.status != Status::ok) ++res.failed;
    if (r.status == Status::ok && (!res.has_best || r.gflops > res.best.gflops)) {
      res.best = r;
      res.has_best = true;
    }
  }
}

void tune_announce(const TuneSession& s) {
  const TuneOptions& opt = s.opt;
  const TuneResult& res = s.res;
  if (opt.quiet) return;
  if (!opt.isa_note.empty()) std::fprintf(stderr, "convtune: %s\n", opt.isa_note.c_str());
  if (s.runner->emulated())
    std::fprintf(stderr, "convtune: running %s code under %s (emulated: timings not meaningful)\n",
                 s.isa.name.c_str(), s.runner->emulator().c_str());
  std::fprintf(stderr, "convtune: tuning %s (%s)%s with %s search; class table %s\n", res.layer.c_str(),
               opt.shape.to_string().c_str(),
               opt.epilogue == Epilogue::none ? "" : (" with epilogue " + to_string(opt.epilogue)).c_str(),
               opt.search.c_str(), s.table.origin.c_str());
  if (opt.threads == 1)
    std::fprintf(stderr, "convtune: space: %.4g configurations over %zu microkernel choices; peak %.1f GFLOP/s on CPU %d\n",
                 res.space_size, res.space_choices, res.peak_gflops, s.cpu);
  else
    std::fprintf(stderr,
                 "convtune: space: %.4g configurations over %zu microkernel choices, %d threads; peak %.1f GFLOP/s "
                 "(%d x one core's) on CPUs %s\n",
                 res.space_size, res.space_choices, opt.threads, res.peak_gflops, opt.threads,
                 cpu_list(s.cpus).c_str());
  for (const auto& n : s.notes) std::fprintf(stderr, "convtune: note: %s\n", n.c_str());
  if (!s.log.records.empty())
    std::fprintf(stderr, "convtune: resuming %s: %zu candidates already measured\n", res.log_path.c_str(),
                 s.log.records.size());
}

std::vector<CompileResult> tune_generate_and_build(const TuneSession& s, const std::vector<Config>& cs,
                                                   const std::vector<std::string>& names,
                                                   std::vector<GeneratedKernel>& gen, std::vector<CompileJob>& cjobs) {
  for (size_t i = 0; i < cs.size(); ++i) {
    GeneratedKernel k = generate_conv(s.isa, {s.opt.shape, cs[i], s.fn,
                                              fmt::format("{} ({})", s.table.origin, s.table.created), s.opt.epilogue});
    std::string base = s.wd->path() + "/" + names[i];
    write_work_file(base + ".c", k.c_source);
    cjobs.push_back({base + ".c", base, k.cflags});  // -fopenmp for a P loop
    gen.push_back(std::move(k));
  }
  return s.runner->build(cjobs, s.jobs, s.fn, {}, s.opt.epilogue);
}

void tune_prepare_search(TuneSession& s) {
  if (s.search_ready) return;
  ProblemData data = ProblemData::make(s.opt.shape, s.opt.check_points, 20221101, s.opt.epilogue);
  s.runner->set_problem(data);
  s.protocol = TimingProtocol{s.opt.min_repeat_ms, s.opt.repeat, 1};
  s.jobs = s.opt.jobs > 0 ? s.opt.jobs : default_jobs();
  s.search_ready = true;
}

namespace {

// Measures candidates until res.trials reaches cap, the strategy has nothing
// left (s.exhausted), Ctrl-C or s.stop_at passes (then the batch's unmeasured
// candidates are not recorded).
void search_until(TuneSession& s, int64_t cap, bool bar) {
  const TuneOptions& opt = s.opt;
  TuneResult& res = s.res;
  const size_t batch = size_t(std::max(4, 2 * s.jobs));
  install_interrupt_handlers();
  Progress prog(fmt::format("tuning {}", res.layer), size_t(std::max<int64_t>(0, cap - res.trials)), !bar);
  auto past_stop = [&] { return s.stop_at && std::chrono::steady_clock::now() >= *s.stop_at; };
  while (res.trials < cap && !interrupted() && !s.exhausted && !past_stop()) {
    const std::vector<Config> cands = next_candidates(s, batch, cap);
    if (cands.empty()) {
      s.notes.push_back(
          fmt::format("the {} search has nothing left to try after {} candidates", opt.search, res.trials));
      s.exhausted = true;
      break;
    }
    // Generate and compile the whole batch first.
    std::vector<std::string> names;
    for (size_t i = 0; i < cands.size(); ++i) names.push_back(fmt::format("cand{:05}", res.trials + int64_t(i)));
    std::vector<CompileJob> cjobs;
    std::vector<GeneratedKernel> gen;
    const std::vector<CompileResult> built = tune_generate_and_build(s, cands, names, gen, cjobs);
    for (size_t i = 0; i < cands.size(); ++i) {
      if (interrupted() || past_stop()) break;  // unmeasured candidates are simply not recorded
      const auto t = std::chrono::steady_clock::now();
      const RunResult rr = built[i].ok ? s.runner->run_conv(cjobs[i].output, s.protocol, opt.timeout_s) : RunResult{};
      s.measure_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
      tune_take_record(s, cands[i], tune_record_of(s, cands[i], built[i], rr), cjobs[i].output, gen[i]);
      prog.advance(1, best_text(res));
    }
  }
  prog.finish();
  res.interrupted = interrupted();
}

}  // namespace

void tune_search(TuneSession& s) {
  tune_prepare_search(s);
  search_until(s, s.opt.trials, !s.opt.quiet);
}

void tune_search_batch(TuneSession& s, int64_t n) {
  tune_prepare_search(s);
  search_until(s, std::min(s.opt.trials, s.res.trials + n), false);
}

Record tune_record_of(const TuneSession& s, const Config& c, const CompileResult& built, const RunResult& rr) {
  const TuneOptions& opt = s.opt;
  const TuneResult& res = s.res;
  Record r;
  r.layer = res.layer;
  r.shape = opt.shape.to_string();
  r.config = to_string(c);
  int ci = choice_of(s.space, c);
  r.choice = ci >= 0 ? s.space.choices[size_t(ci)].text() : "";
  r.microkernels = microkernels_of(s.space, c, s.isa.name);
  r.strategy = opt.search;
  r.seed = opt.seed;
  r.trial = res.trials;
  r.compile_seconds = built.seconds;
  r.peak_gflops = res.peak_gflops;
  r.isa = s.isa.name;
  r.table = s.table.origin;
  r.table_fingerprint = s.table.machine.fingerprint();
  r.tool_version = CONVTUNE_VERSION;
  r.note = fmt::format("{}", fmt::join(s.notes, "; "));
  r.search_info = s.strategy->info();
  r.emulated = res.emulated;
  r.threads = opt.threads;
  r.machine = s.here;
  r.epilogue = opt.epilogue;
  const auto origin = s.seed_origins.find(r.config);
  if (origin != s.seed_origins.end()) r.seed_from = origin->second;
  if (!built.ok) {
    r.status = Status::compile_error;
    r.detail = built.log.substr(0, 600);
  } else {
    r.status = rr.status;
    r.detail = rr.detail;
    r.seconds = rr.status == Status::ok
                    ? trusted_seconds(rr.seconds, rr.wall_seconds, opt.shape.real_flops(), res.peak_gflops)
                    : rr.seconds;
    if (r.seconds != rr.seconds)
      r.detail = "the clock probe was slowed beside this run; its wall-clock time is kept (measure.h trusted_seconds)";
    r.samples = rr.samples;
    r.wall_seconds = rr.wall_seconds;
    if (!rr.probe_gflops.empty()) r.probe_gflops = median(rr.probe_gflops);
    r.counters = rr.counters;
    r.counter_names = rr.counter_names;
    if (rr.status == Status::ok) {
      r.gflops = opt.shape.flops() / rr.seconds * 1e-9;
      r.real_gflops = opt.shape.real_flops() / rr.seconds * 1e-9;
      r.percent_peak = 100 * r.gflops / res.peak_gflops;
    }
  }
  r.timestamp = utc_timestamp();
  return r;
}

void tune_take_record(TuneSession& s, const Config& c, const Record& r, const std::string& exe,
                      const GeneratedKernel& k) {
  TuneResult& res = s.res;
  append_record(res.log_path, r);
  s.run_records.push_back(r);
  if (r.status == Status::ok) s.exe_of[r.config] = exe;
  s.strategy->observe(c, Observation{r.status == Status::ok, r.gflops, r.samples});
  ++res.trials;
  ++res.new_trials;
  if (r.status != Status::ok) ++res.failed;
  if (r.status == Status::ok && (!res.has_best || r.gflops > res.best.gflops)) {
    res.best = r;
    res.has_best = true;
    s.kernels[r.config] = k;
  }
}

void tune_recheck_peak(TuneSession& s) {
  TuneResult& res = s.res;
  // A job sharing the core (or its sibling vCPU) during the tune shows as a
  // different figure, and every % of peak is then suspect.
  if (s.runner->emulated() || res.new_trials == 0 || res.interrupted) return;
  res.peak_end_gflops = s.runner->peak_gflops(peak_min_ms(s.opt.min_repeat_ms)) * s.opt.threads;
  const double drift = std::abs(res.peak_end_gflops - res.peak_gflops) / res.peak_gflops;
  if (drift > 0.05)
    s.notes.push_back(fmt::format("the peak moved from {:.1f} to {:.1f} GFLOP/s during the tune: another job may "
                                  "have shared the core; re-run on a quiet machine before trusting these figures",
                                  res.peak_gflops, res.peak_end_gflops));
}

}  // namespace convtune
