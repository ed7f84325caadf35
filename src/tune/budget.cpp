// The budget's duration text, its allocation rule and its state file (budget.h).
#include "convtune/tune/budget.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/core/error.h"
#include "convtune/core/files.h"

namespace convtune {

namespace {

Error duration_error(const std::string& text, const std::string& problem) {
  return Error(fmt::format("--budget '{}': {}; give a duration such as 90s, 10m, 1h30m or plain seconds", text,
                           problem));
}

// A decimal number at text[i...]: its value, i moved past it; -1 when none.
double number_at(const std::string& text, size_t& i) {
  const size_t start = i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  const std::string n = text.substr(start, i - start);
  if (n.empty() || std::count(n.begin(), n.end(), '.') > 1 || n == ".") {
    i = start;
    return -1;
  }
  return std::stod(n);
}

}  // namespace

double parse_duration(const std::string& text) {
  if (text.empty()) throw duration_error(text, "it is empty");
  const std::string units = "hms";
  const double scale[] = {3600, 60, 1};
  double total = 0;
  size_t i = 0, next_unit = 0;
  while (i < text.size()) {
    const double v = number_at(text, i);
    if (v < 0) throw duration_error(text, fmt::format("expected a number at '{}'", text.substr(i)));
    if (i == text.size()) {
      if (next_unit > 0) throw duration_error(text, "the number at the end has no unit (h, m or s)");
      total = v;  // plain seconds
      break;
    }
    const size_t u = units.find(text[i]);
    if (u == std::string::npos)
      throw duration_error(text, fmt::format("unknown unit '{}' (use h, m or s)", text.substr(i, 1)));
    if (u < next_unit) throw duration_error(text, "give the units once each, in the order h, m, s");
    total += v * scale[u];
    next_unit = u + 1;
    ++i;
  }
  if (!(std::isfinite(total) && total > 0)) throw duration_error(text, "it is not a positive duration");
  return total;
}

std::string format_duration(double seconds) {
  const int64_t t = std::max<int64_t>(0, int64_t(std::floor(seconds)));
  const int64_t h = t / 3600, m = t % 3600 / 60, s = t % 60;
  std::string o;
  if (h) o += fmt::format("{}h", h);
  if (m) o += fmt::format("{}m", m);
  if (s || o.empty()) o += fmt::format("{}s", s);
  return o;
}

double expected_gain(const BudgetLayer& l, const BudgetRule& rule) {
  const auto& c = l.best_curve;
  const int64_t n = int64_t(c.size());
  double observed = 0;
  if (n > 0 && c.back() > 0) {
    // The best time `window` trials ago (or the first that ran), against now.
    int64_t from = std::max<int64_t>(0, n - 1 - rule.window);
    while (from < n && c[size_t(from)] <= 0) ++from;
    const int64_t span = n - 1 - from;
    if (span > 0) observed = (c[size_t(from)] - c.back()) / c[size_t(from)] / double(span);
  }
  // Ansor's optimistic guess for a task with little history (Zheng et al. 2020 §6) fades as
  // the layer's own history grows.
  const double guess = (rule.prior_trials * rule.prior_gain + double(n) * observed) / (rule.prior_trials + double(n));
  // A time another implementation reaches on the same cores is a gain known to exist (Ansor
  // bounds a task by its similar tasks' best the same way).
  const double best = n > 0 ? c.back() : 0;
  const double behind = l.reference_s > 0 && best > l.reference_s ? (best - l.reference_s) / best : 0;
  return std::max(guess, behind / double(std::max<int64_t>(1, rule.window)));
}

double budget_score(const BudgetLayer& l, double fallback_best_s, const BudgetRule& rule) {
  const double best = !l.best_curve.empty() && l.best_curve.back() > 0 ? l.best_curve.back() : fallback_best_s;
  const double spt = l.seconds_per_trial > 0 ? l.seconds_per_trial : 1;
  return l.count * best * expected_gain(l, rule) / spt;
}

namespace {

bool has_room(const BudgetLayer& l) { return !l.exhausted && (l.cap == 0 || l.trials < l.cap); }

double mean_known(const std::vector<BudgetLayer>& layers, double BudgetLayer::*field) {
  double sum = 0;
  int n = 0;
  for (const BudgetLayer& l : layers)
    if (l.*field > 0) sum += l.*field, ++n;
  return n ? sum / n : 0;
}

// The batch for layer i cut to what fits in `avail` seconds: trials 0 when
// not even one does.
BudgetBatch fitted(const BudgetLayer& l, int i, int64_t batch, double spt, double avail, bool opening) {
  int64_t n = l.cap > 0 ? std::min(batch, l.cap - l.trials) : batch;
  if (spt > 0) n = std::min<int64_t>(n, int64_t(std::floor(avail / spt)));
  else if (avail <= 0) n = 0;
  return BudgetBatch{i, std::max<int64_t>(0, n), std::max<int64_t>(0, n) * spt, avail, opening};
}

}  // namespace

double budget_reserve(const std::vector<BudgetLayer>& layers, const BudgetRule& rule) {
  const double closing_mean = mean_known(layers, &BudgetLayer::closing_s);
  const double light_mean = mean_known(layers, &BudgetLayer::light_closing_s);
  double full = 0, light = 0;
  for (const BudgetLayer& l : layers) {
    full += l.closing_s > 0 ? l.closing_s : closing_mean;
    light += l.light_closing_s > 0 ? l.light_closing_s : light_mean;
  }
  const double finalists = std::max(0.0, full - light);
  return light + (rule.finalists_s > 0 ? std::min(finalists, rule.finalists_s) : finalists);
}

BudgetBatch next_batch(const std::vector<BudgetLayer>& layers, double left_s, int64_t batch, const BudgetRule& rule) {
  const double spt_mean = mean_known(layers, &BudgetLayer::seconds_per_trial);
  double slowest = 0;
  for (const BudgetLayer& l : layers)
    if (!l.best_curve.empty()) slowest = std::max(slowest, l.best_curve.back());
  auto spt_of = [&](const BudgetLayer& l) { return l.seconds_per_trial > 0 ? l.seconds_per_trial : spt_mean; };
  // One candidate of every layer still without its opening batch is kept
  // too, so that the first layers' openings cannot starve the last ones.
  double openings = 0;
  for (const BudgetLayer& l : layers)
    if (!l.opened && has_room(l)) openings += spt_of(l);
  const double avail = left_s - budget_reserve(layers, rule) - openings;
  // Opening batches first, in the model's order: no layer is judged before it
  // has a history. With nothing measured yet the first is one candidate, so
  // that the next decision knows what a candidate costs.
  for (size_t i = 0; i < layers.size(); ++i)
    if (!layers[i].opened && has_room(layers[i])) {
      const double spt = spt_of(layers[i]);
      const BudgetBatch b = fitted(layers[i], int(i), spt > 0 ? batch : 1, spt, avail + spt, true);
      if (b.trials > 0) return b;
    }
  std::vector<std::pair<double, size_t>> ranked;
  for (size_t i = 0; i < layers.size(); ++i)
    if (layers[i].opened && has_room(layers[i])) ranked.push_back({budget_score(layers[i], slowest, rule), i});
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [score, i] : ranked) {
    const BudgetBatch b = fitted(layers[i], int(i), batch, spt_of(layers[i]), avail, false);
    if (b.trials > 0) return b;
  }
  return BudgetBatch{};
}

BudgetState read_budget_state(const std::string& path) {
  BudgetState s;
  std::ifstream in(path);
  if (!in) return s;
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  const auto bad = [&](const std::string& what) {
    return Error(fmt::format("budget state '{}' {}; remove it to start the budget afresh", path, what));
  };
  if (!j.is_object() || !j.contains("spent_s") || !j["spent_s"].is_number()) throw bad("has no spent_s number");
  s.budget_s = j.value("budget_s", 0.0);
  s.spent_s = j["spent_s"].get<double>();
  if (j.contains("layers") && j["layers"].is_object())
    for (const auto& [id, l] : j["layers"].items())
      if (l.is_object())
        s.layers.push_back({id, l.value("seconds_per_trial", 0.0), l.value("closing_s", 0.0)});
  return s;
}

void write_budget_state(const std::string& path, const BudgetState& s) {
  nlohmann::json layers = nlohmann::json::object();
  for (const BudgetState::Layer& l : s.layers)
    layers[l.id] = {{"seconds_per_trial", l.seconds_per_trial}, {"closing_s", l.closing_s}};
  const nlohmann::json j{{"budget_s", s.budget_s}, {"spent_s", s.spent_s}, {"layers", layers}};
  write_file_atomic(path, j.dump(2) + "\n", "the budget's spent time",
                    "free space under --out; the logs keep every measurement");
}

}  // namespace convtune
