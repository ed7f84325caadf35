// run_tune's setup stage (tune_stages.h): every argument, the log and the
// space checked before anything is compiled or measured.
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/files.h"
#include "convtune/core/machine.h"
#include "convtune/tune/log_machine.h"
#include "convtune/tune/tune_stages.h"
#include "convtune/tune/warm_start.h"

namespace convtune {

namespace {

std::string kernel_function_name(const std::string& layer) {
  std::string f = "ct_conv_" + layer;
  for (auto& ch : f)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return f;
}

// The ISA, the measuring CPUs, the class table, the space and the search's
// options: what is tuned and where.
void setup_target(TuneSession& s) {
  const TuneOptions& opt = s.opt;
  TuneResult& res = s.res;
  res.shape = opt.shape;
  res.layer = layer_id(opt.shape);
  res.epilogue = opt.epilogue;
  res.search = opt.search;
  check_tune_options(opt);
  s.isa = load_isa(opt.isa);
  res.emulated = use_emulation(s.isa, opt.emulate);
  s.cpu = opt.cpu >= 0 ? opt.cpu : default_cpu();
  check_cpu(s.cpu);                                // only measuring children are pinned
  s.cpus = measuring_cpus(s.cpu, opt.threads);     // enough CPUs, before any work
  res.threads = opt.threads;
  s.table = load_table(s.isa.name, opt.table);
  res.table_origin = s.table.origin;
  s.table_warning = fingerprint_warning(s.table);  // said once the log is checked too
  s.space = build_space(opt.shape, s.table, s.isa.lanes, opt.threads);
  if (!s.space.note.empty()) s.notes.push_back(s.space.note);
  if (opt.shape.padded_K(s.isa.lanes) != opt.shape.K)
    s.notes.push_back(fmt::format("K={} is not a multiple of the vector length: the loops run over {} channels "
                                  "({}-lane vectors) and the last vector is stored masked; the output is exactly K "
                                  "wide",
                                  opt.shape.K, opt.shape.padded_K(s.isa.lanes), s.isa.lanes));
  s.sopt = SearchOptions{opt.pvalue, opt.parents, opt.offspring, opt.mutation_rate};
  const MachineInfo machine = detect_machine(s.cpu);  // the measuring CPU's caches for csa, 001 §4.1
  s.here = machine_id(machine);
  s.sopt.cache_source = machine.cache_source;
  s.sopt.l1d_bytes = machine.l1d_bytes;
  s.sopt.l2_bytes = machine.l2_bytes;
  s.sopt.l3_bytes = machine.l3_bytes;
  s.sopt.trials = opt.trials;
  s.sopt.vector_registers = s.isa.vector_registers;
  s.fn = kernel_function_name(res.layer);
}

// The out directory and the log: both writable, the log locked and read; a
// log with records only with --resume, and only of this machine unless told.
void open_log(TuneSession& s) {
  const TuneOptions& opt = s.opt;
  TuneResult& res = s.res;
  s.out_dir = opt.out_dir.empty() ? default_out_dir(res.layer, opt.threads, opt.epilogue) : opt.out_dir;
  res.log_path = opt.log.empty() ? s.out_dir + "/log.jsonl" : opt.log;
  std::error_code ec;
  // --out first, and by its name: the default log is inside it, so a --out that is a file is the
  // user's mistake to name, not --log.
  if (std::filesystem::exists(s.out_dir, ec) && !std::filesystem::is_directory(s.out_dir, ec))
    throw Error(fmt::format("--out '{}' is a file, not a directory; give a directory for the kernel and its log",
                            s.out_dir));
  ensure_writable(s.out_dir + "/" + res.layer + ".c", "--out");  // fail now, not after the tune
  ensure_writable(res.log_path, opt.log.empty() ? "--out" : "--log");
  if (!std::filesystem::exists(res.log_path, ec) || std::filesystem::is_regular_file(res.log_path, ec))
    s.lock.emplace(res.log_path, "log", opt.log.empty() ? "--out" : "--log");
  s.log = read_log(res.log_path);
  const std::vector<Record>& previous = s.log.records;
  if (!previous.empty() && !opt.resume)
    throw Error(fmt::format("log '{}' already holds {} candidates; pass --resume to continue it or --log to start "
                            "another",
                            res.log_path, previous.size()));
  if (!opt.any_machine) check_log_machine(res.log_path, previous, s.here);
}

// Every resumed record of this shape, thread count and epilogue, its
// configuration valid here and in the space (a pair beyond the space's cap is
// added to it); the space's size then counts those pairs.
void check_resumed(TuneSession& s) {
  const TuneOptions& opt = s.opt;
  const std::string& path = s.res.log_path;
  for (size_t i = 0; i < s.log.records.size(); ++i) {
    const Record& r = s.log.records[i];
    auto at_line = [&](const std::string& what) {
      return Error(fmt::format("log '{}' line {}: {}; fix or remove that line", path, s.log.lines[i], what));
    };
    if (r.shape != opt.shape.to_string())
      throw Error(
          fmt::format("log '{}' is for shape {}, not {}; use another --log", path, r.shape, opt.shape.to_string()));
    if (r.threads != opt.threads)
      throw Error(fmt::format("log '{}' was measured with --threads {}, not {}; resume with --threads {} or use "
                              "another --log",
                              path, r.threads, opt.threads, r.threads));
    if (r.epilogue != opt.epilogue)
      throw Error(fmt::format("log '{}' was tuned with --epilogue {}, not {}; resume with --epilogue {} or use "
                              "another --log",
                              path, to_string(r.epilogue), to_string(opt.epilogue), to_string(r.epilogue)));
    Config c;
    try {
      c = parse_config(r.config);
      validate_config(c, opt.shape, s.isa.lanes);
    } catch (const Error& e) {
      throw at_line(fmt::format("configuration '{}' is not valid for {} ({})", r.config, opt.shape.to_string(),
                                e.what()));
    }
    if (add_capped_pair(s.space, s.table, c) < 0)
      throw at_line(fmt::format("configuration '{}' uses microkernels that the class table {} does not offer for "
                                "this shape (resume with the log's --table)",
                                r.config, s.table.origin));
    s.previous_configs.push_back(c);
  }
  s.res.space_size = s.space.size();
  s.res.space_choices = s.space.choices.size();
}

// --start-from: another tune's best, lifted to this space, is measured first
// and observed like a resumed record, so a local search starts from it.
void seed_starts(TuneSession& s) {
  const TuneOptions& opt = s.opt;
  if (opt.start_from.empty()) return;
  const std::string from = start_log_path(opt.start_from, s.res.layer);
  const Config best = best_config_of_log(from, opt.shape);
  std::set<std::string> done;
  for (const Record& r : s.log.records) done.insert(r.config);
  const std::vector<Config> lifted = lifted_configs(best, s.space);
  for (const Config& c : lifted)
    if (!done.count(to_string(c))) {
      s.starts.push_back(c);
      s.seed_origins[to_string(c)] = SeedOrigin{SeedOrigin::start_from, s.res.layer, to_string(best), from};
    }
  s.notes.push_back(lifted.empty()
                        ? fmt::format("--start-from '{}': its best, {}, is no configuration of this space (another "
                                      "class table or thread count); the search starts without it",
                                      from, to_string(best))
                        : fmt::format("--start-from '{}': its best, {}, measured first in {} form{} at {} thread{}",
                                      from, to_string(best), lifted.size(), lifted.size() == 1 ? "" : "s",
                                      opt.threads, opt.threads == 1 ? "" : "s"));
}

}  // namespace

void tune_setup(TuneSession& s) {
  setup_target(s);
  open_log(s);
  check_resumed(s);
  s.strategy = make_strategy(s.opt.search, s.space, s.opt.seed, s.sopt);
  seed_starts(s);
  // A kill during a write or a full disk leaves a torn last line: cut it off,
  // or the next record would be glued to it and lost.
  if (uint64_t dropped = drop_torn_tail(s.res.log_path, s.log))
    std::fprintf(stderr, "convtune: note: %s\n", torn_log_note(s.res.log_path, dropped).c_str());
  // Every argument is checked by now: only then the table's warning.
  if (!s.table_warning.empty() && !s.opt.quiet && s.opt.table_warning)
    std::fprintf(stderr, "convtune: %s\n", s.table_warning.c_str());
}

}  // namespace convtune
