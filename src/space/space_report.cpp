// `convtune space`'s text (space_report.h).
#include "convtune/space/space_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "convtune/space/config.h"

namespace convtune {

namespace {

std::string text_of(const ParOption& o) {
  Config c;
  c.specs = parallel_specs(o);
  const std::string t = to_string(c);
  return t.substr(1, t.size() - 2);  // without the brackets
}

// Output tiles of the busiest thread: an even P(p,d) gives each thread 1/p of
// d; an uneven P(m,d,t) gives the first threads ceil(m/t) of m iterations
// (OpenMP static chunks), so 17 rows on 16 threads is 2 rows, not 17/16.
int64_t busiest_tiles(const Space& sp, const UkChoice& ch, const ParOption& o) {
  int64_t tiles = 1;
  for (Dim d : {Dim::g, Dim::n, Dim::k, Dim::h, Dim::w}) {  // g: 1 without groups
    const int64_t m = sp.remaining(ch, d);
    if (o.threads1 > 0 && o.dim == d)
      tiles *= (o.count + o.threads1 - 1) / o.threads1 * (m / o.count);
    else
      tiles *= m / o.on(d);
  }
  if (ch.view.threads > 1) {  // Wino(2,b,t): the busiest thread's blocks of b tiles
    const int64_t blocks = wino_blocks(sp.shape, ch.view.block);
    tiles *= (blocks + ch.view.threads - 1) / ch.view.threads;
  }
  return tiles;
}

}  // namespace

std::string space_report(const Space& sp, const std::string& layer, const std::string& isa) {
  const Shape& sh = sp.shape;
  std::string out = fmt::format("{}: {}\n  {}: {:.4g} configurations over {} microkernel choices, {} thread{}\n",
                                layer, sh.to_string(), isa, sp.size(), sp.choices.size(), sp.threads,
                                sp.threads == 1 ? "" : "s");
  if (!sp.note.empty()) out += "  note: " + sp.note + "\n";
  if (sp.threads <= 1) return out;
  // threads used -> (options, choices offering one, an example, its tiles per thread)
  struct Group {
    size_t options = 0, choices = 0;
    std::string example;
    int64_t tiles = 0;  // output tiles (microkernel calls per c, r, s block) per thread of the example
  };
  std::map<int64_t, Group, std::greater<>> groups;
  for (const UkChoice& ch : sp.choices) {
    std::map<int64_t, bool> seen;
    for (const ParOption& o : sp.parallel_options(ch)) {
      Group& g = groups[o.threads()];
      ++g.options;
      if (!seen[o.threads()]) ++g.choices, seen[o.threads()] = true;
      const int64_t tiles = busiest_tiles(sp, ch, o);
      if (g.example.empty() || tiles > g.tiles)  // Wino(2,b,t) has no P: its view says the threads
        g.example = (o.count > 1 ? text_of(o) + " with " : "") + ch.text(), g.tiles = tiles;
    }
  }
  const double flops = sh.flops();
  out += fmt::format("  {:>7}  {:>7}  {:>7}  {:>12}  {:>11}  {}\n", "threads", "options", "choices", "MFLOP/thread",
                     "tiles/thread", "e.g. (most tiles per thread)");
  for (const auto& [t, g] : groups)
    out += fmt::format("  {:>7}  {:>7}  {:>7}  {:>12.2f}  {:>11}  {}\n", t, g.options, g.choices, flops / double(t) * 1e-6,
                       g.tiles, g.example);
  return out;  // a split short of --threads is in sp.note, printed above
}

}  // namespace convtune
