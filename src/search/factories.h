#pragma once
// The strategies' constructors, for the table in strategies.cpp and for
// strategies built of others (random_hillclimb.cpp).
#include <memory>

#include "convtune/search/search.h"

namespace convtune {

std::unique_ptr<SearchStrategy> make_random_search(const Space& space, uint64_t seed);
std::unique_ptr<SearchStrategy> make_droplet_search(const Space& space, uint64_t seed, const SearchOptions& opt);
std::unique_ptr<SearchStrategy> make_opevo_search(const Space& space, uint64_t seed, const SearchOptions& opt);
std::unique_ptr<SearchStrategy> make_hillclimb_search(const Space& space, uint64_t seed, const SearchOptions& opt);
std::unique_ptr<SearchStrategy> make_csa_search(const Space& space, uint64_t seed, const SearchOptions& opt);
std::unique_ptr<SearchStrategy> make_random_hillclimb_search(const Space& space, uint64_t seed,
                                                             const SearchOptions& opt);

}  // namespace convtune
