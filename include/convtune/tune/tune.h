#pragma once
// The online stage for one layer (000 §4.2, §5, §6.1): build the space from a
// class table, let a strategy propose candidates, generate and compile them
// in parallel batches, measure them one at a time on a pinned core, record
// every candidate; at the end re-measure the best few and check the winner
// at every output element (finalist.h) before writing it.
#include <cstdint>
#include <optional>
#include <string>

#include "convtune/core/epilogue.h"
#include "convtune/tune/finalist.h"
#include "convtune/tune/records.h"
#include "convtune/core/shape.h"

namespace convtune {

struct TuneOptions {
  Shape shape;
  Epilogue epilogue = Epilogue::none;  // fused into every candidate; part of the log's identity
  std::string isa = "avx512";
  std::string isa_note;     // how --arch was chosen, said with the progress lines
  bool emulate = false;     // an ISA of another architecture under qemu-user (runner.h)
  bool table_warning = true;  // say the table's "profiled on another CPU" warning (once per run)
  std::optional<std::string> table;  // default: load_table's choice
  std::string search = "hillclimb";  // chosen on bench/results/convergence; "random" is 000's
  double pvalue = 0.05;        // droplet: t-test level (003 §3.3)
  int parents = 8, offspring = 8;  // opevo: lambda, rho (002 Algorithm 1)
  double mutation_rate = 0.5;  // opevo: q (002 §4.3)
  int64_t trials = 20;
  uint64_t seed = 1;
  int cpu = -1;             // -1: the last core
  int threads = 1;          // --threads N: candidates measured on N CPUs around cpu (machine.h
                            // measuring_cpus), the space adds a P loop (space.h), the peak is N
                            // times one core's; the CLI's default is every CPU this process may use
  int jobs = 0;             // parallel compilations; 0: the cores but one
  double min_repeat_ms = 100;
  int repeat = 5;
  double timeout_s = 30;    // per candidate run (verification or one measurement)
  size_t check_points = 4000;  // verified output elements; 0 = all
  int top = 5;              // finalists re-measured at the end (finalist.h); 0 or 1: none
  int top_rounds = 3;       // interleaved rounds of the re-measure
  int duel_rounds = 20;     // rounds of the finalists' duel (finalist_duel.h); 0: none
  std::string out_dir;      // best kernel; default default_out_dir(layer, threads, epilogue)
  std::string log;          // default <out_dir>/log.jsonl
  bool resume = false;
  std::string start_from;   // --start-from: a log (or --out dir) whose best is measured first (warm_start.h)
  std::string transfer_store;  // a network's --out: its neighbours' winners measured first (neighbours.h); "": none
  bool any_machine = false;  // resume (bench: read) a log measured on another machine (log_machine.h)
  bool quiet = false;
  std::string keep_dir;     // keep generated candidates here
};

struct TuneResult {
  std::string layer;
  Shape shape;
  Epilogue epilogue = Epilogue::none;
  std::string search;
  int64_t trials = 0;       // candidates measured in the log (this run + resumed)
  int64_t failed = 0;
  int64_t new_trials = 0;   // measured by this run
  double wall_s = 0;
  int threads = 1;             // --threads: the CPUs measured on
  double peak_gflops = 0;      // measured at the start: one core's times threads
  double peak_end_gflops = 0;  // measured again at the end (0: not measured)
  double space_size = 0;
  size_t space_choices = 0;
  std::string notes;        // fallback / padded K / exhausted space
  bool interrupted = false;
  bool emulated = false;    // timings from an emulator: not meaningful
  bool has_best = false;
  Record best;              // its figures re-measured when there were finalists
  double best_search_gflops = 0;  // the winner's figure in the search
  std::vector<Finalist> finalists;  // ranked; empty when interrupted or nothing ran
  int top_rounds = 0;       // rounds re-measured (0: no re-measure)
  int duel_rounds = 0;      // rounds of the duel that ranked them (0: none)
  std::string finalists_path;  // <out>/finalists.json
  std::string kernel_c, kernel_h, log_path, table_origin;
};

/// Throws Error for an option out of range or an unknown --search, before
/// any work (the CLI calls it right after parsing).
void check_tune_options(const TuneOptions& opt);

/// Runs the tuning; throws Error for bad input before any work.
TuneResult run_tune(const TuneOptions& opt);

/// Human summary and the --json object.
std::string tune_summary(const TuneResult& r);
std::string tune_json(const TuneResult& r);

/// Where tune and bench keep a layer's log and kernel without --out:
/// convtune-out/<layer> for one thread, convtune-out/<layer>-t<N> for N, and
/// the epilogue before that (convtune-out/<layer>-bias-relu-t2), so that logs
/// of different numbers of cores or of different epilogues never mix.
std::string default_out_dir(const std::string& layer, int threads, Epilogue epilogue = Epilogue::none);

}  // namespace convtune
