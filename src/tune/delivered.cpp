// The kernel tune delivered for a layer (delivered.h).
#include "convtune/tune/delivered.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace convtune {

namespace {

// The winner of tune's top-k re-measure (finalists.json beside the log), or "".
std::string finalists_winner(const std::string& log_path) {
  const std::string dir = std::filesystem::path(log_path).parent_path().string();
  std::ifstream f((dir.empty() ? "." : dir) + "/finalists.json");
  if (!f) return "";
  nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  return j.is_object() && j.contains("winner") && j["winner"].is_string() ? j["winner"].get<std::string>() : "";
}

}  // namespace

DeliveredKernel delivered_kernel(const std::string& log_path, const Shape& shape, int threads, Epilogue epilogue) {
  return delivered_kernel(read_records(log_path), log_path, shape, threads, epilogue);
}

DeliveredKernel delivered_kernel(const std::vector<Record>& recs, const std::string& log_path, const Shape& shape,
                                 int threads, Epilogue epilogue) {
  DeliveredKernel d;
  d.records = int64_t(recs.size());
  const std::string want = shape.to_string();
  for (const auto& r : recs) {
    if (r.shape != want) {
      if (d.other_shape.empty() && !d.other_threads) d.other_shape = r.shape;
      continue;
    }
    if (threads > 0 && r.threads != threads) {
      if (d.other_shape.empty() && !d.other_threads) d.other_threads = r.threads;
      continue;
    }
    if (r.epilogue != epilogue) {
      if (d.other_shape.empty() && !d.other_threads && !d.other_epilogue) d.other_epilogue = r.epilogue;
      continue;
    }
    if (r.status == "ok" && (!d.found || faster(r, d.record))) {
      d.record = r;
      d.found = true;
    }
  }
  if (!d.other_shape.empty() || d.other_threads || d.other_epilogue) {  // a foreign log delivers nothing
    d.found = false;
    d.record = Record{};
    return d;
  }
  const std::string winner = finalists_winner(log_path);
  for (const auto& r : recs)
    if (r.status == "ok" && !winner.empty() && r.config == winner) {
      d.record = r;
      d.finalist = true;
      break;
    }
  return d;
}

}  // namespace convtune
