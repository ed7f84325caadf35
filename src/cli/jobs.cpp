#include "jobs.h"

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/tune/tune.h"

namespace convtune::cli {

std::string job_lines(const std::vector<Shape>& shapes) {
  std::string out;
  for (const Shape& s : shapes) out += layer_id(s) + "\t" + s.to_string() + "\n";
  return out;
}

Shape job_at(const std::vector<Shape>& shapes, int64_t index) {
  if (index < 0 || index >= int64_t(shapes.size()))
    throw Error(fmt::format("--job-index {} is out of range: this selection has {} job{} (0 to {}, as 'convtune "
                            "layers ... --list' prints them)",
                            index, shapes.size(), shapes.size() == 1 ? "" : "s", shapes.size() - 1));
  return shapes[size_t(index)];
}

}  // namespace convtune::cli
