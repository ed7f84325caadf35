// The class table (000 §4.1): selection of microkernels into classes, the
// selected ones whose sizes differ only in h. Its JSON form is in
// class_table_json.cpp, its files in class_table_files.cpp.
#include "convtune/offline/class_table.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace convtune {

std::map<std::pair<int, int>, double> depthwise_best(const std::vector<UkRecord>& microkernels) {
  std::map<std::pair<int, int>, double> best;
  for (const UkRecord& r : microkernels)
    if (r.sizes.dw && r.status == Status::ok) {
      double& b = best[{r.sizes.r, r.sizes.s}];
      b = std::max(b, r.gflops);
    }
  return best;
}

void ClassTable::select_and_classify() {
  // The epsilon keeps e.g. 80.00 selected at threshold 0.8 despite 0.8*100 rounding.
  const double cut = threshold * 100 - 1e-9;
  // Depthwise microkernels are bound by loads, not FMAs: ranked against the
  // fastest of their filter (class_table.h).
  const std::map<std::pair<int, int>, double> dw_best = depthwise_best(microkernels);
  // Depthwise microkernels form classes of their own (UkSizes::dw).
  std::map<std::tuple<bool, int, int, int, int, int>, std::vector<int>> groups;
  for (UkRecord& r : microkernels) {
    if (r.sizes.dw) {
      auto b = dw_best.find({r.sizes.r, r.sizes.s});
      r.selected = r.status == Status::ok && b != dw_best.end() && b->second > 0 &&
                   100 * r.gflops / b->second >= cut;
    } else {
      r.selected = r.status == Status::ok && r.percent_peak >= cut;
    }
    if (r.selected)
      groups[{r.sizes.dw, r.sizes.k, r.sizes.c, r.sizes.w, r.sizes.r, r.sizes.s}].push_back(r.sizes.h);
  }
  classes.clear();
  for (auto& [key, hs] : groups) {
    UkClass c;
    std::tie(c.sizes.dw, c.sizes.k, c.sizes.c, c.sizes.w, c.sizes.r, c.sizes.s) = key;
    c.sizes.h = 0;
    std::sort(hs.begin(), hs.end());
    hs.erase(std::unique(hs.begin(), hs.end()), hs.end());
    c.h = hs;
    classes.push_back(c);
  }
}

const UkRecord* ClassTable::find(const UkSizes& u) const {
  for (const UkRecord& r : microkernels)
    if (r.sizes == u) return &r;
  return nullptr;
}

std::vector<UkRecord> ClassTable::selected() const {
  std::vector<UkRecord> out;
  for (const UkRecord& r : microkernels)
    if (r.selected) out.push_back(r);
  return out;
}

}  // namespace convtune
