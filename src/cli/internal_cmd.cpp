// Hidden subcommands that convtune spawns of itself (never shown in --help).
#include "commands.h"
#include "convtune/core/shape.h"
#include "convtune/tune/finalist_duel.h"
#include "convtune/tune/tune_compare.h"

namespace convtune::cli {

namespace {

struct OnednnArgs {
  std::string shape;
  int cpu = 0;
  double min_ms = 100;
  int repeat = 5;
  int threads = 1;
  std::string epilogue = "none";
  std::string isa;
  double reference_gflops = 0;
};

}  // namespace

// `internal-onednn`: tune's closing oneDNN comparison, in its own process.
Runner setup_internal_onednn(CLI::App* sub) {
  auto a = std::make_shared<OnednnArgs>();
  sub->group("");  // hidden
  sub->add_option("--shape", a->shape)->required();
  sub->add_option("--cpu", a->cpu)->required();
  sub->add_option("--min-repeat-ms", a->min_ms);
  sub->add_option("--repeat", a->repeat);
  sub->add_option("--threads", a->threads);
  sub->add_option("--epilogue", a->epilogue);
  sub->add_option("--arch", a->isa);
  sub->add_option("--reference-gflops", a->reference_gflops);
  return [a] {
    return onednn_child(parse_shape(a->shape), a->cpu, a->min_ms, a->repeat, a->threads, parse_epilogue(a->epilogue),
                        a->isa, a->reference_gflops);
  };
}

namespace {

struct DuelArgs {
  std::string shape;
  std::string epilogue = "none";
  int cpu = 0;
  int threads = 1;
  double min_ms = 20;
  int rounds = 20;
  size_t check_points = 4000;
  std::vector<std::string> sos;
};

}  // namespace

// `internal-duel`: the finalists' duel (finalist_duel.h), in its own process.
Runner setup_internal_duel(CLI::App* sub) {
  auto a = std::make_shared<DuelArgs>();
  sub->group("");  // hidden
  sub->add_option("--shape", a->shape)->required();
  sub->add_option("--epilogue", a->epilogue);
  sub->add_option("--cpu", a->cpu)->required();
  sub->add_option("--threads", a->threads);
  sub->add_option("--min-repeat-ms", a->min_ms);
  sub->add_option("--rounds", a->rounds);
  sub->add_option("--check-points", a->check_points);
  sub->add_option("sos", a->sos)->required();
  return [a] {
    return duel_child(parse_shape(a->shape), parse_epilogue(a->epilogue), a->cpu, a->threads, a->min_ms, a->rounds,
                      a->check_points, a->sos);
  };
}

}  // namespace convtune::cli
