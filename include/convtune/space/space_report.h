#pragma once
// `convtune space`: what tune would search for a layer and a thread count,
// without measuring: the space's size, its microkernel choices and, with
// threads > 1, the parallel splits it offers (issue 12's "on paper" question:
// enough independent work per core?).
#include <string>

#include "convtune/space/space.h"

namespace convtune {

/// Text for one layer's space: size and choices; with threads > 1 the P
/// options grouped by the threads they use, how many choices offer each, one
/// example and the work per thread, and what happens when no option uses
/// every thread.
std::string space_report(const Space& space, const std::string& layer, const std::string& isa);

}  // namespace convtune
