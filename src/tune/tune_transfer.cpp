// The transfer stage (tune_stages.h tune_seed_transfer): the store's
// neighbours' winners lifted to this session's space and queued to be
// measured first, each with its origin for its record.
#include <set>

#include <fmt/format.h>

#include "convtune/tune/neighbours.h"
#include "convtune/tune/tune_stages.h"

namespace convtune {

namespace {

// What one neighbour gave: the note, and its lift queued unless already measured or queued.
std::string queue_neighbour(TuneSession& s, const Neighbour& n, std::set<std::string>& done) {
  const Lift lift = lift_to_space(n.winner, n.shape, s.space);
  if (lift.configs.empty())
    return fmt::format("transfer: {}'s winner {} skipped: {}{}", n.layer, to_string(n.winner),
                       lift_failure_text(lift.failure), lift.detail.empty() ? "" : " (" + lift.detail + ")");
  size_t queued = 0;
  for (const Config& c : lift.configs) {
    const std::string text = to_string(c);
    if (!done.insert(text).second) continue;
    s.starts.push_back(c);
    s.seed_origins[text] = SeedOrigin{SeedOrigin::transfer, n.layer, to_string(n.winner), n.log};
    ++queued;
  }
  return fmt::format("transfer: {}'s winner {} ({}) {}", n.layer, to_string(n.winner), n.shape.to_string(),
                     queued ? "measured first as " + to_string(lift.configs.front())
                            : std::string("is already measured or queued"));
}

}  // namespace

std::vector<std::string> tune_seed_transfer(TuneSession& s) {
  std::vector<std::string> notes;
  if (s.transfer_done || s.opt.transfer_store.empty()) return notes;
  s.transfer_done = true;
  std::set<std::string> done;
  for (const Record& r : s.log.records) done.insert(r.config);
  for (const Config& c : s.starts) done.insert(to_string(c));
  for (const Neighbour& n :
       store_neighbours(s.opt.transfer_store, s.res.layer, s.opt.shape, s.isa.name, s.here.key))
    notes.push_back(queue_neighbour(s, n, done));
  s.notes.insert(s.notes.end(), notes.begin(), notes.end());
  return notes;
}

}  // namespace convtune
