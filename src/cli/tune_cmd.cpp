// `convtune tune`: one layer (--layer, --shape) or a whole network (--network).
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "jobs.h"
#include "measure_options.h"
#include "option_checks.h"
#include "shape_args.h"
#include "convtune/core/error.h"
#include "convtune/search/search.h"
#include "convtune/tune/budget.h"
#include "convtune/tune/network_tune.h"
#include "convtune/tune/tune.h"
#include "convtune/tune/warm_start.h"

namespace convtune::cli {

namespace {

struct TuneArgs {
  TuneOptions opt;
  ShapeArgs which;
  std::string table;
  bool json = false;
  bool no_onednn = false;
  bool no_transfer = false;
  int64_t job_index = -1;  // --job-index: one job of the selection
  std::string epilogue = "none";
  std::string budget;  // --budget DURATION
};

}  // namespace

Runner setup_tune(CLI::App* sub) {
  auto a = std::make_shared<TuneArgs>();
  TuneOptions& o = a->opt;
  add_shape_options(sub, a->which, "yolo9000-12");
  sub->add_option("--epilogue", a->epilogue, epilogue_help())->capture_default_str();
  sub->add_option("--arch", o.isa, arch_help());
  sub->add_flag("--emulate", o.emulate,
                "run another architecture's code under qemu-user (e.g. neon on x86; timings not meaningful)");
  sub->add_option("--table", a->table, "class table (default: your profiled one, else the shipped one)");
  sub->add_option("--search", o.search, "search strategy: " + fmt::format("{}", fmt::join(strategy_names(), ", ")))
      ->capture_default_str();
  sub->add_option("--pvalue", o.pvalue, "droplet: move only when a t-test says faster at this level")
      ->capture_default_str()
      ->check(number_in(0, 1, "(]", "a significance level"));
  sub->add_option("--parents", o.parents, "opevo: parents per generation (lambda)")->capture_default_str()
      ->check(integer_in(1, 10000, "a number of parents"));
  sub->add_option("--offspring", o.offspring, "opevo: children per generation (rho)")->capture_default_str()
      ->check(integer_in(1, 10000, "a number of children"));
  sub->add_option("--mutation-rate", o.mutation_rate, "opevo: q of the q-random walk mutation, in [0, 1)")
      ->capture_default_str()
      ->check(number_in(0, 1, "[)", "a probability"));
  sub->add_option("--trials", o.trials, "candidates to measure (a resumed log counts)")->capture_default_str()
      ->check(trials_check());
  sub->add_option("--budget", a->budget,
                  "tune every layer of the selection within this time (90s, 10m, 1h30m or seconds): batches go to "
                  "the layers expected to gain the most per second; --trials then caps each layer (docs/budget.md)");
  sub->add_option("--seed", o.seed, "random seed: with --search random the same seed proposes the same candidates")->capture_default_str()
      ->check(seed_check());
  add_measure_options(sub, o);
  sub->add_option("--top", o.top, "finalists re-measured at the end in fresh processes, interleaved (0 or 1: none)")
      ->capture_default_str()
      ->check(top_check());
  sub->add_option("--top-rounds", o.top_rounds,
                  "rounds of that re-measure; a finalist's figure is their median (0: none, the duel alone ranks; "
                  "the default with --budget)")
      ->capture_default_str()
      ->check(top_rounds_check());
  sub->add_option("--duel-rounds", o.duel_rounds,
                  "rounds of the finalists' duel that ranks them: short calls interleaved, split among three child "
                  "processes (0: rank by the re-measure)")
      ->capture_default_str()
      ->check(duel_rounds_check());
  sub->add_option("--out", o.out_dir, "directory for the best kernel and the log (default: convtune-out/<layer>)");
  sub->add_option("--log", o.log, "the JSON-lines log (default: <out>/log.jsonl)");
  sub->add_flag("--resume", o.resume, "continue an existing log without measuring anything twice");
  sub->add_flag("--any-machine", o.any_machine, "resume a log although another machine measured it");
  sub->add_option("--start-from", o.start_from,
                  "measure first the best kernel of an earlier tune of the layer (its log, or its --out directory; "
                  "with --network DIR/<layer>/), lifted to --threads; droplet and hillclimb descend from it, random-hillclimb "
                  "after its random half if it is still the fastest");
  sub->add_flag("--no-transfer", a->no_transfer,
                "with --network or --onnx (--budget too): do not measure first the winners of the other layers under "
                "--out that differ only in N, H, W (same C, K, R, S, strides, ISA and machine), lifted to each layer");
  sub->add_option("--job-index", a->job_index,
                  "tune only job I (0-based) of the selection, as 'convtune layers ... --list' lists them, e.g. "
                  "$SLURM_ARRAY_TASK_ID; with --out DIR its log goes to DIR/<layer>/ as for the whole selection")
      ->check(integer_in(0, 1e9, "a job index"));
  sub->add_flag("--json", a->json, "print JSON Lines on stdout: one object per layer, then one for a --network");
  sub->add_flag("--no-onednn", a->no_onednn, "skip the closing comparison with oneDNN");
  sub->add_option("--keep", o.keep_dir, "keep every generated candidate in this directory");
  sub->add_flag("-q,--quiet", o.quiet, "no progress output");
  return [a, sub] {
    a->opt.epilogue = parse_epilogue(a->epilogue);
    if (!sub->count("--arch")) a->opt.isa = best_arch(&a->opt.isa_note);
    if (a->opt.emulate && !sub->count("--threads")) a->opt.threads = 1;  // emulated timings gain nothing from cores
    std::vector<Shape> shapes = selected_shapes(a->which);
    // Each layer under --out/<layer>, also when one job of them runs, and for
    // a model of one Conv shape, as export --onnx --logs reads it.
    const bool many = shapes.size() > 1 || !a->which.onnx.empty();
    if (a->job_index >= 0) shapes = {job_at(shapes, a->job_index)};
    if (shapes.size() > 1 && !a->opt.log.empty())
      throw Error("--log names one file; with --network each layer keeps its own log under --out");
    if (!a->table.empty()) a->opt.table = a->table;
    check_tune_options(a->opt);  // every argument before any table is loaded
    if (!a->opt.start_from.empty())
      for (const Shape& s : shapes) start_log_path(a->opt.start_from, layer_id(s));  // every layer's, first
    NetworkTuneOptions n;
    n.tune = a->opt;
    n.per_layer_dirs = many;
    n.json = a->json;
    n.onednn = !a->no_onednn;
    n.transfer = !a->no_transfer;
    n.network = !a->which.onnx.empty() ? a->which.onnx : a->which.network;
    if (!a->budget.empty()) {
      n.budget_s = parse_duration(a->budget);
      n.trials_cap = sub->count("--trials") > 0;
      // The duel, in three processes, ranks as well as the re-measure does at
      // a tenth of its time (docs/budget.md): the budget goes to the search.
      if (sub->count("--top-rounds") == 0) n.tune.top_rounds = 0;
      if (n.tune.out_dir.empty())
        throw Error("--budget keeps the time it has spent in <out>/budget.json; give --out DIR");
      // One job's budget is its layer's own, beside its log.
      n.budget_file = n.tune.out_dir + (many && a->job_index >= 0 ? "/" + layer_id(shapes[0]) : "") + "/budget.json";
    }
    n.print = [](const std::string& text) {
      std::fputs(text.c_str(), stdout);
      std::fflush(stdout);
    };
    // An ONNX model's shape stands for `count` nodes; one job is one node's tune.
    const std::vector<int> counts = a->job_index >= 0 ? std::vector<int>() : selected_counts(a->which);
    return run_network_tune(shapes, counts, n).interrupted ? 130 : 0;
  };
}

}  // namespace convtune::cli
