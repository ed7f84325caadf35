// tune --start-from (warm_start.h).
#include "convtune/tune/warm_start.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/space/coordinates.h"
#include "convtune/tune/delivered.h"
#include "convtune/tune/records.h"

namespace convtune {

namespace fs = std::filesystem;

std::string start_log_path(const std::string& path, const std::string& layer) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  if (fs::is_directory(path, ec)) {
    for (const std::string& p : {path + "/" + layer + "/log.jsonl", path + "/log.jsonl"})
      if (fs::is_regular_file(p, ec)) return p;
    throw Error(fmt::format("--start-from: neither '{}/{}/log.jsonl' nor '{}/log.jsonl' exists; give the log, or the "
                            "--out directory, of an earlier tune of {}",
                            path, layer, path, layer));
  }
  throw Error(fmt::format("--start-from: no file or directory '{}'; give the log, or the --out directory, of an "
                          "earlier tune of {}",
                          path, layer));
}

Config best_config_of_log(const std::string& path, const Shape& shape) {
  const LogContents log = read_log(path);
  for (const Record& r : log.records)
    if (r.shape != shape.to_string())
      throw Error(fmt::format("--start-from: log '{}' is for shape {}, not {}; give a log of this layer", path, r.shape,
                              shape.to_string()));
  // The kernel that tune delivered (delivered.h): finalists.json's winner
  // when it chose one (the re-measure and duel ranked it where the log's
  // figures could not tell the top apart), else the log's fastest; from the
  // records read above, in the log's epilogue.
  const Epilogue epilogue = log.records.empty() ? Epilogue::none : log.records.front().epilogue;
  const DeliveredKernel d = delivered_kernel(log.records, path, shape, 0, epilogue);
  if (!d.found)
    throw Error(fmt::format("--start-from: log '{}' holds no successful candidate; give a log with at least one",
                            path));
  return parse_config(d.record.config);
}

namespace {

// Takes `count` out of the T loops along d, prime by prime, each from the
// outermost loop it divides; loops left at 1 go. False when they cannot.
bool take_out(std::vector<Spec>& specs, Dim d, int64_t count) {
  for (int64_t prime : prime_factors(count)) {
    auto it = std::find_if(specs.begin(), specs.end(), [&](const Spec& s) {
      return s.kind == SpecKind::T && s.dim == d && s.factor % prime == 0;
    });
    if (it == specs.end()) return false;
    it->factor /= prime;
  }
  specs.erase(std::remove_if(specs.begin(), specs.end(),
                             [&](const Spec& s) { return s.kind == SpecKind::T && s.dim == d && s.factor == 1; }),
              specs.end());
  return true;
}

bool in_space(const Config& c, const Space& space) {
  try {
    validate_config(c, space.shape, space.lanes);
  } catch (const Error&) {
    return false;
  }
  return choice_of(space, c) >= 0 && (!space.parallel || CoordinateView(space).from_config(c).has_value());
}

}  // namespace

std::vector<Config> lifted_configs(const Config& source, const Space& space, size_t most) {
  // A P loop of the source goes back to the sequential loop it split: P(n,d)
  // and P(n,d,t) both run n iterations of d.
  Config serial = source;
  for (Spec& s : serial.specs)
    if (s.kind == SpecKind::P) s = Spec{SpecKind::T, s.dim, s.factor};
  std::vector<Config> out;
  if (!space.parallel) {
    serial.view.threads = 1;
    if (in_space(serial, space)) out.push_back(serial);
    return out;
  }
  if (serial.wino() && serial.view.block > 0) {  // Wino(2,b) takes the threads over its blocks: Wino(2,b,t)
    Config c = serial;
    c.view.threads = space.threads;
    if (in_space(c, space)) out.push_back(c);
    return out;
  }
  const int ci = choice_of(space, serial);
  if (ci < 0) return out;
  // The group loops (config.h g) are outer_specs' to write, with the P: drop the source's.
  serial.specs.erase(std::remove_if(serial.specs.begin(), serial.specs.end(),
                                    [](const Spec& s) { return s.dim == Dim::g; }),
                     serial.specs.end());
  std::vector<ParOption> pars = space.parallel_options(space.choices[size_t(ci)]);
  int64_t top = 0;
  for (const ParOption& o : pars) top = std::max(top, o.threads());
  for (const ParOption& o : pars) {
    if (o.threads() != top || out.size() >= most) continue;
    Config c = serial;
    if ((o.dim != Dim::g && !take_out(c.specs, o.dim, o.count)) ||
        (o.count2 > 1 && o.dim2 != Dim::g && !take_out(c.specs, o.dim2, o.count2)))
      continue;
    const std::vector<Spec> ps = outer_specs(space, space.choices[size_t(ci)], o);
    c.specs.insert(c.specs.begin(), ps.begin(), ps.end());
    if (in_space(c, space)) out.push_back(c);
  }
  return out;
}

}  // namespace convtune
