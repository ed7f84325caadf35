#include "convtune/offline/table_report.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace convtune {

std::string table_summary(const ClassTable& t) {
  size_t ok = 0, sel = 0;
  const UkRecord* best = nullptr;
  for (const auto& r : t.microkernels) {
    if (r.status == Status::ok) ++ok;
    if (r.selected) ++sel;
    if (!r.sizes.dw && r.status == Status::ok && (!best || r.gflops > best->gflops)) best = &r;  // of the peak's
  }
  std::string o;
  o += fmt::format("class table: {}\n", t.origin.empty() ? "(unsaved)" : t.origin);
  o += fmt::format("isa: {}{}   created: {}{}   convtune {}\n", t.isa, t.quick ? " (quick subset)" : "",
                   t.created, t.resumed ? " (finished by --resume)" : "", t.tool_version);
  o += fmt::format("machine: {} ({} cores, L1d {} KiB, L2 {} KiB, L3 {} KiB)\n", t.machine.cpu_model,
                   t.machine.cores, t.machine.l1d_bytes / 1024, t.machine.l2_bytes / 1024,
                   t.machine.l3_bytes / 1024);
  o += fmt::format("compiler: {} {}   counters: {}\n", t.compiler.command,
                   fmt::join(t.compiler.flags, " "), t.counters);
  o += fmt::format("peak: {:.1f} GFLOP/s (start {:.1f}, end {:.1f}){}\n", t.peak_gflops,
                   t.peak_start_gflops, t.peak_end_gflops,
                   t.emulated ? " (emulated: timings not meaningful)" : "");
  const bool depthwise = std::any_of(t.microkernels.begin(), t.microkernels.end(), [](auto& r) { return r.sizes.dw; });
  o += fmt::format("microkernels: {} profiled, {} ran correctly, {} selected (>= {:.0f}% of peak{}), {} classes\n",
                   t.microkernels.size(), ok, sel, t.threshold * 100,
                   depthwise ? "; depthwise: of the fastest of their filter" : "", t.classes.size());
  if (t.families.size() > 1) {  // a table of the paper family alone says nothing new here
    std::vector<std::string> per;
    for (const auto& f : t.families) {
      size_t n = 0, nsel = 0;
      for (const auto& r : t.microkernels)
        if (r.family == f) ++n, nsel += r.selected;
      per.push_back(fmt::format("{} {} ({} selected)", f, n, nsel));
    }
    o += fmt::format("families: {}\n", fmt::join(per, ", "));
  }
  size_t fenced[3] = {0, 0, 0}, fenced_sel[3] = {0, 0, 0};  // by TapFence
  for (const auto& r : t.microkernels) ++fenced[int(r.fence)], fenced_sel[int(r.fence)] += r.selected;
  if (fenced[1] + fenced[2] > 0)  // format 3 (profile_stages.h ProfileForm): the form each figure was measured in
    o += fmt::format("fastest with a tap fence: F(r) {} ({} selected), F(s) {} ({} selected)\n", fenced[1],
                     fenced_sel[1], fenced[2], fenced_sel[2]);
  if (best)
    o += fmt::format("best: {} {:.1f} GFLOP/s = {:.1f}% of peak{}\n", best->name, best->gflops,
                     best->percent_peak, t.emulated ? " (emulated: timings not meaningful)" : "");
  if (depthwise) {  // the references of their selection (class_table.h select_and_classify)
    std::vector<std::string> per;
    for (const auto& rs_g : depthwise_best(t.microkernels))
      per.push_back(fmt::format("{}x{} {:.1f}", rs_g.first.first, rs_g.first.second, rs_g.second));
    o += fmt::format("fastest depthwise per filter, GFLOP/s: {}\n", fmt::join(per, ", "));
  }
  if (const UkRecord* blis = t.find(UkSizes{2, 1, 12, 1, 1, 1}))
    o += fmt::format("BLIS-like (k,c,w,h,r,s)=(2,1,12,1,1,1): {:.1f} GFLOP/s = {:.1f}% of peak{}\n",
                     blis->gflops, blis->percent_peak, blis->selected ? " (selected)" : "");
  std::vector<const UkClass*> cls;
  for (const auto& c : t.classes) cls.push_back(&c);
  std::stable_sort(cls.begin(), cls.end(), [](auto a, auto b) { return a->h.size() > b->h.size(); });
  for (size_t i = 0; i < std::min<size_t>(5, cls.size()); ++i)
    o += fmt::format("{}class k{}c{}w{}r{}s{}: h in {{{}}}\n", cls[i]->sizes.dw ? "depthwise " : "",
                     cls[i]->sizes.k, cls[i]->sizes.c, cls[i]->sizes.w, cls[i]->sizes.r, cls[i]->sizes.s,
                     fmt::join(cls[i]->h, ","));
  if (cls.size() > 5) o += fmt::format("... and {} more classes\n", cls.size() - 5);
  if (t.wall_seconds > 0) o += fmt::format("profile wall time: {:.1f} s\n", t.wall_seconds);
  return o;
}

}  // namespace convtune
