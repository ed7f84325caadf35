// Transfer from tuned neighbours (neighbours.h): the store's neighbours of a
// shape, and their winners lifted to its space.
#include "convtune/tune/neighbours.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <numeric>

#include "convtune/core/error.h"
#include "convtune/tune/delivered.h"
#include "convtune/tune/records.h"
#include "convtune/tune/warm_start.h"

namespace convtune {

namespace fs = std::filesystem;

std::string lift_failure_text(LiftFailure f) {
  switch (f) {
    case LiftFailure::none: return "lifted";
    case LiftFailure::lseq: return "this space has no repeats of its Lseq's two tile heights that divide its rows";
    case LiftFailure::indivisible: return "its register tile along n, h or w does not divide this shape's extent";
    case LiftFailure::invalid: return "its loops re-counted for this shape break a rule of the configuration language";
    case LiftFailure::not_offered: return "this space's class table does not offer its microkernel choice";
    case LiftFailure::no_form: return "no parallel option of this space fits it";
  }
  return "";
}

namespace {

bool spec_along(const Spec& s, SpecKind k, Dim d) { return s.kind == k && s.dim == d; }

// The T loops along d re-counted so that, with the U (and an Lseq's rows) along d, they cover
// `extent` (or divide it, under an R(d) that takes the rest): each inner T
// keeps what of its count still divides, the outermost takes what is left;
// without a T along d an outermost one (below the g loops) is added.
LiftFailure recount_along(std::vector<Spec>& specs, Dim d, int64_t extent, int64_t lseq_rows = 1) {
  int64_t fixed = lseq_rows;  // U(a,h) counts as its Lseq's rows
  for (const Spec& s : specs)
    if (spec_along(s, SpecKind::U, d) && !s.alpha) fixed *= s.factor;
  if (extent % fixed != 0) return LiftFailure::indivisible;
  int64_t left = extent / fixed;
  const bool has_r =
      std::any_of(specs.begin(), specs.end(), [&](const Spec& s) { return spec_along(s, SpecKind::R, d); });
  std::vector<size_t> ts;  // the T loops along d, outermost first
  for (size_t i = 0; i < specs.size(); ++i)
    if (spec_along(specs[i], SpecKind::T, d)) ts.push_back(i);
  if (ts.empty() && left > 1 && !has_r) {
    size_t at = 0;
    while (at < specs.size() && specs[at].dim == Dim::g) ++at;
    specs.insert(specs.begin() + std::ptrdiff_t(at), Spec{SpecKind::T, d, left});
    return LiftFailure::none;
  }
  for (size_t j = ts.size(); j-- > 0;) {
    Spec& t = specs[ts[j]];
    t.factor = (j == 0 && !has_r) ? left : std::gcd(t.factor, left);
    left /= t.factor;
  }
  specs.erase(std::remove_if(specs.begin(), specs.end(),
                             [&](const Spec& s) { return spec_along(s, SpecKind::T, d) && s.factor == 1; }),
              specs.end());
  return LiftFailure::none;
}

Spec* lseq_of(std::vector<Spec>& specs) {
  auto it = std::find_if(specs.begin(), specs.end(), [](const Spec& s) { return s.kind == SpecKind::Lseq; });
  return it == specs.end() ? nullptr : &*it;
}

// Along h with an Lseq: the repeats (a1, a2) of one of the space's pair
// choices of its two tile heights whose rows a1*v1 + a2*v2 divide the new
// extent, the nearest to its old rows first, that is a choice of the space
// for c; then the T loops along h re-counted around it.
LiftFailure recount_lseq(Config& c, int64_t extent, const Space& space) {
  const Spec l = *lseq_of(c.specs);
  const int64_t v1 = l.seq[0].second, v2 = l.seq[1].second, old = l.seq[0].first * v1 + l.seq[1].first * v2;
  std::vector<const UkChoice*> fits;
  for (const UkChoice& ch : space.choices)
    if (ch.pair && ch.uk.h == v1 && ch.uk2.h == v2 && extent % ch.h_extent() == 0) fits.push_back(&ch);
  std::stable_sort(fits.begin(), fits.end(), [&](const UkChoice* x, const UkChoice* y) {
    return std::abs(x->h_extent() - old) < std::abs(y->h_extent() - old);
  });
  for (const UkChoice* ch : fits) {
    Config t = c;
    lseq_of(t.specs)->seq = {{{ch->a, v1}, {ch->b, v2}}};
    if (choice_of(space, t) < 0 || recount_along(t.specs, Dim::h, extent, ch->h_extent()) != LiftFailure::none)
      continue;
    c = t;
    return LiftFailure::none;
  }
  return LiftFailure::lseq;
}

// Why lifted_configs found no form of c in the space.
Lift why_not_lifted(const Config& c, const Space& space) {
  Lift l;
  try {
    validate_config(c, space.shape, space.lanes);
  } catch (const Error& e) {
    l.failure = LiftFailure::invalid;
    l.detail = e.what();
    return l;
  }
  l.failure = choice_of(space, c) < 0 ? LiftFailure::not_offered : LiftFailure::no_form;
  return l;
}

}  // namespace

Lift lift_to_space(const Config& source, const Shape& from, const Space& space, size_t most) {
  Config serial = source;  // P(n,d) and P(n,d,t) both run n iterations of d
  for (Spec& s : serial.specs)
    if (s.kind == SpecKind::P) s = Spec{SpecKind::T, s.dim, s.factor};
  Lift l;
  const bool lseq = lseq_of(serial.specs) != nullptr;
  const Shape old_view = tiled_shape(serial, from), new_view = tiled_shape(serial, space.shape);
  for (Dim d : {Dim::n, Dim::h, Dim::w}) {
    const int64_t extent = dim_size(new_view, d, space.lanes);
    if (extent == dim_size(old_view, d, space.lanes)) continue;
    l.failure = lseq && d == Dim::h ? recount_lseq(serial, extent, space) : recount_along(serial.specs, d, extent);
    if (l.failure != LiftFailure::none) return l;
  }
  l.configs = lifted_configs(serial, space, most);
  return l.configs.empty() ? why_not_lifted(serial, space) : l;
}

bool same_neighbourhood(const Shape& a, const Shape& b) {
  return a.C == b.C && a.K == b.K && a.R == b.R && a.S == b.S && a.stride_h == b.stride_h &&
         a.stride_w == b.stride_w && a.dil_h == b.dil_h && a.dil_w == b.dil_w && a.groups == b.groups;
}

int64_t shape_distance(const Shape& a, const Shape& b) {
  return std::abs(a.H - b.H) + std::abs(a.W - b.W) + std::abs(a.N - b.N);
}

namespace {

// The neighbour in the log at `log`, if its records of this ISA and machine
// are of one shape in the neighbourhood and one of them is correct.
bool read_neighbour_log(const std::string& log, const Shape& shape, const std::string& isa, const std::string& key,
                    Neighbour* n) {
  std::vector<Record> mine;
  try {
    for (Record& r : read_records(log))
      if (r.isa == isa && r.machine.known() && r.machine.key == key) mine.push_back(std::move(r));
    if (mine.empty()) return false;
    n->shape = parse_shape(mine.front().shape);
    if (!same_neighbourhood(n->shape, shape)) return false;
    const DeliveredKernel d = delivered_kernel(mine, log, n->shape, 0, mine.front().epilogue);
    if (!d.found) return false;
    n->winner = parse_config(d.record.config);
  } catch (const Error&) {
    return false;
  }
  n->log = log;
  n->distance = shape_distance(n->shape, shape);
  return true;
}

}  // namespace

std::vector<Neighbour> store_neighbours(const std::string& store, const std::string& self, const Shape& shape,
                                        const std::string& isa, const std::string& machine_key, size_t most) {
  std::vector<Neighbour> out;
  std::error_code ec;
  if (!fs::is_directory(store, ec)) return out;
  for (const fs::directory_entry& e : fs::directory_iterator(store, ec)) {
    const std::string layer = e.path().filename().string();
    const std::string log = e.path().string() + "/log.jsonl";
    Neighbour n;
    n.layer = layer;
    if (layer != self && fs::is_regular_file(log, ec) && read_neighbour_log(log, shape, isa, machine_key, &n))
      out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end(), [](const Neighbour& a, const Neighbour& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.layer < b.layer;
  });
  if (out.size() > most) out.resize(most);
  return out;
}

}  // namespace convtune
