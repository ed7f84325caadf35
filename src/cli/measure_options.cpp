#include "measure_options.h"

#include <fmt/format.h>

#include "option_checks.h"
#include "convtune/core/machine.h"

namespace convtune::cli {

void add_measure_options(CLI::App* sub, TuneOptions& o, std::string* threads_list) {
  sub->add_option("--cpu", o.cpu, "core to pin measurements to (default: the last one this process may use)")
      ->check(cpu_check());
  // --threads means one thing for both, said in each command's terms: the
  // cores around --cpu that tune's candidates, or bench's implementations, run on.
  const char* cores = "--cpu and the N-1 CPUs nearest it";
  const char* every = "every CPU this process may use";
  if (threads_list) {
    *threads_list = std::to_string(available_cpus());
    sub->add_option("--threads", *threads_list,
                    fmt::format("cores and threads of every implementation: {}; a list (1,2) runs once per count and "
                                "prints the scaling (default: {})",
                                cores, every))
        ->capture_default_str()
        ->check(threads_list_check());
  } else {
    o.threads = available_cpus();
    sub->add_option("--threads", o.threads,
                    fmt::format("cores a candidate runs on: {}; with N > 1 every candidate has a parallel loop P "
                                "(default: {}; 1 with --emulate)",
                                cores, every))
        ->capture_default_str()
        ->check(threads_check());
  }
  sub->add_option("-j,--jobs", o.jobs, "parallel compilations while tuning (default: the cores but one)")
      ->check(jobs_check());
  sub->add_option("--min-repeat-ms", o.min_repeat_ms, "one measurement lasts at least this long (ms)")
      ->capture_default_str()
      ->check(min_repeat_ms_check());
  sub->add_option("--repeat", o.repeat, "measurements kept after one discarded (median)")->capture_default_str()
      ->check(repeat_check());
  sub->add_option("--timeout", o.timeout_s, "seconds a tuning candidate may run before it counts as hung")
      ->capture_default_str()
      ->check(timeout_check());
  sub->add_option("--check-points", o.check_points, "output elements checked against the reference per kernel (0: all)")
      ->capture_default_str()
      ->check(check_points_check());
}

}  // namespace convtune::cli
