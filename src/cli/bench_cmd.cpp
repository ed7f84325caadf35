// `convtune bench`: one layer (--layer, --shape) or a whole network (--network);
// with --library, an exported library against oneDNN and XNNPACK (library_bench.h).
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "measure_options.h"
#include "option_checks.h"
#include "shape_args.h"
#include "convtune/bench/bench.h"
#include "convtune/bench/library_bench.h"
#include "convtune/core/error.h"
#include "convtune/core/text.h"
#include "convtune/search/search.h"

namespace convtune::cli {

namespace {

struct BenchArgs {
  BenchOptions opt;
  ShapeArgs which;
  std::string table;
  std::string threads;  // "2" or "1,2"
  bool json = false;
  std::string epilogue = "none";
  std::string library;  // --library DIR
};

// The options that take convtune's kernel from a log or a tune: --config and
// --library give the kernel themselves.
const std::vector<std::string> kLogOrTuneOptions = {"--trials", "--log",  "--out",  "--resume",
                                                    "--search", "--seed", "--table"};

// bench --library: the selection as the network's sequence, one thread count.
int run_library(const BenchArgs& a, CLI::App* sub) {
  std::vector<std::string> own = kLogOrTuneOptions;
  own.push_back("--config");
  for (const std::string& opt : own)
    if (sub->count(opt))
      throw Error(fmt::format("--library benches the exported kernels; {} is for convtune's own kernel: leave it out",
                              opt));
  if (a.epilogue != "none")  // what run_library_bench does with a library exported with one: refuses it
    throw Error("--library times plain convolutions only (a library exported with --epilogue is refused, its "
                "baselines have no epilogue); leave out --epilogue and bench a library exported without one");
  const std::vector<int> counts = parse_threads_list(a.threads);
  if (counts.size() > 1) throw Error("--library takes one --threads count; run it once per count");
  const TuneOptions& t = a.opt.tune;
  LibraryBenchOptions o;
  o.dir = a.library;
  o.sequence = selected_sequence(a.which);
  o.cpu = t.cpu;
  o.threads = counts[0];
  o.min_repeat_ms = t.min_repeat_ms;
  o.repeat = t.repeat;
  o.check_points = t.check_points;
  o.quiet = t.quiet;
  o.processes = a.opt.processes;
  o.selection = selection_options(a.which);
  const LibraryBenchResult r = o.processes > 1 ? run_library_bench_processes(o) : run_library_bench(o);
  for (const auto& e : r.totals)
    if (!e.ran()) std::fprintf(stderr, "convtune: note: %s: %s\n", e.name.c_str(), e.missing.c_str());
  std::fputs((a.json ? library_bench_json(r) : library_bench_summary(r)).c_str(), stdout);
  return 0;
}

}  // namespace

Runner setup_bench(CLI::App* sub) {
  auto a = std::make_shared<BenchArgs>();
  TuneOptions& o = a->opt.tune;
  add_shape_options(sub, a->which, "resnet18-12");
  sub->add_option("--epilogue", a->epilogue, epilogue_help())->capture_default_str();
  sub->add_option("--trials", o.trials, "tune now with this many candidates instead of reading the log")
      ->check(trials_check());
  sub->add_option("--search", o.search, "search strategy of that tune: " +
                                            fmt::format("{}", fmt::join(strategy_names(), ", ")))
      ->capture_default_str();
  sub->add_option("--seed", o.seed, "random seed of that tune")->capture_default_str()
      ->check(seed_check());
  sub->add_flag("--resume", o.resume, "with --trials: continue an existing log");
  sub->add_flag("--any-machine", o.any_machine, "use a log although another machine measured it");
  sub->add_option("--arch", o.isa, arch_help());
  sub->add_option("--table", a->table, "class table for --trials (default: your profiled one, else the shipped one)");
  add_measure_options(sub, o, &a->threads);
  sub->add_option("--out", o.out_dir, "the layer's tuning directory (default: convtune-out/<layer>)");
  sub->add_option("--log", o.log, "the layer's JSON-lines log (default: <out>/log.jsonl)");
  sub->add_flag("--json", a->json, "print JSON Lines on stdout: one object per layer");
  sub->add_flag("-q,--quiet", o.quiet, "no progress output");
  sub->add_option("--processes", a->opt.processes,
                  "measure in this many fresh processes, one after another, each with its own buffers (their "
                  "pages decide cache conflicts); times are the medians of theirs")
      ->capture_default_str()
      ->check(processes_check());
  sub->add_option("--config", a->opt.config,
                  "bench this configuration of the one layer instead of the log's best, e.g. a log's or tune's "
                  "text edited by hand: \"[T(8,h), T(8,w), T(16,c), U(3,s), U(3,r), U(2,k), V(k)]\"");
  sub->add_option("--library", a->library,
                  "bench the library 'convtune export --out DIR' wrote: every layer and the whole selection in "
                  "sequence (shapes as often as the network has them), against oneDNN and XNNPACK");
  return [a, sub] {
    if (!a->library.empty()) return run_library(*a, sub);
    a->opt.tune.epilogue = parse_epilogue(a->epilogue);
    std::vector<Shape> shapes = selected_shapes(a->which);
    if (shapes.size() > 1 && !a->opt.tune.log.empty())
      throw Error("--log names one file; with --network each layer keeps its own log under --out");
    const std::vector<int> counts = parse_threads_list(a->threads);
    if (sub->count("--config") && trim(a->opt.config).empty())
      throw Error("--config is empty; give a configuration, e.g. \"[T(8,h), T(8,w), T(16,c), U(3,s), U(3,r), U(2,k), "
                  "V(k)]\", or leave out --config to bench the log's best");
    if (!a->opt.config.empty()) {
      if (shapes.size() > 1) throw Error("--config is one layer's kernel; give one --layer or --shape");
      if (counts.size() > 1) throw Error("--config is one kernel for one thread count; give one --threads count");
      for (const std::string& opt : kLogOrTuneOptions)
        if (sub->count(opt))
          throw Error(fmt::format("--config gives convtune's kernel; {} is for one from a log or a tune: leave it out",
                                  opt));
    }
    if (counts.size() > 1 && !a->opt.tune.log.empty())
      throw Error("--log names one file; with several --threads each count keeps its own log under --out");
    a->opt.fresh_tune = sub->count("--trials") > 0;
    if (!sub->count("--arch")) a->opt.tune.isa = best_arch(&a->opt.tune.isa_note);  // not avx512 on AVX2-only hosts
    if (!a->table.empty()) a->opt.tune.table = a->table;
    if (a->opt.fresh_tune) check_tune_options(a->opt.tune);  // before any work
    bool told = false;
    for (const Shape& s : shapes) {
      std::vector<BenchResult> runs;  // one per thread count, in this process
      for (int n : counts) {
        BenchOptions b = a->opt;
        b.tune.shape = s;
        b.tune.threads = n;
        if (shapes.size() > 1 && !b.tune.out_dir.empty()) b.tune.out_dir += "/" + layer_id(s);
        if (counts.size() > 1 && !b.tune.out_dir.empty()) b.tune.out_dir += "/t" + std::to_string(n);
        BenchResult r = b.processes > 1 ? run_bench_processes(b) : run_bench(b);
        for (const auto& e : r.entries)
          if (!e.ran() && !told) std::fprintf(stderr, "convtune: note: %s\n", e.missing.c_str());
        told = true;  // once per run, not per layer
        std::fputs((a->json ? bench_json(r) : bench_summary(r)).c_str(), stdout);
        std::fflush(stdout);
        runs.push_back(r);
      }
      if (runs.size() > 1 && !a->json) std::fputs(bench_scaling(runs).c_str(), stdout);
    }
    return 0;
  };
}

}  // namespace convtune::cli
