// The finalists step of a tune (finalist.h).
#include "convtune/tune/finalist.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "convtune/execution/runner.h"

namespace convtune {

std::vector<Record> top_records(const std::vector<Record>& records, size_t k) {
  // One list per session, a session being the records of one tune process:
  // they share the peak that process measured (tune_start_runner). Each list is
  // ranked by share of that peak (records.h relative_speed).
  std::vector<std::vector<Record>> sessions;
  std::map<double, size_t> session_of;
  std::set<std::string> seen;
  for (const Record& r : records) {
    if (r.status != Status::ok || !seen.insert(r.config).second) continue;
    auto [it, added] = session_of.emplace(r.peak_gflops, sessions.size());
    if (added) sessions.emplace_back();
    sessions[it->second].push_back(r);
  }
  for (std::vector<Record>& s : sessions) std::stable_sort(s.begin(), s.end(), faster);
  std::stable_sort(sessions.begin(), sessions.end(),
                   [](const std::vector<Record>& a, const std::vector<Record>& b) { return faster(a[0], b[0]); });
  // The sessions' bests in turn, then their seconds, and so on. Shares of
  // different sessions' peaks compare only to a few %: one kernel can read
  // over 100 % of one session's peak and under 90 % of another's, and by
  // share alone one session's kernels could then crowd another's fastest out
  // of the finalists. Only the re-measure and the duel compare sessions.
  std::vector<Record> top;
  for (size_t rank = 0; top.size() < k; ++rank) {
    bool any = false;
    for (const std::vector<Record>& s : sessions)
      if (rank < s.size() && top.size() < k) {
        top.push_back(s[rank]);
        any = true;
      }
    if (!any) break;
  }
  return top;
}

void remeasure(const Runner& runner, std::vector<Finalist>& f, const TimingProtocol& protocol, int rounds,
               double timeout_s, double flops, double real_flops, double peak_gflops,
               const std::function<bool()>& stop) {
  std::vector<std::vector<double>> secs(f.size());
  for (int round = 0; round < rounds; ++round)
    for (size_t i : round_order(f.size(), size_t(round))) {
      if (stop()) return;
      if (f[i].status != Status::ok) continue;
      RunResult r = runner.run_conv(f[i].exe, protocol, timeout_s);
      if (r.status != Status::ok) {
        f[i].status = r.status;
        f[i].detail = fmt::format("re-measure round {}: {}", round + 1, r.detail);
        continue;
      }
      const double s = trusted_seconds(r.seconds, r.wall_seconds, real_flops, peak_gflops);
      secs[i].push_back(s);
      f[i].round_gflops.push_back(flops / s * 1e-9);
    }
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i].status != Status::ok) continue;
    f[i].seconds = median(secs[i]);
    f[i].gflops = flops / f[i].seconds * 1e-9;
    const auto [lo, hi] = std::minmax_element(f[i].round_gflops.begin(), f[i].round_gflops.end());
    f[i].spread = 100 * (*hi - *lo) / median(f[i].round_gflops);
  }
}

void rank_finalists(std::vector<Finalist>& f) {
  auto figure = [](const Finalist& x) {
    return x.duel_gflops > 0 ? x.duel_gflops : x.gflops > 0 ? x.gflops : x.search_gflops;
  };
  std::stable_sort(f.begin(), f.end(), [&](const Finalist& a, const Finalist& b) {
    if ((a.status == Status::ok) != (b.status == Status::ok)) return a.status == Status::ok;
    return figure(a) > figure(b);
  });
}

int full_check(Runner& runner, const ProblemData& full, std::vector<Finalist>& f, double timeout_s,
               const std::function<bool()>& stop) {
  runner.set_problem(full);
  // Verifying is the point; the driver times afterwards, so keep that short.
  const TimingProtocol quick{1, 1, 0};
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i].status != Status::ok) continue;
    if (stop()) return -1;
    RunResult r = runner.run_conv(f[i].exe, quick, timeout_s);
    if (r.status == Status::ok) {
      f[i].full_check = "passed";
      return int(i);
    }
    f[i].full_check = "failed";
    f[i].status = r.status;
    f[i].detail = "full check: " + r.detail;
  }
  return -1;
}

nlohmann::json finalists_json(const std::vector<Finalist>& f) {
  nlohmann::json a = nlohmann::json::array();
  for (const Finalist& x : f) {
    nlohmann::json j{{"config", x.config},
                     {"search_gflops", x.search_gflops},
                     {"status", to_string(x.status)},
                     {"full_check", x.full_check},
                     {"winner", x.winner}};
    if (!x.detail.empty()) j["detail"] = x.detail;
    if (x.gflops > 0) {
      j["gflops"] = x.gflops;
      j["seconds"] = x.seconds;
      j["round_gflops"] = x.round_gflops;
      j["spread_percent"] = x.spread;
    }
    if (x.duel_gflops > 0) {
      j["duel_gflops"] = x.duel_gflops;
      j["duel_iqr_percent"] = x.duel_iqr;
    }
    a.push_back(j);
  }
  return a;
}

std::string finalists_table(const std::vector<Finalist>& f, int rounds, int duel_rounds) {
  std::string o = rounds > 0 ? fmt::format("finalists, re-measured in {} interleaved rounds of fresh processes", rounds)
                             : std::string("finalists, not re-measured");
  o += duel_rounds > 0 ? fmt::format(", ranked by a duel of {} interleaved rounds in {} processes:\n", duel_rounds,
                                     std::min(kDuelChildren, duel_rounds))
                       : ":\n";
  o += fmt::format("  {:>14} {:>14} {:>7} {:>8} {:>6}  {:<13} {}\n", "search GFLOP/s", "re-measured", "spread",
                   "duel", "IQR", "result", "config");
  for (const Finalist& x : f) {
    const std::string result = x.winner ? "winner" : x.status != Status::ok ? to_string(x.status) : "";
    o += fmt::format("  {:>14.1f} {:>14} {:>7} {:>8} {:>6}  {:<13} {}\n", x.search_gflops,
                     x.gflops > 0 ? fmt::format("{:.1f}", x.gflops) : "-",
                     x.gflops > 0 ? fmt::format("{:.1f}%", x.spread) : "-",
                     x.duel_gflops > 0 ? fmt::format("{:.1f}", x.duel_gflops) : "-",
                     x.duel_gflops > 0 ? fmt::format("{:.1f}%", x.duel_iqr) : "-", result, x.config);
    if (!x.detail.empty()) o += "      " + x.detail + "\n";
  }
  return o;
}

}  // namespace convtune
