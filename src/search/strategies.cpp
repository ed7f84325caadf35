// The table of search strategies (--search).
#include <fmt/format.h>

#include "convtune/error.h"
#include "convtune/search.h"

namespace convtune {

std::unique_ptr<SearchStrategy> make_random_search(const Space& space, uint64_t seed);

namespace {
struct Entry {
  const char* name;
  std::unique_ptr<SearchStrategy> (*make)(const Space&, uint64_t);
};
const Entry kStrategies[] = {
    {"random", make_random_search},
};
}  // namespace

std::vector<std::string> strategy_names() {
  std::vector<std::string> v;
  for (const auto& e : kStrategies) v.push_back(e.name);
  return v;
}

std::unique_ptr<SearchStrategy> make_strategy(const std::string& name, const Space& space, uint64_t seed) {
  for (const auto& e : kStrategies)
    if (name == e.name) return e.make(space, seed);
  throw Error(fmt::format("unknown --search '{}'; choose one of: {}", name, fmt::join(strategy_names(), ", ")));
}

}  // namespace convtune
