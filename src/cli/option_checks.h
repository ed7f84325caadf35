#pragma once
// Range checks of numeric options, run by CLI11 at parse time: before any
// table is loaded or anything measured. A bad value gives one line naming
// the option, the value and the allowed range.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace convtune::cli {

/// A finite number between lo and hi, ends included or not as `ends` says
/// ("[]", "(]", "[)"); `unit` says what it counts ("seconds").
CLI::Validator number_in(double lo, double hi, const char* ends, const std::string& unit);
/// A whole number in [lo, hi].
CLI::Validator integer_in(long double lo, long double hi, const std::string& unit);

/// The checks of the options that tune, bench and profile share.
CLI::Validator trials_check();
CLI::Validator seed_check();
CLI::Validator cpu_check();
CLI::Validator jobs_check();
CLI::Validator min_repeat_ms_check();
CLI::Validator repeat_check();
CLI::Validator processes_check();
CLI::Validator timeout_check();
CLI::Validator check_points_check();
/// tune's finalists: how many, and in how many rounds.
CLI::Validator top_check();
CLI::Validator top_rounds_check();
CLI::Validator duel_rounds_check();
/// --threads: tune's one count; bench's comma-separated list of counts ("1,2").
CLI::Validator threads_check();
CLI::Validator threads_list_check();
/// "1,2" into {1, 2} (after threads_list_check).
std::vector<int> parse_threads_list(const std::string& text);

}  // namespace convtune::cli
