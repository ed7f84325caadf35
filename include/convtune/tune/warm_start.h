#pragma once
// tune --start-from: begin a tune at another tune's best kernel of the same
// layer, typically the 1-thread tune when tuning --threads N. Its best
// configuration, lifted to this space's thread count, is measured first; the
// neighbourhood searches (droplet, hillclimb) then descend from the best of
// those instead of from csa's plan (local_search.h: after observations they
// start at the best point). A 20-trial tune at 2 threads otherwise spends its
// budget re-finding the register tile and loop order the 1-thread tune found.
#include <string>
#include <vector>

#include "convtune/space/config.h"
#include "convtune/space/space.h"

namespace convtune {

/// The log --start-from names for `layer`: PATH itself when it is a file, else
/// PATH/<layer>/log.jsonl or PATH/log.jsonl (a network's or a layer's --out),
/// the first that exists. Throws Error naming what was looked for.
std::string start_log_path(const std::string& path, const std::string& layer);

/// The configuration tune delivered from the log at `path` (finalists.json's
/// winner beside it, delivered.h), else of its fastest ok record; the log must
/// be a tune of `shape`. Throws Error (one line, what to do) when it is not,
/// or holds no successful candidate.
Config best_config_of_log(const std::string& path, const Shape& shape);

/// `source` made a configuration of `space`: its P loops removed; with
/// Space::parallel, one configuration per P option of its microkernel choice
/// that uses the most threads (at most `most`), each P placed outermost with
/// its count taken out of the T loops along its dimension, outermost first.
/// Only configurations of the space (validated, a known choice); empty when
/// none is.
std::vector<Config> lifted_configs(const Config& source, const Space& space, size_t most = 4);

}  // namespace convtune
