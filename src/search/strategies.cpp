// The table of search strategies (--search).
#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/search/search.h"
#include "factories.h"

namespace convtune {

namespace {
struct Entry {
  const char* name;
  std::unique_ptr<SearchStrategy> (*make)(const Space&, uint64_t, const SearchOptions&);
};
const Entry kStrategies[] = {
    {"random", [](const Space& s, uint64_t seed, const SearchOptions&) { return make_random_search(s, seed); }},
    {"droplet", make_droplet_search},
    {"opevo", make_opevo_search},
    {"hillclimb", make_hillclimb_search},
    {"csa", make_csa_search},
    {"random-hillclimb", make_random_hillclimb_search},
};

void check_options(const SearchOptions& o) {
  if (!(o.pvalue > 0 && o.pvalue <= 1)) throw Error(fmt::format("--pvalue is {}; give a value in (0, 1], e.g. 0.05", o.pvalue));
  if (o.parents < 1) throw Error(fmt::format("--parents is {}; give at least 1", o.parents));
  if (o.offspring < 1) throw Error(fmt::format("--offspring is {}; give at least 1", o.offspring));
  if (!(o.mutation_rate >= 0 && o.mutation_rate < 1))
    throw Error(fmt::format("--mutation-rate is {}; give a value in [0, 1), e.g. 0.5", o.mutation_rate));
}
}  // namespace

std::vector<std::string> strategy_names() {
  std::vector<std::string> v;
  for (const auto& e : kStrategies) v.push_back(e.name);
  return v;
}

std::unique_ptr<SearchStrategy> make_strategy(const std::string& name, const Space& space, uint64_t seed,
                                              const SearchOptions& opt) {
  check_options(opt);
  for (const auto& e : kStrategies)
    if (name == e.name) return e.make(space, seed, opt);
  throw Error(fmt::format("unknown --search '{}'; choose one of: {}", name, fmt::join(strategy_names(), ", ")));
}

}  // namespace convtune
