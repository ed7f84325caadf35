// `convtune profile`: parse options, run the offline stage, write the table.
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "option_checks.h"
#include "convtune/offline/class_table.h"
#include "convtune/core/file_lock.h"
#include "convtune/core/files.h"
#include "convtune/core/isa.h"
#include "convtune/offline/profile.h"
#include "convtune/offline/profile_journal.h"
#include "convtune/offline/table_report.h"

namespace convtune::cli {

Runner setup_profile(CLI::App* sub) {
  auto opt = std::make_shared<ProfileOptions>();
  auto out = std::make_shared<std::string>();
  sub->add_option("--arch", opt->isa, arch_help());
  sub->add_flag("--emulate", opt->emulate,
                "run another architecture's code under qemu-user (e.g. neon on x86; timings not meaningful)");
  sub->add_option("--out", *out, "where to write the class table (default: " +
                                    default_table_path("<arch>") + ")");
  sub->add_option("--threshold", opt->threshold,
                  "fraction of peak a microkernel must reach (a depthwise one: of the fastest of its filter)")
      ->capture_default_str()
      ->check(number_in(0, 1.5, "(]", "a fraction of peak such as 0.80"));
  sub->add_flag("--quick", opt->quick,
                "profile a small representative subset (every (r,s) pair, edge sizes; depthwise: square filters)");
  sub->add_option("--cpu", opt->cpu, "core to pin measurements to (default: the last one)")
      ->check(cpu_check());
  sub->add_option("-j,--jobs", opt->jobs, "parallel compilations (default: the cores but one)")
      ->check(jobs_check());
  sub->add_option("--min-repeat-ms", opt->min_ms, "minimum length of one measurement, ms")
      ->capture_default_str()
      ->check(min_repeat_ms_check());
  sub->add_option("--repeat", opt->repeat, "measurements kept per microkernel (median)")
      ->capture_default_str()
      ->check(repeat_check());
  sub->add_option("--keep", opt->keep_dir, "keep the generated sources in this directory");
  sub->add_flag("--resume", opt->resume,
                "continue the journal an interrupted profile left next to --out, measuring only the rest");
  sub->add_flag("-q,--quiet", opt->quiet, "no progress output");
  return [opt, out, sub] {
    std::string note;
    if (!sub->count("--arch")) opt->isa = best_arch(&note);
    load_isa(opt->isa);  // an unknown --arch is the first thing to report
    std::string path = out->empty() ? default_table_path(opt->isa) : *out;
    ensure_writable(path, "--out");  // fail before the long work, not after
    FileLock lock(path, "class table", "--out");  // two profiles at once would halve each other's timings
    if (!note.empty() && !opt->quiet) std::fprintf(stderr, "convtune: %s\n", note.c_str());
    opt->journal = journal_path(path);
    ProfileResult r = run_profile(*opt);
    const size_t kept = r.resumed_first + r.resumed_again + r.measured_first + r.measured_again;
    if (r.interrupted) {
      std::fprintf(stderr,
                   "convtune: interrupted; %zu measurements are kept in journal '%s'; run the same command with "
                   "--resume to continue\n",
                   kept, opt->journal.c_str());
      return 130;
    }
    if (!opt->quiet)
      std::fprintf(stderr, "convtune: this run measured %zu microkernel forms (plain and fenced) and re-measured %zu; %zu measurements came "
                   "from the journal\n",
                   r.measured_first, r.measured_again, r.resumed_first + r.resumed_again);
    write_table(r.table, path);
    remove_journal(opt->journal);  // the table holds everything the journal did
    r.table.origin = path;
    std::fputs(table_summary(r.table).c_str(), stdout);
    return 0;
  };
}

Runner setup_table(CLI::App* sub) {
  auto isa = std::make_shared<std::string>();
  auto path = std::make_shared<std::string>();
  sub->add_option("--arch", *isa, arch_help() + "; with --table, the table's own");
  sub->add_option("--table", *path, "a class table file (default: the one tune would use)");
  return [isa, path] {
    std::string note;
    if (isa->empty() && path->empty()) *isa = best_arch(&note);
    if (!note.empty()) std::fprintf(stderr, "convtune: %s\n", note.c_str());
    ClassTable t = load_table(*isa, path->empty() ? std::nullopt : std::optional<std::string>(*path));
    std::string warn = fingerprint_warning(t);
    if (!warn.empty()) std::fprintf(stderr, "convtune: %s\n", warn.c_str());
    std::fputs(table_summary(t).c_str(), stdout);
    return 0;
  };
}

}  // namespace convtune::cli
