#include "option_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace convtune::cli {

namespace {

CLI::Validator checked(long double lo, long double hi, bool lo_open, bool hi_open, bool integer,
                       const std::string& unit) {
  auto text = [&](long double v) {
    return integer ? fmt::format("{}", static_cast<unsigned long long>(v)) : fmt::format("{}", double(v));
  };
  const std::string range = fmt::format("{}{}, {}{}", lo_open ? "(" : "[", text(lo), text(hi), hi_open ? ")" : "]");
  const std::string give = fmt::format("give {} in {}", unit, range);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        const char* begin = s.c_str();
        char* end = nullptr;
        long double v = std::strtold(begin, &end);
        bool whole = !s.empty() && *end == '\0';
        if (integer && whole) whole = s.find_first_not_of("+-0123456789") == std::string::npos;
        if (!whole) return fmt::format("'{}' is not {}; {}", s, integer ? "a whole number" : "a number", give);
        if (!std::isfinite(v)) return fmt::format("'{}' is not a finite number; {}", s, give);
        if (v < lo || v > hi || (lo_open && v == lo) || (hi_open && v == hi)) return fmt::format("{} is out of range; {}", s, give);
        return "";
      },
      range);
}

}  // namespace

CLI::Validator number_in(double lo, double hi, const char* ends, const std::string& unit) {
  return checked(lo, hi, ends[0] == '(', ends[1] == ')', false, unit);
}

CLI::Validator integer_in(long double lo, long double hi, const std::string& unit) {
  return checked(lo, hi, false, false, true, unit);
}

CLI::Validator trials_check() { return integer_in(1, 1e7, "a number of candidates"); }
CLI::Validator seed_check() { return integer_in(0, 18446744073709551615.0L, "a whole number"); }
CLI::Validator cpu_check() { return integer_in(0, 4095, "a CPU number"); }
CLI::Validator jobs_check() { return integer_in(1, 1024, "a number of parallel compilations"); }
CLI::Validator min_repeat_ms_check() { return number_in(0, 60000, "(]", "milliseconds"); }
CLI::Validator repeat_check() { return integer_in(1, 1000, "a number of measurements"); }
CLI::Validator processes_check() { return integer_in(1, 100, "a number of processes"); }
CLI::Validator timeout_check() { return number_in(0, 86400, "(]", "seconds"); }
CLI::Validator top_check() { return integer_in(0, 1000, "a number of finalists (0 or 1: no re-measure)"); }
CLI::Validator top_rounds_check() { return integer_in(0, 1000, "a number of rounds (0: the duel alone ranks)"); }
CLI::Validator duel_rounds_check() { return integer_in(0, 1000, "a number of rounds (0: no duel)"); }
CLI::Validator threads_check() { return integer_in(1, 4096, "a number of threads"); }

CLI::Validator threads_list_check() {
  const CLI::Validator one = threads_check();
  return CLI::Validator(
      [one](std::string& s) -> std::string {
        std::string rest = s;
        for (size_t at = 0;;) {
          const size_t comma = rest.find(',', at);
          std::string part = rest.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
          std::string why = one(part);
          if (!why.empty()) return why + " (or a list such as 1,2)";
          if (comma == std::string::npos) return "";
          at = comma + 1;
        }
      },
      "[1, 4096],...");
}

std::vector<int> parse_threads_list(const std::string& text) {
  std::vector<int> v;
  for (size_t at = 0;;) {
    const size_t comma = text.find(',', at);
    v.push_back(std::stoi(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
    if (comma == std::string::npos) return v;
    at = comma + 1;
  }
}

CLI::Validator check_points_check() { return integer_in(0, 1e9, "a number of output elements (0 checks all)"); }

}  // namespace convtune::cli
