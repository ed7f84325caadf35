#pragma once
// Transfer from tuned neighbours: a layer tuned into a store (a network's
// --out, one DIR/<layer>/log.jsonl per layer) starts from the winners of the
// store's other layers of the same ISA and machine that differ from it only
// in N, H and W. Such a winner's microkernel choice and loop order usually
// fit the new extents too; only the loop counts along n, h and w change. Its
// lift is measured first, as --start-from's (warm_start.h), and the
// neighbourhood searches descend from the best of them.
#include <cstdint>
#include <string>
#include <vector>

#include "convtune/core/shape.h"
#include "convtune/space/config.h"
#include "convtune/space/space.h"

namespace convtune {

/// Why a winner could not be lifted to another shape's space.
enum class LiftFailure {
  none,
  lseq,          // no pair choice of the space repeats the Lseq's two tile heights to divide the new h
  indivisible,   // the register tile (U) along n, h or w does not divide the new extent
  invalid,       // the lifted loops break a rule of the language (validate_config)
  not_offered,   // the space's class table offers not its microkernel choice for this shape
  no_form,       // no P option of the space fits it (lifted_configs)
};

/// The reason, one clause for a note ("this space's class table does not offer its microkernel choice").
std::string lift_failure_text(LiftFailure f);

struct Lift {
  std::vector<Config> configs;  // configurations of the space, best form first; empty when failure
  LiftFailure failure = LiftFailure::none;
  std::string detail;           // what validate_config said, for invalid
};

/// `source`, a configuration of shape `from`, made a configuration of
/// `space`: its P loops back to the T loops they split; along n, h and w the
/// T loops re-counted for the space's extents (inner loops keep what still
/// divides, the outermost takes the rest, a dimension without one gets an
/// outermost T; an Lseq takes the repeats of the space's pair choice of its
/// two tile heights nearest its old rows); then lifted_configs to the
/// space's threads (`most` forms). The U, V and the loop order are kept.
Lift lift_to_space(const Config& source, const Shape& from, const Space& space, size_t most = 1);

/// Whether `b` is a neighbour of `a`: the same C, K, R, S, strides,
/// dilations and groups (what fixes the microkernels and the reduction);
/// N, H, W and padding may differ.
bool same_neighbourhood(const Shape& a, const Shape& b);

/// |H-H'| + |W-W'| + |N-N'|: the nearest is ranked first.
int64_t shape_distance(const Shape& a, const Shape& b);

struct Neighbour {
  std::string layer;  // its directory in the store
  std::string log;    // <store>/<layer>/log.jsonl
  Shape shape;
  Config winner;      // its delivered kernel (delivered.h) among this ISA's and machine's records
  int64_t distance = 0;
};

/// The store's layers other than `self` whose log holds correct records of
/// `isa` measured on machine `machine_key` for a shape in the neighbourhood
/// of `shape`; nearest first (ties by layer), at most `most`. A log that
/// cannot be read is passed over: it is not this tune's to repair.
std::vector<Neighbour> store_neighbours(const std::string& store, const std::string& self, const Shape& shape,
                                        const std::string& isa, const std::string& machine_key, size_t most = 3);

}  // namespace convtune
