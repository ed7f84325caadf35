// The online stage's loop: propose -> generate -> compile (parallel, nothing
// measured meanwhile) -> verify and time one at a time -> record.
#include "convtune/tune/tune.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "convtune/offline/class_table.h"
#include "convtune/codegen/conv.h"
#include "convtune/tune/finalist.h"
#include "convtune/tune/finalist_duel.h"
#include "convtune/tune/log_machine.h"
#include "convtune/execution/compiler.h"
#include "convtune/core/error.h"
#include "convtune/core/file_lock.h"
#include "convtune/core/files.h"
#include "convtune/core/interrupt.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/ukernel/peak.h"
#include "convtune/core/progress.h"
#include "convtune/execution/runner.h"
#include "convtune/search/search.h"
#include "convtune/space/space.h"
#include "convtune/tune/warm_start.h"
#include "convtune/execution/timer.h"
#include "convtune/execution/workdir.h"

namespace convtune {

namespace {

std::string function_name(const std::string& layer) {
  std::string f = "ct_conv_" + layer;
  for (auto& ch : f)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return f;
}

std::vector<std::string> microkernels_of(const Space& space, const Config& c, const std::string& isa) {
  int i = choice_of(space, c);
  if (i < 0) return {};
  const UkChoice& ch = space.choices[size_t(i)];
  std::vector<std::string> v{ukernel_name(ch.uk, isa)};
  if (ch.pair) v.push_back(ukernel_name(ch.uk2, isa));
  return v;
}

}  // namespace

void check_tune_options(const TuneOptions& opt) {
  // The CLI checks ranges at parse time; this guards every other caller.
  if (opt.trials < 1) throw Error(fmt::format("--trials is {}; give at least 1", opt.trials));
  if (opt.repeat < 1) throw Error(fmt::format("--repeat is {}; give at least 1", opt.repeat));
  if (!(std::isfinite(opt.min_repeat_ms) && opt.min_repeat_ms > 0))
    throw Error(fmt::format("--min-repeat-ms is {}; give a positive number of milliseconds", opt.min_repeat_ms));
  if (opt.top < 0) throw Error(fmt::format("--top is {}; give 0 or more", opt.top));
  if (opt.top_rounds < 1) throw Error(fmt::format("--top-rounds is {}; give at least 1", opt.top_rounds));
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

std::string layer_id(const Shape& s) {
  if (!s.name.empty()) return s.name;
  return fmt::format("N{}_K{}_C{}_H{}_W{}_R{}_S{}_st{}_p{}", s.N, s.K, s.C, s.H, s.W, s.R, s.S, s.stride, s.pad);
}

TuneResult run_tune(const TuneOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  TuneResult res;
  res.shape = opt.shape;
  res.layer = layer_id(opt.shape);
  res.epilogue = opt.epilogue;
  res.search = opt.search;
  check_tune_options(opt);
  Isa isa = load_isa(opt.isa);
  res.emulated = use_emulation(isa, opt.emulate);
  const int cpu = opt.cpu >= 0 ? opt.cpu : default_cpu();
  check_cpu(cpu);  // only measuring children are pinned
  const std::vector<int> cpus = measuring_cpus(cpu, opt.threads);  // enough CPUs, before any work
  res.threads = opt.threads;
  ClassTable table = load_table(isa.name, opt.table);
  res.table_origin = table.origin;
  const std::string warn = fingerprint_warning(table);  // said once the log is checked too
  Space space = build_space(opt.shape, table, isa.lanes, opt.threads);
  std::vector<std::string> notes;
  if (!space.note.empty()) notes.push_back(space.note);
  if (opt.shape.padded_K(isa.lanes) != opt.shape.K)
    notes.push_back(fmt::format("K={} is not a multiple of the vector length: the loops run over {} channels "
                                "({}-lane vectors) and the last vector is stored masked; the output is exactly K wide",
                                opt.shape.K, opt.shape.padded_K(isa.lanes), isa.lanes));
  SearchOptions sopt{opt.pvalue, opt.parents, opt.offspring, opt.mutation_rate};
  const MachineInfo machine = detect_machine(cpu);  // the measuring CPU's caches for csa, 001 §4.1
  const MachineId here = machine_id(machine);         // every record names it (merge.h)
  sopt.cache_source = machine.cache_source;
  sopt.l1d_bytes = machine.l1d_bytes;
  sopt.l2_bytes = machine.l2_bytes;
  sopt.l3_bytes = machine.l3_bytes;
  sopt.trials = opt.trials;
  sopt.vector_registers = isa.vector_registers;

  const std::string out_dir =
      opt.out_dir.empty() ? default_out_dir(res.layer, opt.threads, opt.epilogue) : opt.out_dir;
  res.log_path = opt.log.empty() ? out_dir + "/log.jsonl" : opt.log;
  ensure_writable(res.log_path, "--log");
  ensure_writable(out_dir + "/" + res.layer + ".c", "--out");  // fail now, not after the tune
  // One tuner per log for the whole tune (not for /dev/null and the like).
  std::error_code ec;
  std::optional<FileLock> lock;
  if (!std::filesystem::exists(res.log_path, ec) || std::filesystem::is_regular_file(res.log_path, ec))
    lock.emplace(res.log_path, "log", opt.log.empty() ? "--out" : "--log");
  LogContents log = read_log(res.log_path);
  const std::vector<Record>& previous = log.records;
  if (!previous.empty() && !opt.resume)
    throw Error(fmt::format("log '{}' already holds {} candidates; pass --resume to continue it or --log to start "
                            "another",
                            res.log_path, previous.size()));
  if (!opt.any_machine) check_log_machine(res.log_path, previous, here);
  std::vector<Config> previous_configs;  // observed once this process's peak is known (below)
  for (size_t i = 0; i < previous.size(); ++i) {
    const Record& r = previous[i];
    auto at_line = [&](const std::string& what) {
      return Error(fmt::format("log '{}' line {}: {}; fix or remove that line", res.log_path, log.lines[i], what));
    };
    if (r.shape != opt.shape.to_string())
      throw Error(fmt::format("log '{}' is for shape {}, not {}; use another --log", res.log_path, r.shape,
                              opt.shape.to_string()));
    if (r.threads != opt.threads)
      throw Error(fmt::format("log '{}' was measured with --threads {}, not {}; resume with --threads {} or use "
                              "another --log",
                              res.log_path, r.threads, opt.threads, r.threads));
    if (r.epilogue != opt.epilogue)
      throw Error(fmt::format("log '{}' was tuned with --epilogue {}, not {}; resume with --epilogue {} or use "
                              "another --log",
                              res.log_path, to_string(r.epilogue), to_string(opt.epilogue), to_string(r.epilogue)));
    Config c;
    try {
      c = parse_config(r.config);
      validate_config(c, opt.shape, isa.lanes);
    } catch (const Error& e) {
      throw at_line(fmt::format("configuration '{}' is not valid for {} ({})", r.config, opt.shape.to_string(),
                                e.what()));
    }
    if (add_capped_pair(space, table, c) < 0)
      throw at_line(fmt::format("configuration '{}' uses microkernels that the class table {} does not offer for "
                                "this shape (resume with the log's --table)",
                                r.config, table.origin));
    previous_configs.push_back(c);
  }
  res.space_size = space.size();  // with the pairs beyond the cap the log holds
  res.space_choices = space.choices.size();
  auto strategy = make_strategy(opt.search, space, opt.seed, sopt);
  // --start-from: another tune's best, lifted to this space, is measured first
  // and observed like a resumed record, so a local search starts from it.
  std::deque<Config> starts;
  if (!opt.start_from.empty()) {
    const std::string from = start_log_path(opt.start_from, res.layer);
    const Config best = best_config_of_log(from, opt.shape);
    std::set<std::string> done;
    for (const Record& r : previous) done.insert(r.config);
    const std::vector<Config> lifted = lifted_configs(best, space);
    for (const Config& c : lifted)
      if (!done.count(to_string(c))) starts.push_back(c);
    notes.push_back(lifted.empty()
                        ? fmt::format("--start-from '{}': its best, {}, is no configuration of this space (another "
                                      "class table or thread count); the search starts without it",
                                      from, to_string(best))
                        : fmt::format("--start-from '{}': its best, {}, measured first in {} form{} at {} thread{}",
                                      from, to_string(best), lifted.size(), lifted.size() == 1 ? "" : "s",
                                      opt.threads, opt.threads == 1 ? "" : "s"));
  }
  // A kill during a write or a full disk leaves a torn last line: cut it off,
  // or the next record would be glued to it and lost.
  if (uint64_t dropped = drop_torn_tail(res.log_path, log))
    std::fprintf(stderr, "convtune: note: %s\n", torn_log_note(res.log_path, dropped).c_str());
  // Every argument is checked by now: only then the table's warning.
  if (!warn.empty() && !opt.quiet && opt.table_warning) std::fprintf(stderr, "convtune: %s\n", warn.c_str());

  WorkDir wd("tune", opt.keep_dir);
  Runner runner(isa, res.emulated, cpu, wd.path(), opt.threads);  // native or under qemu: one path (runner.h)
  res.peak_gflops = runner.peak_gflops(peak_min_ms(opt.min_repeat_ms)) * opt.threads;  // N cores' peak
  // The resumed records, at this process's peak (records.h at_peak): a session
  // at another clock must not outrank or trail this one's candidates.
  for (size_t i = 0; i < previous.size(); ++i) {
    const Record r = at_peak(previous[i], res.peak_gflops);
    strategy->observe(previous_configs[i], Observation{r.status == "ok", r.status == "ok" ? r.gflops : 0, r.samples});
    ++res.trials;
    if (r.status != "ok") ++res.failed;
    if (r.status == "ok" && (!res.has_best || r.gflops > res.best.gflops)) {
      res.best = r;
      res.has_best = true;
    }
  }
  if (!opt.quiet) {
    if (!opt.isa_note.empty()) std::fprintf(stderr, "convtune: %s\n", opt.isa_note.c_str());
    if (runner.emulated())
      std::fprintf(stderr, "convtune: running %s code under %s (emulated: timings not meaningful)\n",
                   isa.name.c_str(), runner.emulator().c_str());
    std::fprintf(stderr, "convtune: tuning %s (%s)%s with %s search; class table %s\n", res.layer.c_str(),
                 opt.shape.to_string().c_str(),
                 opt.epilogue == Epilogue::none ? "" : (" with epilogue " + to_string(opt.epilogue)).c_str(),
                 opt.search.c_str(), table.origin.c_str());
    if (opt.threads == 1)
      std::fprintf(stderr, "convtune: space: %.4g configurations over %zu microkernel choices; peak %.1f GFLOP/s on CPU %d\n",
                   res.space_size, res.space_choices, res.peak_gflops, cpu);
    else
      std::fprintf(stderr,
                   "convtune: space: %.4g configurations over %zu microkernel choices, %d threads; peak %.1f GFLOP/s "
                   "(%d x one core's) on CPUs %s\n",
                   res.space_size, res.space_choices, opt.threads, res.peak_gflops, opt.threads,
                   cpu_list(cpus).c_str());
    for (const auto& n : notes) std::fprintf(stderr, "convtune: note: %s\n", n.c_str());
    if (!previous.empty())
      std::fprintf(stderr, "convtune: resuming %s: %zu candidates already measured\n", res.log_path.c_str(),
                   previous.size());
  }

  ProblemData data = ProblemData::make(opt.shape, opt.check_points, 20221101, opt.epilogue);
  runner.set_problem(data);
  TimingProtocol protocol{opt.min_repeat_ms, opt.repeat, 1};
  const int jobs = opt.jobs > 0 ? opt.jobs : default_jobs();
  const size_t batch = size_t(std::max(4, 2 * jobs));
  const std::string fn = function_name(res.layer);
  install_interrupt_handlers();
  Progress prog(fmt::format("tuning {}", res.layer), size_t(std::max<int64_t>(0, opt.trials - res.trials)),
                opt.quiet);
  auto best_text = [&] {
    return res.has_best ? fmt::format("{:.1f} GFLOP/s ({:.1f}%)", res.best.gflops,
                                      100 * res.best.gflops / res.peak_gflops)
                        : std::string();
  };
  std::map<std::string, GeneratedKernel> kernels;  // by config text, for the best one
  std::vector<Record> run_records;                 // this run's, for the finalists
  std::map<std::string, std::string> exe_of;       // ok candidates' executables, by config text
  // Generates and builds configurations as <work dir>/<name>: the loop's way, and the finalists'.
  auto generate_and_build = [&](const std::vector<Config>& cs, const std::vector<std::string>& names,
                                std::vector<GeneratedKernel>& gen, std::vector<CompileJob>& cjobs) {
    for (size_t i = 0; i < cs.size(); ++i) {
      GeneratedKernel k = generate_conv(isa, {opt.shape, cs[i], fn,
                                              fmt::format("{} ({})", table.origin, table.created), opt.epilogue});
      std::string base = wd.path() + "/" + names[i];
      write_work_file(base + ".c", k.c_source);
      cjobs.push_back({base + ".c", base, k.cflags});  // -fopenmp for a P loop
      gen.push_back(std::move(k));
    }
    return runner.build(cjobs, jobs, fn, {}, opt.epilogue);
  };

  while (res.trials < opt.trials && !interrupted()) {
    std::vector<Config> cands;
    while (!starts.empty() && int64_t(cands.size()) < opt.trials - res.trials) {
      cands.push_back(starts.front());
      starts.pop_front();
    }
    if (cands.empty()) cands = strategy->propose(size_t(std::min<int64_t>(batch, opt.trials - res.trials)));
    if (cands.empty()) {
      notes.push_back(fmt::format("the {} search has nothing left to try after {} candidates", opt.search,
                                  res.trials));
      break;
    }
    // Generate and compile the whole batch first.
    std::vector<std::string> names;
    for (size_t i = 0; i < cands.size(); ++i) names.push_back(fmt::format("cand{:05}", res.trials + int64_t(i)));
    std::vector<CompileJob> cjobs;
    std::vector<GeneratedKernel> gen;
    std::vector<CompileResult> built = generate_and_build(cands, names, gen, cjobs);
    for (size_t i = 0; i < cands.size(); ++i) {
      if (interrupted()) break;  // unmeasured candidates are simply not recorded
      Record r;
      r.layer = res.layer;
      r.shape = opt.shape.to_string();
      r.config = to_string(cands[i]);
      int ci = choice_of(space, cands[i]);
      r.choice = ci >= 0 ? space.choices[size_t(ci)].text() : "";
      r.microkernels = microkernels_of(space, cands[i], isa.name);
      r.strategy = opt.search;
      r.seed = opt.seed;
      r.trial = res.trials;
      r.compile_seconds = built[i].seconds;
      r.peak_gflops = res.peak_gflops;
      r.isa = isa.name;
      r.table = table.origin;
      r.table_fingerprint = table.machine.fingerprint();
      r.tool_version = CONVTUNE_VERSION;
      r.note = fmt::format("{}", fmt::join(notes, "; "));
      r.search_info = strategy->info();
      r.emulated = res.emulated;
      r.threads = opt.threads;
      r.machine = here;
      r.epilogue = opt.epilogue;
      if (!built[i].ok) {
        r.status = "compile_error";
        r.detail = built[i].log.substr(0, 600);
      } else {
        RunResult rr = runner.run_conv(cjobs[i].output, protocol, opt.timeout_s);
        r.status = rr.status;
        r.detail = rr.detail;
        r.seconds = rr.status == "ok" ? trusted_seconds(rr.seconds, rr.wall_seconds, opt.shape.real_flops(),
                                                        res.peak_gflops)
                                      : rr.seconds;
        if (r.seconds != rr.seconds)
          r.detail = "the clock probe was slowed beside this run; its wall-clock time is kept (measure.h trusted_seconds)";
        r.samples = rr.samples;
        r.wall_seconds = rr.wall_seconds;
        if (!rr.probe_gflops.empty()) r.probe_gflops = median(rr.probe_gflops);
        r.counters = rr.counters;
        r.counter_names = rr.counter_names;
        if (rr.status == "ok") {
          r.gflops = opt.shape.flops() / rr.seconds * 1e-9;
          r.real_gflops = opt.shape.real_flops() / rr.seconds * 1e-9;
          r.percent_peak = 100 * r.gflops / res.peak_gflops;
        }
      }
      r.timestamp = utc_timestamp();
      append_record(res.log_path, r);
      run_records.push_back(r);
      if (r.status == "ok") exe_of[r.config] = cjobs[i].output;
      strategy->observe(cands[i], Observation{r.status == "ok", r.gflops, r.samples});
      ++res.trials;
      ++res.new_trials;
      if (r.status != "ok") ++res.failed;
      if (r.status == "ok" && (!res.has_best || r.gflops > res.best.gflops)) {
        res.best = r;
        res.has_best = true;
        kernels[r.config] = gen[i];
      }
      prog.advance(1, best_text());
    }
  }
  prog.finish();
  res.interrupted = interrupted();
  // The peak again: a job sharing the core (or its sibling vCPU) during the
  // tune shows as a different figure, and every % of peak is then suspect.
  if (!runner.emulated() && res.new_trials > 0 && !res.interrupted) {
    res.peak_end_gflops = runner.peak_gflops(peak_min_ms(opt.min_repeat_ms)) * opt.threads;
    const double drift = std::abs(res.peak_end_gflops - res.peak_gflops) / res.peak_gflops;
    if (drift > 0.05)
      notes.push_back(fmt::format("the peak moved from {:.1f} to {:.1f} GFLOP/s during the tune: another job may "
                                  "have shared the core; re-run on a quiet machine before trusting these figures",
                                  res.peak_gflops, res.peak_end_gflops));
  }

  // The finalists: the K best re-measured interleaved in fresh processes, the
  // winner checked at every output element (finalist.h).
  if (res.has_best && !res.interrupted) {
    std::vector<Record> all = previous;
    all.insert(all.end(), run_records.begin(), run_records.end());
    const std::vector<Record> top = top_records(all, size_t(std::max(1, opt.top)));
    std::vector<Config> to_build;
    std::vector<std::string> names;
    std::vector<size_t> which;
    for (size_t i = 0; i < top.size(); ++i) {
      Finalist f;
      f.config = top[i].config;
      f.search_gflops = at_peak(top[i], res.peak_gflops).gflops;
      auto it = exe_of.find(f.config);
      if (it != exe_of.end()) {
        f.exe = it->second;
      } else {  // from a resumed log
        to_build.push_back(parse_config(f.config));
        names.push_back(fmt::format("final{:02}", i));
        which.push_back(i);
      }
      res.finalists.push_back(f);
    }
    if (!to_build.empty()) {
      std::vector<GeneratedKernel> gen;
      std::vector<CompileJob> cjobs;
      std::vector<CompileResult> built = generate_and_build(to_build, names, gen, cjobs);
      for (size_t j = 0; j < which.size(); ++j) {
        Finalist& f = res.finalists[which[j]];
        if (built[j].ok) {
          f.exe = cjobs[j].output;
        } else {
          f.status = "compile_error";
          f.detail = built[j].log.substr(0, 600);
        }
      }
    }
    auto stop = [] { return interrupted(); };
    if (res.finalists.size() > 1 && !res.emulated) {  // emulated timings rank nothing
      res.top_rounds = opt.top_rounds;
      remeasure(runner, res.finalists, protocol, opt.top_rounds, opt.timeout_s, opt.shape.flops(),
                opt.shape.real_flops(), res.peak_gflops, stop);
      if (opt.duel_rounds > 0) {  // samples a fifth of a measurement: 20 ms at the default
        const DuelSetup ds{isa, opt.shape, opt.epilogue, fmt::format("{} ({})", table.origin, table.created),
                           cpu, opt.threads, wd.path(), jobs, runner.pch_flags(), opt.duel_rounds, opt.min_repeat_ms / 5, opt.timeout_s,
                           opt.check_points};
        const std::string note = duel(ds, res.finalists, stop);
        if (!note.empty()) notes.push_back(note);
        if (std::any_of(res.finalists.begin(), res.finalists.end(), [](const Finalist& x) { return x.duel_gflops > 0; }))
          res.duel_rounds = opt.duel_rounds;
      }
    }
    rank_finalists(res.finalists);
    const int w = interrupted() ? -1
                                : full_check(runner, ProblemData::make(opt.shape, 0, 20221101, opt.epilogue),
                                             res.finalists, opt.timeout_s, stop);
    res.interrupted = interrupted();
    if (res.interrupted) {  // as for a search interrupted: the search's best, unconfirmed
      res.finalists.clear();
      res.top_rounds = 0;
      res.duel_rounds = 0;
    } else if (w < 0) {
      res.has_best = false;
      notes.push_back("no finalist passed the check at every output element: no kernel written");
    } else {
      Finalist& f = res.finalists[size_t(w)];
      f.winner = true;
      res.best = *std::find_if(top.begin(), top.end(), [&](const Record& r) { return r.config == f.config; });
      res.best_search_gflops = res.best.gflops;
      if (f.gflops > 0) {
        res.best.seconds = f.seconds;
        res.best.gflops = f.gflops;
        res.best.real_gflops = opt.shape.real_flops() / f.seconds * 1e-9;
        res.best.percent_peak = 100 * f.gflops / res.peak_gflops;
      }
    }
    if (!res.finalists.empty()) {
      nlohmann::json j{{"layer", res.layer},
                       {"shape", opt.shape.to_string()},
                       {"top", opt.top},
                       {"rounds", res.top_rounds},
                       {"duel_rounds", res.duel_rounds},
                       {"winner", w >= 0 ? nlohmann::json(res.finalists[size_t(w)].config) : nlohmann::json()},
                       {"finalists", finalists_json(res.finalists)}};
      res.finalists_path = out_dir + "/finalists.json";
      write_file_atomic(res.finalists_path, j.dump(2) + "\n", "the finalists",
                        fmt::format("choose another --out; the log '{}' keeps every result", res.log_path));
    }
  }
  res.notes = fmt::format("{}", fmt::join(notes, "; "));

  if (res.has_best) {
    // The best may come from a resumed log: regenerate it from its text.
    auto it = kernels.find(res.best.config);
    GeneratedKernel k = it != kernels.end()
                            ? it->second
                            : generate_conv(isa, {opt.shape, parse_config(res.best.config), fn,
                                                  fmt::format("{} ({})", table.origin, table.created),
                                                  opt.epilogue});
    res.kernel_c = out_dir + "/" + res.layer + ".c";
    res.kernel_h = out_dir + "/" + res.layer + ".h";
    const std::string fix = fmt::format("choose another --out; the log '{}' keeps every result", res.log_path);
    write_file_atomic(res.kernel_c, k.c_source, "the best kernel", fix);
    write_file_atomic(res.kernel_h, k.header, "the best kernel's header", fix);
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

std::string tune_summary(const TuneResult& r) {
  std::string o;
  o += fmt::format("{}: {} ({}){}\n", r.interrupted ? "interrupted" : "done", r.layer, r.shape.to_string(),
                   r.epilogue == Epilogue::none ? "" : " with epilogue " + to_string(r.epilogue));
  o += fmt::format("trials: {} ({} this run), failed: {}, wall time: {:.1f} s{}\n", r.trials, r.new_trials,
                   r.failed, r.wall_s,
                   r.new_trials ? fmt::format(" ({:.2f} s per candidate)", r.wall_s / double(r.new_trials)) : "");
  const bool dropped = std::any_of(r.finalists.begin(), r.finalists.end(),
                                   [](const Finalist& f) { return f.status != "ok"; });
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
